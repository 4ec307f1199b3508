"""``python -m agent.games.tangram.replay TRANSCRIPT.jsonl [--out PAGE.html]``: one session's replay."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from agent.games.tangram.replay import ReplayError, transcript_replay

MAX_FILE_BYTES = 512 * 1024 * 1024
MAX_LINE_CHARS = 2_000_000


def read_records(path: Path) -> list[dict[str, Any]]:
    """The JSON object records of a JSONL transcript; damaged lines (a cut last line) are skipped."""
    if path.stat().st_size > MAX_FILE_BYTES:
        raise ReplayError(f"larger than {MAX_FILE_BYTES // (1024 * 1024)} MB")
    records = []
    with path.open(encoding="utf-8", errors="replace") as lines:
        for line in lines:
            if len(line) > MAX_LINE_CHARS or not line.strip():
                continue
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict) and isinstance(record.get("kind"), str):
                records.append(record)
    return records


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m agent.games.tangram.replay",
                                     description="One tangram session's transcript as a self-contained HTML replay.")
    parser.add_argument("transcript", type=Path, help="a *.jsonl transcript of a tangram session")
    parser.add_argument("--out", type=Path, help="HTML file to write (default: the transcript's name with .html)")
    args = parser.parse_args(argv)
    try:
        page = transcript_replay(read_records(args.transcript), args.transcript)
        out = args.out or args.transcript.with_suffix(".html")
        out.write_text(page, encoding="utf-8")
    except OSError as exc:
        print(f"error: {args.transcript}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except ReplayError as exc:
        print(f"error: {args.transcript}: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {out} ({len(page.encode('utf-8')) // 1024} KB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
