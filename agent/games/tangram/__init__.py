"""Tangram: the GAIPS Tangram Collaboration Platform (Godot 4); we serve the WebSocket it dials.

At this level: :mod:`.protocol` (the wire frames), :mod:`.config` (the game's settings),
:mod:`.contract` (what a session expects of a player) and :mod:`.game` (the game as the core sees
it: flags, start-up, serving). Everything else is in a room named for its job: ``link`` (I/O with
the game), ``turn`` (the turn as a pure machine), ``llm_player`` and ``planner`` (the two players),
``pictures``, ``geometry``, and the tools around them: ``sim`` and ``replica`` (the simulated
game), ``replay``, ``console``, ``webgame``. docs/architecture.md draws them.
"""
