"""The game as a folder a browser can load: index.html, the engine, index.pck; cached per input.

Two ways: a GAIPS clone whose own web build (``exe/``) is complete is served as it is (copied
into the cache); otherwise the main pack is built from the sources (``project``, ``pck``) and put
next to a web export template's engine (``template``) and a page of ours (``static/``). The cache
folder is named after a hash of the sources, the template and this builder's version, so a second
start reuses the first build.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from agent.games.tangram.webgame.pck import engine_pack_format, write_pack
from agent.games.tangram.webgame.project import ProjectError, collect_project, engine_feature, read_settings
from agent.games.tangram.webgame.source import SourceError, SourceTree, open_tree
from agent.games.tangram.webgame.template import Template, TemplateError, check_engine, open_template

BUILDER_VERSION = "2"
"""Bump when what a build holds changes, so old cached builds are not reused."""
OWN_BUILD = ("exe/index.html", "exe/index.js", "exe/index.wasm", "exe/index.pck")
PAGE_FILES = ("index.html", "webgame.js", "webgame.css")
GAIPS_MARKER = "Main_scene.tscn"
"""Every version of the GAIPS game has its main scene under this name."""
CLONE_HINT = "clone https://github.com/GAIPS/TangramCollaborativeAI"


class BuildError(ValueError):
    """The game cannot be built or served from these inputs; one line for the user."""


@dataclass(frozen=True)
class BuiltGame:
    folder: Path
    kind: str
    """``own web build`` (the clone's exe/) or ``built from the sources``."""
    engine: str
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @classmethod
    def load(cls, folder: Path) -> BuiltGame:
        data = json.loads((folder / "build.json").read_text())
        return cls(folder, data["kind"], data["engine"], list(data["warnings"]), list(data["notes"]))

    def save(self) -> None:
        data = {"kind": self.kind, "engine": self.engine, "warnings": self.warnings, "notes": self.notes}
        (self.folder / "build.json").write_text(json.dumps(data, indent=1) + "\n")


def default_cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tangram-agent" / "webgame"


def open_gaips(folder: Path) -> SourceTree:
    """The GAIPS clone (or its bare mirror) at ``folder``; BuildError with one line when it is none."""
    try:
        tree = open_tree(folder)
        settings = read_settings(tree)
    except (SourceError, ProjectError) as exc:
        raise BuildError(f"{folder} is not a GAIPS Tangram clone ({exc}); {CLONE_HINT}") from exc
    if not settings.main_scene.endswith("/" + GAIPS_MARKER):
        raise BuildError(f"{folder} is a Godot project but not the GAIPS Tangram game (its main scene is "
                         f"{settings.main_scene}, not .../{GAIPS_MARKER}); {CLONE_HINT}")
    return tree


def _own_build(tree: SourceTree) -> dict[str, int] | None:
    """The clone's exe/ files and sizes when exe/ holds a complete web build, else None."""
    sizes = tree.sizes()
    if any(not sizes.get(name) for name in OWN_BUILD):
        return None
    pck_head = (tree.read("exe/index.pck") or b"")[:4]
    wasm_head = (tree.read("exe/index.wasm") or b"")[:4]
    if pck_head != b"GDPC" or wasm_head != b"\0asm":  # e.g. Git LFS pointer files
        return None
    return {name: size for name, size in sizes.items()
            if name.startswith("exe/") and name.count("/") == 1 and size is not None}


def own_build_missing(tree: SourceTree) -> list[str]:
    """Which of the files a web build needs are absent from the clone's exe/."""
    sizes = tree.sizes()
    return [name.removeprefix("exe/") for name in OWN_BUILD if not sizes.get(name)]


def _key(*parts: str) -> str:
    digest = hashlib.sha256()
    for part in (BUILDER_VERSION, *parts):
        digest.update(part.encode("utf-8", errors="surrogateescape") + b"\0")
    return digest.hexdigest()[:20]


def _place(target: Path, fill: Callable[[Path], None], replace: bool) -> None:
    """Fill a fresh temporary folder, then move it to ``target``.

    A cache folder (``replace`` False) that another process finished first is kept and ours dropped:
    same key, same contents, and that process may be serving it. A forced folder is replaced.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=target.name + ".", dir=target.parent))
    try:
        fill(tmp)
        if replace and target.exists():
            shutil.rmtree(target)
        try:
            tmp.rename(target)
        except OSError:
            if replace or not (target / "build.json").is_file():
                raise
            shutil.rmtree(tmp, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _copy_engine(template: Template, folder: Path) -> dict[str, int]:
    sizes = {}
    for name, path in template.runtime_files().items():
        try:
            os.link(path, folder / name)
        except OSError:
            shutil.copyfile(path, folder / name)
        sizes[name] = path.stat().st_size
    return sizes


def _write_page(folder: Path, config: dict[str, object]) -> None:
    static = resources.files(__package__) / "static"
    for name in PAGE_FILES:
        (folder / name).write_bytes((static / name).read_bytes())
    (folder / "webgame.json").write_text(json.dumps(config, indent=1) + "\n")


def build_from_sources(tree: SourceTree, template: Template, target: Path, replace: bool = True) -> BuiltGame:
    """Pack the project in ``tree`` for ``template``'s engine into ``target``."""
    project = collect_project(tree)
    check_engine(template, project.engine_feature)
    built = BuiltGame(target, "built from the sources", template.version_text, project.warnings, project.notes)

    def fill(folder: Path) -> None:
        sizes = _copy_engine(template, folder)
        sizes["index.pck"] = write_pack(folder / "index.pck", project.files.items(), template.version,
                                        engine_pack_format(template.version))
        _write_page(folder, {"executable": "index", "mainPack": "index.pck", "threads": False,
                             "engine": template.version_text,
                             "fileSizes": {k: v for k, v in sizes.items() if k.endswith((".wasm", ".pck"))}})
        BuiltGame(folder, built.kind, built.engine, built.warnings, built.notes).save()

    _place(target, fill, replace)
    return built


def copy_own_build(tree: SourceTree, files: dict[str, int], target: Path, replace: bool = True) -> BuiltGame:
    def fill(folder: Path) -> None:
        for name in files:
            data = tree.read(name)
            if data is not None:
                (folder / name.removeprefix("exe/")).write_bytes(data)
        BuiltGame(folder, "own web build", "as exported by the game's authors").save()

    _place(target, fill, replace)
    return BuiltGame.load(target)


@dataclass(frozen=True)
class BuildPlan:
    """What ``build_game`` will do, decided from cheap checks only (no picture decoded, nothing written)."""

    tree: SourceTree
    own_build: dict[str, int] | None
    """The clone's complete exe/ files, when it has them."""
    template: Template | None


def plan_build(gaips: Path, template_path: Path | None, cache: Path | None = None) -> BuildPlan:
    """Check the inputs of a build; BuildError with one line for a folder that is no GAIPS clone, a
    template of another engine version or with files missing, or no template when one is needed."""
    tree = open_gaips(gaips)
    try:
        own = _own_build(tree)
        if own is not None:
            return BuildPlan(tree, own, None)
        if template_path is None:
            missing = ", ".join(own_build_missing(tree))
            raise BuildError(f"{gaips} has no complete web build in exe/ ({missing} missing): give a Godot 4 web "
                             "export template with --godot-web (see docs/browser-game.md)")
        template = open_template(template_path, cache or default_cache())
        check_engine(template, engine_feature(read_settings(tree).features))
        return BuildPlan(tree, None, template)
    except (SourceError, ProjectError, TemplateError) as exc:
        raise BuildError(str(exc)) from exc


def build_game(gaips: Path, template_path: Path | None, cache: Path | None = None,
               target: Path | None = None) -> BuiltGame:
    """The servable game for a GAIPS clone: its own complete web build, or one built with a template.

    ``target`` forces the output folder (rebuilt every time); otherwise a cache folder is reused when
    the sources and the template have not changed. Raises BuildError with one line.
    """
    cache = cache or default_cache()
    plan = plan_build(gaips, template_path, cache)
    tree = plan.tree
    try:
        if plan.own_build is not None:
            folder = target or cache / f"own-{_key(tree.identity())}"
            if target is None and (folder / "build.json").is_file():
                return BuiltGame.load(folder)
            return copy_own_build(tree, plan.own_build, folder, replace=target is not None)
        template = plan.template
        if template is None:  # plan_build returns a template whenever there is no own build
            raise BuildError(f"{gaips}: no web build and no template")
        folder = target or cache / _key(tree.identity(), template.identity())
        if target is None and (folder / "build.json").is_file():
            return BuiltGame.load(folder)
        return build_from_sources(tree, template, folder, replace=target is not None)
    except (SourceError, ProjectError, TemplateError) as exc:
        raise BuildError(str(exc)) from exc
