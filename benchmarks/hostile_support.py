"""Run the agent command from a chosen checkout, for the hostile-peer benchmarks' before/after figures.

Each ``bench_hostile`` script starts ``python -m agent ...`` as its own process, with
``PYTHONPATH`` set to ``--tree`` (default: this checkout), so the same hostile peers can be
measured against an older tree. Loopback only.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def parser(doc: str, cases: tuple[str, ...]) -> argparse.ArgumentParser:
    out = argparse.ArgumentParser(description=doc.strip().splitlines()[0])
    out.add_argument("cases", nargs="*", metavar="CASE", help=f"which cases (default: all of {', '.join(cases)})")
    out.add_argument("--tree", type=Path, default=ROOT, help="checkout to run the agent from (default: this one)")
    return out


def chosen(args: argparse.Namespace, cases: tuple[str, ...]) -> list[str]:
    unknown = sorted(set(args.cases) - set(cases))
    if unknown:
        raise SystemExit(f"unknown case {unknown[0]!r}; the cases are {', '.join(cases)}")
    return list(args.cases or cases)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def start_agent(tree: Path, argv: list[str], cwd: Path, stderr: Path,
                      stdout: int | None = None) -> asyncio.subprocess.Process:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    env.pop("OPENAI_API_KEY", None)
    with stderr.open("wb") as err:
        return await asyncio.create_subprocess_exec(sys.executable, "-m", "agent", *argv, cwd=cwd, env=env,
                                                    stdout=stdout, stderr=err)


async def wait_for_text(path: Path, text: str, timeout: float = 30.0) -> None:
    """Until another process's log holds ``text`` (polled: there is nothing to wait on)."""
    async with asyncio.timeout(timeout):
        while not contains(path, text):  # noqa: ASYNC110
            await asyncio.sleep(0.1)


def contains(path: Path, text: str) -> bool:
    return text in path.read_text(errors="replace")


def log_size(path: Path) -> int:
    return path.stat().st_size


def log_figures(path: Path, since: int = 0) -> tuple[int, int]:
    """Bytes of log and tracebacks in it after ``since`` bytes."""
    data = path.read_bytes()[since:]
    return len(data), data.count(b"Traceback")
