"""The LLM player: from a turn's view to a prompt, and from the model's answer to a decision.

- :mod:`.player`: :class:`~.player.LLMPlayer`, the player itself (asks, re-asks, falls back).
- :mod:`.context`: what the prompt templates are rendered with.
- :mod:`.schema`: what the model must answer (the move and chat schemas).
- :mod:`.salvage`: the one validator of a model's move: keeps what is usable, says what changed.
- :mod:`.resolve`: a salvaged move as an exact pose (relations through the geometry).
- :mod:`.replies`: checks on the model's chat lines (degenerate, false, silent on the move).
- :mod:`.sample`: the prompt a ``--check-llm`` run and the server's priming send.
"""
