"""Issue 50's speed and size goals: a study folder of 300 tangram transcripts of 20 turns each analysed
with a replay page per session in under a minute on 2 cores, and a 20-turn game's page a few hundred KB.

    .venv/bin/python -m benchmarks.tangram.bench_replay [--transcripts 300] [--turns 20] [--sources 3] [--jobs N]
                                                        [--keep DIR]

A few real sessions are played first (the offline planner against the simulator, a chatty human, over
a real socket); the study folder is made of copies of their records, each with its own session id and
tags (participant P001..., two conditions), as a study's folder would hold them. Then
``python -m agent.analyze FOLDER --out OUT`` runs as its own process, timed from start to exit (its
imports, the tables, the summary's plots and every replay page included).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from agent.games.tangram.config import Config
from agent.games.tangram.sim.runner import RunOptions, run_in_process

GOAL_S = 60.0


def play_sources(folder: Path, games: int, turns: int, seed: int) -> list[Path]:
    config = Config.model_validate({"player": "planner", "transcripts": {"dir": str(folder)}})
    options = RunOptions(games=games, turns=turns, human="chatty", seed=seed, tween=0.0, deadline=20,
                         parallel=games)
    asyncio.run(run_in_process(config, options, folder))
    return sorted(folder.glob("*.jsonl"))


def synthesize(sources: list[Path], out: Path, count: int) -> None:
    """``count`` transcripts, each a source's records under a new session id and its own tags."""
    out.mkdir(parents=True, exist_ok=True)
    texts = [src.read_text(encoding="utf-8").splitlines() for src in sources]
    for i in range(count):
        session = uuid.uuid4().hex[:12]
        tags = {"participant": f"P{i + 1:03d}", "condition": "explain" if i % 2 else "silent"}
        lines = []
        for line in texts[i % len(texts)]:
            record = json.loads(line)
            record["session"] = session
            if record["kind"] == "session_start":
                record["tags"] = tags
            lines.append(json.dumps(record, ensure_ascii=False))
        name = f"20261128T0700{i % 60:02d}-condition={tags['condition']}_participant={tags['participant']}-{session}"
        (out / f"{name}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.tangram.bench_replay", description=__doc__)
    p.add_argument("--transcripts", type=int, default=300)
    p.add_argument("--turns", type=int, default=20)
    p.add_argument("--sources", type=int, default=3, help="real sessions played to copy from")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--jobs", type=int, default=0, help="python -m agent.analyze --jobs (default 0: one per core)")
    p.add_argument("--keep", type=Path, help="keep the study folder and the analysis here")
    args = p.parse_args(argv)
    work = args.keep or Path(tempfile.mkdtemp(prefix="bench-replay-"))
    try:
        started = time.perf_counter()
        sources = play_sources(work / "played", args.sources, args.turns, args.seed)
        played_s = time.perf_counter() - started
        study = work / "study"
        synthesize(sources, study, args.transcripts)
        size_mb = sum(f.stat().st_size for f in study.glob("*.jsonl")) / 1e6
        out = work / "analysis"
        t0 = time.perf_counter()
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        run = subprocess.run([sys.executable, "-m", "agent.analyze", str(study), "--out", str(out),
                              "--jobs", str(args.jobs)],
                             capture_output=True, text=True, check=False)
        wall = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        if run.returncode != 0:
            print(run.stdout, run.stderr, sep="\n", file=sys.stderr)
            return 1
        pages = sorted((out / "replays").glob("*.html"))
        sizes = [f.stat().st_size / 1024 for f in pages]
        summary = (out / "summary.html").read_text(encoding="utf-8")
        linked = sum(1 for f in pages if f'href="replays/{f.name}"' in summary)
        print(f"machine           {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the start; "
              f"analysis --jobs {args.jobs or 'per core'}")
        print(f"sources           {len(sources)} sessions of {args.turns} turns played in {played_s:.1f} s "
              "(offline planner, chatty human, simulator)")
        print(f"study folder      {args.transcripts} transcripts, {size_mb:.1f} MB")
        print(f"analysis          {wall:.1f} s wall for tables, summary and {len(pages)} replay pages "
              f"({wall / max(1, len(pages)) * 1000:.0f} ms a session); goal < {GOAL_S:.0f} s: "
              f"{'met' if wall < GOAL_S and len(pages) == args.transcripts else 'MISSED'}")
        print(f"CPU               {cpu:.1f} s in the analysis and its workers (the wall time above is that "
              "plus waiting for a core on a shared machine)")
        print(f"linked            {linked} of {len(pages)} pages from summary.html")
        if sizes:
            print(f"page size         {args.turns}-turn game: median {statistics.median(sizes):.0f} KB, "
                  f"max {max(sizes):.0f} KB (no kept pictures)")
        return 0
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
