"""Check replay pages of any transcripts in the headless browser the tests use: every step's pieces
against the transcript's states, and the chat lines in order (what test_replay_browser.py checks on a
simulated session, for a transcript from elsewhere: the real-game runner's, a study's).

    python -m tests.tangram.replay.check TRANSCRIPT.jsonl [TRANSCRIPT.jsonl ...]
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from agent.games.tangram.replay import ReplayError, transcript_replay
from agent.games.tangram.replay.__main__ import read_records
from tests.tangram.console.support import browser_or_skip_reason, start_browser
from tests.tangram.replay.support import walk_page


def main(paths: list[Path]) -> int:
    reason = browser_or_skip_reason()
    if reason is not None:
        print(f"cannot check: {reason}", file=sys.stderr)
        return 2
    failed = 0
    out = Path(tempfile.mkdtemp(prefix="replay-check-"))
    driver = start_browser(1500, 1100)
    try:
        for path in paths:
            records = read_records(path)
            try:
                page = out / f"{path.stem}.html"
                page.write_text(transcript_replay(records, path), encoding="utf-8")
                steps = walk_page(driver, page, records)
            except ReplayError as exc:
                print(f"no replay  {path.name}: {exc}")
                continue
            except AssertionError as exc:
                failed += 1
                print(f"DIFFERS    {path.name}: {exc!r}")
                continue
            turns = sum(1 for r in records if r["kind"] == "turn_start")
            end = "ended" if any(r["kind"] == "session_end" for r in records) else "cut short"
            print(f"ok         {path.name}: {steps} steps ({turns} AI turns, {end}), every piece at every step "
                  f"as recorded, chat in order; page {page.stat().st_size // 1024} KB at {page}")
    finally:
        driver.quit()
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main([Path(p) for p in sys.argv[1:]]))
