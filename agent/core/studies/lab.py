"""In-lab participants' pages: the link ``study next`` gives the participant it starts.

With questionnaires, an in-lab participant answers the same pages an online one does, from the same
server (tangram: online/lab.py serves them on the lab machine's loopback while ``python -m agent
--study FILE`` runs), and their games start only when their flow reaches them (:meth:`StudyRun.playable`).
The link carries a secret of the participant's own (only its hash is kept, as for an online link),
so nothing else on the machine can answer for them; a new link replaces the old one.
"""

from __future__ import annotations

from agent.core.studies.online import digest, new_code
from agent.core.studies.run import StudyRun
from agent.core.studies.store import StoreError

LAB_PAGES_HOST = "127.0.0.1"
LAB_PAGES_PORT = 8090
"""Where the lab's pages are served unless ``--lab-pages PORT`` says otherwise."""


async def lab_link(run: StudyRun, pid: str) -> str:
    """A new link code for in-lab participant ``pid`` (the previous one stops working);
    StoreError for no such participant, an online one (their link is theirs) or one who left the study."""
    row = await run.store.participant(pid)
    if row is None:
        raise StoreError(f"no participant {pid} in this study")
    if row.online:
        raise StoreError(f"{pid} takes part online: their link is the one they came with")
    if row.state not in ("active", "paused"):
        raise StoreError(f"participant {pid} is {row.state}: their pages are closed")
    code = new_code()
    await run.store.set_link(pid, digest(code), "a link to the lab's pages")
    return code


def lab_address(code: str, port: int = LAB_PAGES_PORT) -> str:
    return f"http://{LAB_PAGES_HOST}:{port}/p/{code}"
