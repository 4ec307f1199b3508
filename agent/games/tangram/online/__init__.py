"""Online studies: the real game in each participant's own browser, from a link.

``python -m agent --study FILE --browser-game DIR --public HOST:PORT`` serves, on one origin,
the participant's page, the engine and the game's pack (``assets``: compressed, content-hashed,
cached), and the agent's WebSocket (``sockets``: a ticket per game, one game per participant's
slot, the condition's own player). ``guard`` tells the client's address (believing a proxy's
forwarded headers only from the proxy) and holds the rate limits; ``app`` is the aiohttp
application of pages and calls; ``spend`` prices each game's LLM calls for the spend caps;
``public`` starts it all, and the experimenter console on its own port when asked. The study
itself (links, tickets, consent, completion, the running spend) is agent/core/studies/. See
docs/online-study.md.
"""
