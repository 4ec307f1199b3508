"""The README and the docs pages link only to files that exist, the table of contents lists every
page, and every module, file and ``python -m`` command they name is in the checkout."""

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


PATH = re.compile(r"(?<![\w./~<-])((?:agent/games|agent/core|agent/analyze|agent/cli|tests|benchmarks)/?[\w./<>*-]*)")
"""A file or folder of the checkout named in a page: agent/games/tangram/link/session.py, tests/tangram/sim/."""
CHECKED = (".py", ".yaml", ".j2", ".toml", ".txt", ".html", ".js", "/")
COMMAND = re.compile(r"python -m ((?:agent|tests|benchmarks)(?:\.\w+)*)")
DOTTED = re.compile(r"(?<![\w./])(agent(?:\.\w+){2,})")
PLACEHOLDER = re.compile(r"NAME|<|\*|(?:^|[./])[A-Z](?:$|[./])")


def _pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _module_file(module: str) -> Path | None:
    """The file that ``module`` (dotted) is, or None when the checkout has no such module."""
    base = ROOT.joinpath(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _defines(module: Path, name: str) -> bool:
    """``module`` defines or imports ``name`` at its top level (a function, class, constant or re-export)."""
    pattern = rf"^(?:async def |def |class ){name}\b|^{name}\s*[:=]|^from \S+ import .*\b{name}\b|^\s+{name},$"
    return re.search(pattern, module.read_text(encoding="utf-8"), re.MULTILINE) is not None


def test_every_path_named_in_the_docs_exists() -> None:
    missing = [f"{page.relative_to(ROOT)}: {path}" for page in _pages()
               for path in {p.rstrip(".,:;)") for p in PATH.findall(page.read_text(encoding="utf-8"))}
               if path.endswith(CHECKED) and not PLACEHOLDER.search(path) and not (ROOT / path).exists()]
    assert missing == []


def test_every_python_m_command_in_the_docs_names_a_runnable_module() -> None:
    missing = []
    for page in _pages():
        for module in set(COMMAND.findall(page.read_text(encoding="utf-8"))):
            if PLACEHOLDER.search(module):
                continue
            found = _module_file(module)
            runnable = found is not None and (found.name != "__init__.py" or (found.parent / "__main__.py").is_file())
            if not runnable:
                missing.append(f"{page.relative_to(ROOT)}: python -m {module}")
    assert missing == []


def test_every_dotted_module_named_in_the_docs_exists() -> None:
    """``agent.games.tangram.link.session`` or ``agent.games.tangram.planner.candidates.propose_candidates``:
    the longest prefix that is a module exists, and what follows it is defined there."""
    missing = []
    for page in _pages():
        for dotted in set(DOTTED.findall(page.read_text(encoding="utf-8"))):
            if PLACEHOLDER.search(dotted):
                continue
            parts = dotted.split(".")
            cut = next((n for n in range(len(parts), 1, -1) if _module_file(".".join(parts[:n]))), None)
            if cut is None:
                missing.append(f"{page.relative_to(ROOT)}: {dotted}")
                continue
            rest = parts[cut:]
            module = _module_file(".".join(parts[:cut]))
            assert module is not None
            if rest and not _defines(module, rest[0]):
                missing.append(f"{page.relative_to(ROOT)}: {dotted}")
    assert missing == []
