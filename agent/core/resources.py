"""Where the shipped prompt templates and configs are, in a checkout and in an installed wheel.

In a checkout they are the project's ``prompts/`` and ``configs/`` folders. A wheel carries copies
of both trees inside the package (``agent/data/``, made by setup.py's build step), because
site-packages has no project folder. Every game finds its files through these functions, so the
same config works in both.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

PACKAGE_DIR = Path(__file__).resolve().parent.parent
"""The ``agent`` package folder."""
PROJECT_DIR = PACKAGE_DIR.parent
"""The checkout (or, installed, site-packages: nothing of ours lives there but the package)."""
BUNDLED_DIR = PACKAGE_DIR / "data"
"""The copies an installed wheel carries; absent in a checkout."""

Tree = Literal["prompts", "configs"]


def shipped_dir(tree: Tree) -> Path:
    """The folder holding the shipped ``prompts`` or ``configs``: the wheel's copy if installed,
    else the checkout's."""
    bundled = BUNDLED_DIR / tree
    return bundled if bundled.is_dir() else PROJECT_DIR / tree


def prompts_dir(game: str) -> Path:
    """A game's shipped template folder, ``prompts/<game>``."""
    return shipped_dir("prompts") / game


STUDY_PREFIX = "study"
"""Shipped study files (``configs/study-example.yaml``) sit beside the configs but are no configs."""


def shipped_configs() -> list[Path]:
    """Every shipped config file, sorted by name (study files left out)."""
    folder = shipped_dir("configs")
    found = sorted(folder.glob("*.yaml")) if folder.is_dir() else []
    return [p for p in found if not p.name.startswith(STUDY_PREFIX)]


def shipped_studies() -> list[Path]:
    """Every shipped study file (``configs/study*.yaml``), sorted by name."""
    folder = shipped_dir("configs")
    return sorted(folder.glob(f"{STUDY_PREFIX}*.yaml")) if folder.is_dir() else []


def find_shipped_config(name: str | Path) -> Path | None:
    """A shipped config named ``name`` (``gpt4o``, ``gpt4o.yaml`` or ``configs/gpt4o.yaml``), if any."""
    stem = Path(name).name
    if stem.endswith((".yaml", ".yml")):
        stem = stem.rsplit(".", 1)[0]
    for path in shipped_configs():
        if path.stem == stem:
            return path
    return None


def search_roots() -> tuple[Path, ...]:
    """Where a relative folder named by a config (``prompts/tangram``) is looked up after the
    config's own folder: the shipped trees' parent (installed or checkout)."""
    roots = [PROJECT_DIR]
    if BUNDLED_DIR.is_dir():
        roots.insert(0, BUNDLED_DIR)
    return tuple(roots)
