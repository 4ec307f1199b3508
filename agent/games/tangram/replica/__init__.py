"""The real game rebuilt from its scene file, for the simulator and the sample prompt.

- :mod:`.scene`: node transforms, collision shapes, markers and overlaps as Godot computes them.
- :mod:`.crops`: the board and drawer crops the game photographs, drawn from that scene.

It shares no computation with :mod:`agent.games.tangram.geometry` (the agent's own model of the
pieces): a test of the agent against the simulator would otherwise check the agent against itself.
"""
