"""Players our strategy is measured against: the arena's example bots and ours (:mod:`.bots`),
counter-bots written to beat our strategy (:mod:`.counterbots`), and a whole match in one process
without sockets (:mod:`.sim`). ``python -m agent.games.hive.eval`` plays them over TCP."""
