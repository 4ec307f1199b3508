"""The Boardgame client against a hostile engine: each case's frames, CPU, exit status and last line.

The real command (``python -m agent --game boardgame``) dials the reference engine through a proxy
that misbehaves (tests/boardgame/hostile.py), and each case prints what the agent did:

    .venv/bin/python -m benchmarks.boardgame.bench_hostile [refuse deep full won full_forever]
    .venv/bin/python -m benchmarks.boardgame.bench_hostile --tree /path/to/older/checkout

``--tree`` runs the agent from another checkout (the proxy and the engine stay this one's): that is
how docs/robustness.md's "before" figures were taken. Loopback only.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path

import psutil

from benchmarks.hostile_support import chosen, parser, start_agent
from tests.boardgame.hostile import WON_BOARD, Misbehaviour, hostile_engine

CASES = ("refuse", "deep", "full", "won", "full_forever")
LIMIT_S = 40.0
"""A case still running after this is stopped with SIGTERM (exit 130: the agent never gave up)."""


async def case(name: str, plan: Misbehaviour, tree: Path, work: Path) -> None:
    async with hostile_engine(plan, games=("tictactoe",), bot="random", seed=3) as url:
        started = time.monotonic()
        stderr = work / "stderr.log"
        proc = await start_agent(tree, ["--game", "boardgame", "--connect", url, "--agent-id", "A", "--opponent",
                                        "random", "--player", "offline"], work, stderr, asyncio.subprocess.PIPE)
        watched = psutil.Process(proc.pid)
        cpu = 0.0
        out = b""
        try:
            async with asyncio.timeout(LIMIT_S):
                reading = asyncio.ensure_future(proc.communicate())
                while not reading.done():
                    try:
                        times = watched.cpu_times()
                        cpu = times.user + times.system
                    except psutil.Error:
                        pass
                    await asyncio.wait({reading}, timeout=0.2)
                out = reading.result()[0]
        except TimeoutError:
            proc.terminate()
            await proc.wait()
        seconds = time.monotonic() - started
        err = stderr.read_text(errors="replace")
        lines = [line for line in err.splitlines() if line.strip()]
        print(f"{name}: {seconds:.1f} s, exit {proc.returncode}, frames from the agent {plan.frames_in}, "
              f"refused {plan.refused}, agent CPU {cpu:.1f} s, stderr {len(lines)} lines, "
              f"traceback: {'Traceback' in err}")
        print("   stdout:", out.decode().strip()[:200])
        print("   last stderr line:", (lines[-1] if lines else "")[:300])


async def main(cases: list[str], tree: Path) -> None:
    work = Path(tempfile.mkdtemp(prefix="bench-hostile-"))
    plans = {"refuse": ("every perform_action refused", Misbehaviour(refuse=-1)),
             "deep": ("one 200 KB frame of 100,000 nested arrays", Misbehaviour(deep_frames=1)),
             "full": ("a full drawn board on our turn (twice, then normal)", Misbehaviour(impossible=2)),
             "won": ("a won board still 'started' (twice, then normal)",
                     Misbehaviour(impossible=2, board=list(WON_BOARD))),
             "full_forever": ("a full drawn board on our turn, for ever", Misbehaviour(impossible=10**9))}
    for name in cases:
        title, plan = plans[name]
        await case(title, plan, tree, work)


if __name__ == "__main__":
    args = parser(__doc__ or "", CASES).parse_args()
    asyncio.run(main(chosen(args, CASES), args.tree.resolve()))
