"""The offline strategy: one command for the active bee, from the world model and the coach's plan.

- :mod:`.strategy`: the decision itself (roles, claims, the hive guard, the relay).
- :mod:`.world`: one player's map of the arena, merged from its bees' views.
- :mod:`.paths`, :mod:`.moves`: shortest paths on the grid and the step along them.
- :mod:`.blockade`, :mod:`.guard`, :mod:`.relay`: the raiders' wall, our hive against wall
  builders, and scoring while our hive is sealed.
- :mod:`.plan`: what the LLM coach may tell the strategy, validated before it is used.

Pure: no I/O, no clock.
"""
