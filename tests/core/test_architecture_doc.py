"""docs/architecture.md is true to the code: its list of arrows between rooms is exactly the imports
between rooms (of the core, tangram and hive), lazy ones included."""

from __future__ import annotations

import re
from pathlib import Path

from tests.core.test_layout import AGENT, imported_modules

DOC = AGENT.parent / "docs" / "architecture.md"
PLACES = {"core": AGENT / "core", "tangram": AGENT / "games" / "tangram", "hive": AGENT / "games" / "hive"}


def drawn() -> dict[str, set[str]]:
    """The doc's arrows: ``place/room -> a, b`` lines of its ```arrows block."""
    block = re.search(r"```arrows\n(.*?)```", DOC.read_text(encoding="utf-8"), re.DOTALL)
    assert block is not None, "docs/architecture.md has no ```arrows block"
    arrows: dict[str, set[str]] = {}
    for line in block.group(1).splitlines():
        if line.strip():
            source, _, targets = line.partition(" -> ")
            place = source.split("/")[0]
            arrows[source.strip()] = {f"{place}/{t.strip()}" for t in targets.split(",")}
    return arrows


def coded(place: str, folder: Path, prefix: str) -> dict[str, set[str]]:
    """The code's arrows between the rooms of ``folder`` (a subpackage or a top-level module each),
    whose modules are named ``prefix`` + their path."""
    arrows: dict[str, set[str]] = {}
    for path in sorted(folder.rglob("*.py")):
        source = path.relative_to(folder).with_suffix("").parts[0]
        for module in imported_modules(path):
            if not module.startswith(prefix):
                continue
            target = module[len(prefix):].split(".")[0]
            if target != source and ((folder / target).is_dir() or (folder / f"{target}.py").is_file()):
                arrows.setdefault(f"{place}/{source}", set()).add(f"{place}/{target}")
    return arrows


def test_the_architecture_docs_arrows_are_the_codes() -> None:
    code: dict[str, set[str]] = {}
    for place, folder in PLACES.items():
        code.update(coded(place, folder, "agent." + ".".join(folder.relative_to(AGENT).parts) + "."))
    doc = drawn()
    missing = sorted(f"{s} -> {t}" for s, ts in code.items() for t in ts - doc.get(s, set()))
    extra = sorted(f"{s} -> {t}" for s, ts in doc.items() for t in ts - code.get(s, set()))
    assert (missing, extra) == ([], []), "docs/architecture.md: arrows in the code but not the doc, and the reverse"


def test_a_lazy_import_between_rooms_is_an_arrow(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "x.py").write_text("def f():\n    from pkg.b import y\n    import pkg.c.z\n")
    (tmp_path / "b.py").write_text("import pkg.a.x\n")
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "z.py").write_text("import os\n")
    assert coded("p", tmp_path, "pkg.") == {"p/a": {"p/b", "p/c"}, "p/b": {"p/a"}}
