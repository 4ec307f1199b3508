"""A faithful fake of Forge's HTTP agent client, for tests and evaluation (Forge cannot be built here).

``cards`` holds real card definitions, ``engine`` a small two-player Magic game that asks the agent
what Forge would ask, ``catalogue`` hand-built requests for every decision shape, ``checks`` Forge's
rules for reading an answer (written separately from the agent's validator, so it really checks it),
and ``client`` the two client versions' HTTP behaviour (time-outs, retries, fallbacks); ``decided``
holds positions whose answer the heuristic proves, and the check that an answer keeps them.
"""
