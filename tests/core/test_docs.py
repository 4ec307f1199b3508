"""The README and the docs pages link only to files that exist, and the table of contents lists
every page."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def _links(page: Path) -> list[str]:
    return [target for target in LINK.findall(page.read_text(encoding="utf-8"))
            if "://" not in target and not target.startswith("mailto:")]


def test_every_relative_link_resolves() -> None:
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    broken = [f"{page.relative_to(ROOT)} -> {target}" for page in pages for target in _links(page)
              if not (page.parent / target).exists()]
    assert broken == []


def test_the_table_of_contents_lists_every_page() -> None:
    listed = set(_links(ROOT / "docs" / "README.md"))
    pages = {p.name for p in (ROOT / "docs").glob("*.md")} - {"README.md"}
    assert pages - listed == set()
