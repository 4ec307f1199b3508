"""The experimenter console: a web page in the agent's process that shows every game live and lets
an experimenter supervise the agent's moves and chat, or play the agent's part (Wizard of Oz).

- :mod:`.editor`: the page's geometry (outlines, live collision checks, repair previews), pure.
- :mod:`.messages`: what the page may send, as bounded pydantic models.
- :mod:`.supervisor`: one per game session: watches it, holds reviews open until the turn's
  deadline, records every intervention in the transcript.
- :mod:`.hub`: the games and the connected pages; wraps the player source so each new session
  gets a supervisor.
- :mod:`.web`: the aiohttp server (page, images, WebSocket), loopback by default.
- :mod:`.study_panel`: the study panel (``--study``): participants, their orders and progress, and the
  next/pause/resume/drop controls.
- :mod:`.start`: what ``--console`` starts next to the agent's server.
- :mod:`.address`: the console's address and token flags.
"""
