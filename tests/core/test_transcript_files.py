"""Files kept next to a transcript (``transcripts.images``): once per distinct content, named by hash,
written in record order by the writer thread, owner-only, and not at all unless asked for."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from agent.core.transcript import Transcript


async def test_each_distinct_file_is_written_once_and_named_in_the_record(tmp_path: Path) -> None:
    t = Transcript(tmp_path, keep_files=True)
    await t.open()
    first = t.keep_file(b"\x89PNG one", "png")
    again = t.keep_file(b"\x89PNG one", "png")
    other = t.keep_file(b"\xff\xd8 two", "jpg")
    t.record("llm", images=[{"file": first}, {"file": other}])
    await t.close()
    assert t.path is not None and first == again and first != other
    assert first is not None and first.startswith(f"{t.path.stem}.files/") and first.endswith(".png")
    assert (tmp_path / first).read_bytes() == b"\x89PNG one"
    assert (tmp_path / str(other)).read_bytes() == b"\xff\xd8 two"
    assert len(os.listdir((tmp_path / first).parent)) == 2
    assert stat.S_IMODE((tmp_path / first).stat().st_mode) == 0o600
    record = json.loads(t.path.read_text().splitlines()[0])
    assert [i["file"] for i in record["images"]] == [first, other]


async def test_nothing_is_kept_unless_asked(tmp_path: Path) -> None:
    t = Transcript(tmp_path)
    await t.open()
    assert t.keep_file(b"data", "png") is None
    await t.close()
    assert t.keep_file(b"data", "png") is None
    assert [os.path.splitext(name)[1] for name in os.listdir(tmp_path)] == [".jsonl"]
    assert Transcript(None, keep_files=True).keep_file(b"data", "png") is None
