"""The GAIPS Tangram game itself in the loop: its own scenes and GDScript on a Godot web engine, in
headless Chromium driven as a scripted human, against ``python -m agent`` (docs/tangram-real-game.md,
"Checking against the real game").

``python -m benchmarks.tangram.real_game --gaips DIR --template DIR [--config FILE] [--local-model]
[--turns N] [--chat default|requests|set] [--set FILE [--items ID,...]] [--json]``. Not part of CI: it
needs the game's sources, which the project never holds. The pure parts (the turn tally from a frame
log, the console's error count, the arguments) are unit-tested in tests/tangram/test_real_game_runner.py,
those of ``--chat set`` (a reply set's lines in the real game, its judging sheet) in
tests/tangram/test_real_game_chat_set.py.
"""
