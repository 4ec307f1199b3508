"""``python -m agent.analyze [TRANSCRIPTS_DIR] --out DIR [--by TAG] [--prices FILE] [--study FILE
[--with-platform-ids] [--results DIR]]``: without a folder, the transcripts a study's database names;
``--results``: the study file's analysis plan run and written as a results page (analyze/results/)."""

from __future__ import annotations

import argparse
import csv
import os
import sys
import tempfile
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from agent.analyze.replays import FileResult, analyse_file, page_names
from agent.analyze.tables import combine, find_transcripts
from agent.core.extras import MissingExtra, require
from agent.core.studies.pricing import Price, load_prices

MAX_FILES = 100_000
MAX_JOBS = 8
KEY_FILE = "key.csv"
"""``--with-platform-ids``: the participants' platform ids, apart from the tables."""
CHUNK = 8
"""Transcripts handed to a worker at a time."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m agent.analyze",
        description="Turn a folder of transcripts into tables (CSV, and Parquet with pyarrow), an HTML summary and "
                    "a replay page per session of the games that offer one (tangram).")
    parser.add_argument("transcripts", type=Path, nargs="?",
                        help="folder of *.jsonl transcripts (searched recursively); with --study it may be left "
                             "out: then the transcripts the study's database names, wherever the study's folder "
                             "is now")
    parser.add_argument("--out", type=Path, help="folder for the tables and summary.html (needed unless --results)")
    parser.add_argument("--results", type=Path, metavar="DIR",
                        help="with --study: run the study file's analysis plan and write results.html and the CSV "
                             "files of every number on it here (docs/study.md, 'From data to results')")
    parser.add_argument("--by", action="append", default=[], metavar="TAG",
                        help="group the summary by this tag (repeatable; default: every tag that varies)")
    parser.add_argument("--study", type=Path, metavar="FILE",
                        help="a study file: join its participants and games (condition, order, the condition "
                             "before, completion) and group the summary by condition and by order")
    parser.add_argument("--with-platform-ids", action="store_true",
                        help="with --study: write Prolific's ids (prolific_pid, prolific_study, "
                             "prolific_session) beside each participant's id to a separate key file, key.csv "
                             "(never into the tables, which stay pseudonymous; keep the key apart)")
    parser.add_argument("--prices", type=Path,
                        help="YAML of model: {input: USD, output: USD} per million tokens (default: shipped list)")
    parser.add_argument("--jobs", type=int, default=0, metavar="N",
                        help="processes reading transcripts and writing replays (default: one per core, "
                             f"at most {MAX_JOBS}; 1: none besides this one)")
    return parser


def analyse_files(paths: Sequence[Path], out: Path, prices: Mapping[str, Price], jobs: int) -> list[FileResult]:
    """Every transcript's rows and replay, in the order of ``paths``; over ``jobs`` processes when
    there is more than one and enough files to share."""
    names = page_names(paths)
    jobs = jobs if jobs > 0 else min(os.cpu_count() or 1, MAX_JOBS)
    if jobs <= 1 or len(paths) <= CHUNK:
        return [analyse_file(p, n, out, prices) for p, n in zip(paths, names, strict=True)]
    with ProcessPoolExecutor(max_workers=min(jobs, MAX_JOBS)) as pool:
        return list(pool.map(analyse_file, paths, names, [out] * len(paths), [prices] * len(paths),
                             chunksize=CHUNK))


def write_key(keys: Sequence[Mapping[str, Any]], out: Path) -> Path:
    """``key.csv``: each participant's id beside their platform ids (owner-only permissions)."""
    from agent.analyze.study_join import PLATFORM_IDS
    from agent.core.studies.store import private

    out.mkdir(parents=True, exist_ok=True)
    path = out / KEY_FILE
    private(path)
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=["participant", *PLATFORM_IDS])
        writer.writeheader()
        writer.writerows(keys)
    return path


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        # summary.py imports them only where it uses them: check before any work is done.
        require("the analysis", "analysis", "pandas", "matplotlib")
        if args.results is not None:
            require("the results", "analysis", "scipy", "statsmodels")
    except MissingExtra as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    from agent.analyze.summary import write_summary

    if args.transcripts is None and args.study is None:
        print("error: name a folder of transcripts, or a study (--study FILE) whose transcripts to read",
              file=sys.stderr)
        return 2
    if args.results is not None and args.study is None:
        print("error: --results goes with --study (the study file declares the analysis plan)", file=sys.stderr)
        return 2
    if args.out is None and args.results is None:
        print("error: name a folder for the tables (--out DIR) or for the results (--results DIR)", file=sys.stderr)
        return 2
    if args.with_platform_ids and args.out is None:
        print("error: --with-platform-ids writes key.csv beside the tables: name their folder (--out DIR)",
              file=sys.stderr)
        return 2
    if args.with_platform_ids and args.study is None:
        print("error: --with-platform-ids goes with --study", file=sys.stderr)
        return 2
    if args.transcripts is not None and not args.transcripts.is_dir():
        print(f"error: {args.transcripts} is not a folder", file=sys.stderr)
        return 2
    try:
        prices = load_prices(args.prices)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    study = None
    if args.study is not None:
        from agent.analyze.study_join import read_study_rows
        from agent.core.config import ConfigError
        from agent.core.studies.store import StoreError

        try:
            study = read_study_rows(args.study, args.with_platform_ids)
        except (ConfigError, StoreError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        if args.results is not None and study.analysis is None:
            print(f"error: study {args.study}: the study file declares no analysis plan (analysis: primary: ...; "
                  "see docs/study.md, 'From data to results')", file=sys.stderr)
            return 2
    missing: list[Path] = []
    if args.transcripts is not None:
        source = args.transcripts
        paths = find_transcripts(args.transcripts)[:MAX_FILES]
    else:
        assert study is not None
        source = study.folder or args.study
        paths = [p for p in study.transcripts if p.is_file()][:MAX_FILES]
        missing = [p for p in study.transcripts if not p.is_file()]
        if missing:
            print(f"warning: {len(missing)} transcript(s) the study's database names are not there "
                  f"(the first: {missing[0]})", file=sys.stderr)
    if not paths:
        where = args.transcripts if args.transcripts is not None else f"the study's database ({args.study})"
        print(f"error: no *.jsonl transcripts in {where}", file=sys.stderr)
        return 2
    if args.out is None:
        with tempfile.TemporaryDirectory(prefix="agent-analyze-") as scratch:  # the replays are not kept
            results = analyse_files(paths, Path(scratch), prices, args.jobs)
    else:
        results = analyse_files(paths, args.out, prices, args.jobs)
    tables = combine(r.rows for r in results)
    tables.skipped += [f"{p}: named by the study's database, not found" for p in missing]
    links = [r.link for r in results if r.link is not None]
    tables.skipped += [r.skipped for r in results if r.skipped is not None]
    columns: tuple[str, ...] = ()
    if study is not None:
        from agent.analyze.study_join import GROUPS, join_study

        matched = join_study(tables, study)
        columns = GROUPS
        print(f"study {study.study}: {len(study.participants)} participants, {len(study.games)} games started, "
              f"{matched} of them among these transcripts")
    if args.results is not None:
        assert study is not None
        from agent.analyze.results.report import write_results

        done = write_results(tables, study, args.results)
        rules = ", ".join(f"{n} {rule}" for rule, n in done.excluded.items() if n)
        print(f"results: {done.analysed} participant(s) analysed, {sum(done.excluded.values())} excluded"
              + (f" ({rules})" if rules else ""))
        if done.other_plans:
            print(f"warning: sessions recorded another analysis plan ({', '.join(done.other_plans)}) than the "
                  f"study file's now ({study.meta['analysis_sha256']}): the plan changed after they were played "
                  "(the page says so)", file=sys.stderr)
        for path in [done.page, *done.files]:
            print(f"wrote {path}")
    if args.out is None:
        return 0
    written = write_summary(tables, args.out, args.by, source, links, columns)
    if study is not None and args.with_platform_ids:
        key = write_key(study.keys, args.out)
        print(f"wrote {key} (Prolific's ids: keep it apart from the tables, which do not hold them)")
    guards = sum(int(s.get("guard_overrides") or 0) for s in tables.sessions)
    plays = [s for s in tables.sessions if s.get("candidate_plays") is not None]
    offered = (f", {sum(s['candidate_plays'] for s in plays)} candidate and {sum(s['own_plays'] for s in plays)} "
               "own plays") if plays else ""
    thinking = sum(int(s.get("thinking_lines") or 0) for s in tables.sessions)
    idle = sum(1 for s in tables.sessions if not s.get("turns"))
    without = f", {idle} connection(s) without a turn (not counted as sessions)" if idle else ""
    print(f"{len(tables.sessions) - idle} sessions, {len(tables.turns)} turns, {len(tables.chats)} chat replies, "
          f"{len(tables.llm_calls)} LLM calls, {guards} guard overrides{offered}, {thinking} thinking lines{without}")
    for path in [*written.files, written.html]:
        print(f"wrote {path}")
    if links:
        print(f"wrote {len(links)} session replay(s) in {args.out / 'replays'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
