"""The link to the game: everything that does I/O for a live tangram session.

- :mod:`.server`: the WebSocket server the game dials; one session per connection.
- :mod:`.session`: one game: reads frames, feeds the turn machine, carries out its actions, sends.
- :mod:`.views`: the player's view of a frame (state, memory, images prepared in worker threads).
- :mod:`.movers`: who moved each piece last, the agent or its partner.
- :mod:`.inbound`: frames as the session takes them in (texts clipped, records made).
- :mod:`.clock`: where the session reads the time and sets the turn's timers.
- :mod:`.factory`: the player each new session gets, built from the config.
- :mod:`.study`: serving a study: each connection bound to the active participant's condition,
  and whether its game was completed.

The pure parts it drives live beside it: the turn (``turn/``), the contract (``contract``), the
players (``llm_player/``, ``planner/``) and the pictures (``pictures/``).
"""
