"""What the engine needs from a Godot 4 project's sources, as the files of a main pack.

Starting from ``project.godot`` (its main scene, autoloads and every other ``res://`` path it
names), every scene, resource and script it reaches is packed as text; every picture they name is
packed the way Godot's editor imports it: the ``.import`` file next to the picture's name, and a
``.ctex`` at the path that file names. Then the files the engine reads at boot: the UID cache
(``.godot/uid_cache.bin``) and the global script class cache.

Sources are not always tidy. A name that differs only in letter case from the file in the sources
(``circle.png`` in a scene, ``Circle.png`` in git) is packed under the name the scene uses. A
picture absent from the sources (a git mirror without its large files) gets a stand-in made here,
a flat grey square, and a warning that says so.
"""

from __future__ import annotations

import io
import re
import struct
from collections import deque
from dataclasses import dataclass, field

from PIL import Image

from agent.games.tangram.webgame.ctex import TextureError, ctex_bytes, decode_picture
from agent.games.tangram.webgame.importer import apply_import_options
from agent.games.tangram.webgame.source import SourceTree

TEXT_RESOURCES = (".tscn", ".tres", ".gd", ".gdshader", ".gdshaderinc")
"""Packed as text and searched for further ``res://`` paths."""
PICTURES = (".png", ".jpg", ".jpeg", ".webp", ".bmp", ".tga", ".svg")
RAW_PICTURE_SETTINGS = ("config/icon", "config/windows_native_icon", "config/macos_native_icon")
"""Settings under [application] naming pictures the engine opens itself at start."""
STAND_IN_SIZE = 64
STAND_IN_GREY = (128, 128, 128, 255)
MAX_FILES = 5000
MAX_PACK_BYTES = 512 * 1024 * 1024

_RES = re.compile(r"""["'](res://[^"'\n]+)["']""")
_UID = re.compile(r'uid="(uid://[a-z0-9]+)"')
_EXT = re.compile(r"^\[ext_resource\b([^\]]*)\]", re.MULTILINE)
_ATTR = re.compile(r'(\w+)="([^"]*)"')
_CLASS_NAME = re.compile(r"^\s*class_name\s+(\w+)", re.MULTILINE)
_EXTENDS = re.compile(r"^\s*extends\s+(\w+)", re.MULTILINE)
_TOOL = re.compile(r"^\s*@tool\b", re.MULTILINE)


class ProjectError(ValueError):
    """Not a Godot 4 project we can pack; one line."""


@dataclass
class Project:
    files: dict[str, bytes] = field(default_factory=dict)
    """Pack path (no ``res://``) to contents."""
    main_scene: str = ""
    features: tuple[str, ...] = ()
    warnings: list[str] = field(default_factory=list)
    """Something is missing or stands in for the real thing: print these."""
    notes: list[str] = field(default_factory=list)
    """Something was fixed up on the way (a name's letter case)."""

    @property
    def engine_feature(self) -> tuple[int, int] | None:
        return engine_feature(self.features)


def engine_feature(features: tuple[str, ...]) -> tuple[int, int] | None:
    """The Godot version a project declares in ``config/features`` ("4.2" -> (4, 2)), if any."""
    for feature in features:
        match = re.fullmatch(r"(\d+)\.(\d+)", feature)
        if match:
            return int(match[1]), int(match[2])
    return None


def uid_to_id(text: str) -> int:
    """A ``uid://`` text's 63-bit id, as Godot's ResourceUID::text_to_id computes it.

    Godot's digits are a-y then 0-8 (base 34: its constants are one short, so 'z' and '9' count
    as 25 and 34 yet never appear in the uids it writes).
    """
    if not text.startswith("uid://") or len(text) == 6:
        raise ValueError(f"{text!r} is not a uid:// text")
    value = 0
    for char in text[6:]:
        if "a" <= char <= "z":
            digit = ord(char) - ord("a")
        elif "0" <= char <= "9":
            digit = ord(char) - ord("0") + 25
        else:
            raise ValueError(f"{text!r} is not a uid:// text")
        value = (value * 34 + digit) & 0xFFFFFFFFFFFFFFFF
    return value & 0x7FFFFFFFFFFFFFFF


def uid_cache(uids: dict[str, str]) -> bytes:
    """``.godot/uid_cache.bin``: a count, then per entry the id (i64), the path's length and UTF-8."""
    out = bytearray(struct.pack("<I", len(uids)))
    for text, path in sorted(uids.items()):
        raw = path.encode("utf-8")
        out += struct.pack("<qI", uid_to_id(text), len(raw)) + raw
    return bytes(out)


def class_cache(classes: list[tuple[str, str, str, bool]]) -> bytes:
    """``.godot/global_script_class_cache.cfg`` for (class, base, path, is_tool) of GDScript classes."""
    items = []
    for name, base, path, tool in sorted(classes):
        items.append("{\n" + ",\n".join([
            f'"base": &"{base}"', f'"class": &"{name}"', '"icon": ""', '"is_abstract": false',
            f'"is_tool": {"true" if tool else "false"}', '"language": &"GDScript"', f'"path": "{path}"',
        ]) + "\n}")
    return ("list=[" + ", ".join(items) + "]\n").encode()


def parse_settings(text: str) -> dict[str, dict[str, str]]:
    """``project.godot`` / ``.import`` as sections of raw values (one-line values only; enough here)."""
    sections: dict[str, dict[str, str]] = {"": {}}
    current = sections[""]
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith(";"):
            continue
        if stripped.startswith("[") and stripped.endswith("]") and "=" not in stripped:
            current = sections.setdefault(stripped[1:-1], {})
        elif "=" in line and not line[:1].isspace():
            key, _, value = line.partition("=")
            current[key.strip()] = value.strip()
    return sections


def _unquote(value: str) -> str:
    return value[1:-1] if len(value) >= 2 and value[0] == value[-1] == '"' else value


def _references(path: str, text: str) -> list[str]:
    """The ``res://`` paths a scene, resource or script names (not in GDScript comments, no templates)."""
    if path.endswith(".gd"):
        text = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    found = []
    for ref in _RES.findall(text):
        rel = ref.removeprefix("res://").split("::")[0]
        if rel and not any(c in rel for c in "%{}*") and not rel.endswith("/"):
            found.append(rel)
    return found


class _Collector:
    def __init__(self, tree: SourceTree, prefix: str) -> None:
        self.tree = tree
        self.prefix = prefix
        sizes = tree.sizes()
        self.sizes = {p[len(prefix):]: s for p, s in sizes.items() if p.startswith(prefix)}
        self.lower: dict[str, list[str]] = {}
        for p in self.sizes:
            self.lower.setdefault(p.lower(), []).append(p)
        self.project = Project()
        self.uids: dict[str, str] = {}
        self.classes: list[tuple[str, str, str, bool]] = []
        self.total = 0
        self.raw_pictures: set[str] = set()
        """Pictures the engine opens as plain files, not through an import (the window icon)."""

    # -------------------------------------------------------------- reading

    def resolve(self, path: str) -> str | None:
        """The sources' name for ``path``: itself, or the one file whose name differs only in case."""
        if path in self.sizes:
            return path
        matches = self.lower.get(path.lower(), [])
        return matches[0] if len(matches) == 1 else None

    def read(self, path: str) -> bytes | None:
        return self.tree.read(self.prefix + path)

    def add(self, path: str, data: bytes) -> None:
        if path in self.project.files:
            return
        if len(self.project.files) >= MAX_FILES or self.total + len(data) > MAX_PACK_BYTES:
            raise ProjectError(f"the project needs more than {MAX_FILES} files or "
                               f"{MAX_PACK_BYTES // 2**20} MiB; not packing it")
        self.project.files[path] = data
        self.total += len(data)

    def _renamed(self, wanted: str, actual: str, by: str) -> None:
        if wanted != actual:
            self.project.notes.append(f"{by} names res://{wanted}; the sources hold res://{actual}: "
                                      f"packed under the name {by} uses")

    # -------------------------------------------------------------- walking

    def collect(self, roots: list[str], optional: list[str]) -> Project:
        queue: deque[tuple[str, str]] = deque((r, "project.godot") for r in roots)
        seen: set[str] = set()
        optional_set = set(optional)
        queue.extend((o, "project.godot") for o in optional)
        while queue:
            path, by = queue.popleft()
            if path in seen:
                continue
            seen.add(path)
            for ref in self.visit(path, by, optional=path in optional_set and path not in roots):
                queue.append((ref, path.rsplit("/", 1)[-1]))
        self.add(".godot/uid_cache.bin", uid_cache(self.uids))
        self.add(".godot/global_script_class_cache.cfg", class_cache(self.classes))
        return self.project

    def visit(self, path: str, by: str, optional: bool = False) -> list[str]:
        lower = path.lower()
        if optional and self.resolve(path) is None and self.resolve(path + ".import") is None:
            if path in self.raw_pictures and lower.endswith((".png", ".svg")):
                self.stand_in_file(path, by)
            return []  # project.godot names things only the editor uses (a plugin)
        if path.startswith(".godot/imported/") and path not in self.sizes:
            source = self.imported_from(path)
            if source is not None:
                self.picture(source, by)
                return []
        if lower.endswith(PICTURES) or self.resolve(path + ".import") is not None:
            self.picture(path, by)
            return []
        actual = self.resolve(path)
        data = self.read(actual) if actual is not None else None
        if data is None:
            if not optional:
                absent = "is not in the sources" if actual is None else "is missing from the sources (a large file?)"
                self.project.warnings.append(f"res://{path} (named by {by}) {absent}; left out")
            return []
        self._renamed(path, actual or path, by)
        self.add(path, data)
        if not lower.endswith(TEXT_RESOURCES):
            return []
        text = data.decode("utf-8", errors="replace")
        if lower.endswith(".gd"):
            self.script(path, text)
        else:
            own = re.search(r'^\[gd_(?:scene|resource)\b[^\]]*\buid="(uid://[a-z0-9]+)"', text, re.MULTILINE)
            if own:
                self.uids[own[1]] = f"res://{path}"
            for attrs in _EXT.findall(text):
                fields = dict(_ATTR.findall(attrs))
                if "uid" in fields and fields.get("path", "").startswith("res://") and fields["uid"].startswith(
                        "uid://") and re.fullmatch(r"uid://[a-z0-9]+", fields["uid"]):
                    self.uids.setdefault(fields["uid"], fields["path"])
        return _references(path, text)

    def stand_in_file(self, path: str, by: str) -> None:
        """A picture the engine opens as a plain file (the window icon): a grey square of ours."""
        side = STAND_IN_SIZE
        if path.lower().endswith(".svg"):
            data = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{side}" height="{side}">'
                    f'<rect width="{side}" height="{side}" fill="#808080"/></svg>\n').encode()
        else:
            out = io.BytesIO()
            Image.new("RGBA", (side, side), STAND_IN_GREY).save(out, format="PNG")
            data = out.getvalue()
        self.add(path, data)
        self.project.warnings.append(f"res://{path} (named by {by}, opened by the engine at start) is not in the "
                                     f"sources; packed a stand-in made by this builder: a flat grey {side} x {side} "
                                     "square")

    def imported_from(self, ctex: str) -> str | None:
        """The picture whose .import names ``ctex`` (``.godot/imported/<picture>-<hash>.ctex``)."""
        picture = ctex.rsplit("/", 1)[-1].rsplit("-", 1)[0]
        for candidate in self.sizes:
            if candidate.rsplit("/", 1)[-1] != picture + ".import":
                continue
            data = self.read(candidate)
            remap = parse_settings(data.decode("utf-8", errors="replace")).get("remap", {}) if data else {}
            if _unquote(remap.get("path", "")) == "res://" + ctex:
                return candidate.removesuffix(".import")
        return None

    def script(self, path: str, text: str) -> None:
        name = _CLASS_NAME.search(text)
        if name:
            base = _EXTENDS.search(text)
            self.classes.append((name[1], base[1] if base else "RefCounted", f"res://{path}",
                                 bool(_TOOL.search(text))))

    def picture(self, path: str, by: str) -> None:
        """The .import under the name ``by`` uses and the .ctex it names (or a stand-in)."""
        import_actual = self.resolve(path + ".import")
        import_data = self.read(import_actual) if import_actual else None
        if import_data is not None and import_actual is not None:
            if self.resolve(path) is None:
                self._renamed(path + ".import", import_actual, by)
            settings = parse_settings(import_data.decode("utf-8", errors="replace"))
            remap = settings.get("remap", {})
            importer = _unquote(remap.get("importer", ""))
            target = _unquote(remap.get("path", ""))
            if importer != "texture" or not target.startswith("res://"):
                self.project.warnings.append(
                    f"res://{path} (named by {by}) is imported as {importer or 'something'} we do not build; left out")
                return
            uid = _unquote(remap.get("uid", ""))
            if re.fullmatch(r"uid://[a-z0-9]+", uid):
                self.uids[uid] = f"res://{path}"
            import_text = import_data
            params = settings.get("params", {})
        else:
            target = f"res://.godot/imported/{path.rsplit('/', 1)[-1]}-webgame.ctex"
            import_text = (f'[remap]\n\nimporter="texture"\ntype="CompressedTexture2D"\npath="{target}"\n'
                           'metadata={\n"vram_texture": false\n}\n').encode()
            params = {}
        ctex_path = target.removeprefix("res://")
        if ctex_path in self.project.files:
            self.add(path + ".import", import_text)
            return
        actual = self.resolve(path)
        source = self.read(actual) if actual is not None else None
        image = None
        if source is not None and actual is not None:
            self._renamed(path, actual, by)
            try:
                image = apply_import_options(decode_picture(source, f"res://{actual}"), params)
            except TextureError as exc:
                self.project.warnings.append(f"{exc}; packed a stand-in instead")
        if image is None:
            if source is None:
                absent = "is not in the sources" if actual is None else "is missing from the sources (a large file?)"
                self.project.warnings.append(
                    f"res://{path} (named by {by}) {absent}; packed a stand-in made by this builder: a flat grey "
                    f"{STAND_IN_SIZE} x {STAND_IN_SIZE} square")
            image = Image.new("RGBA", (STAND_IN_SIZE, STAND_IN_SIZE), STAND_IN_GREY)
        self.add(ctex_path, ctex_bytes(image))
        self.add(path + ".import", import_text)


def project_root(tree: SourceTree) -> str:
    """The folder (as a path prefix, '' or 'dir/') holding the shallowest ``project.godot``."""
    candidates = [p for p, size in tree.sizes().items() if p.rsplit("/", 1)[-1] == "project.godot"
                  and size is not None]
    if not candidates:
        raise ProjectError(f"{tree.label} holds no project.godot: not a Godot project")
    best = min(candidates, key=lambda p: (p.count("/"), p))
    return best[: -len("project.godot")]


@dataclass(frozen=True)
class Settings:
    prefix: str
    raw: bytes
    sections: dict[str, dict[str, str]]
    main_scene: str
    features: tuple[str, ...]


def read_settings(tree: SourceTree) -> Settings:
    """The project's ``project.godot``: where it is, its main scene and features; ProjectError if unusable."""
    prefix = project_root(tree)
    raw = tree.read(prefix + "project.godot") or b""
    sections = parse_settings(raw.decode("utf-8", errors="replace"))
    if sections[""].get("config_version") != "5":
        raise ProjectError(f"{tree.label}: project.godot is not a Godot 4 project (config_version "
                           f"{sections[''].get('config_version', 'missing')}, Godot 4 writes 5)")
    main = _unquote(sections.get("application", {}).get("run/main_scene", ""))
    if not main.startswith("res://"):
        raise ProjectError(f"{tree.label}: project.godot names no main scene (application/run/main_scene)")
    features = tuple(re.findall(r'"([^"]+)"', sections.get("application", {}).get("config/features", "")))
    return Settings(prefix, raw, sections, main, features)


def collect_project(tree: SourceTree) -> Project:
    """Every file the engine needs to run the project in ``tree``, as pack paths and bytes."""
    found = read_settings(tree)
    prefix, raw, settings, main = found.prefix, found.raw, found.sections, found.main_scene
    text = raw.decode("utf-8", errors="replace")
    autoloads = [_unquote(v).lstrip("*") for v in settings.get("autoload", {}).values()]
    roots = [main.removeprefix("res://")] + [a.removeprefix("res://") for a in autoloads if a.startswith("res://")]
    optional = [r for r in _references("project.godot", text) if r not in roots]
    collector = _Collector(tree, prefix)
    for key in RAW_PICTURE_SETTINGS:
        value = _unquote(settings.get("application", {}).get(key, ""))
        if value.startswith("res://"):
            collector.raw_pictures.add(value.removeprefix("res://"))
    if collector.resolve(roots[0]) is None:
        raise ProjectError(f"{tree.label}: the main scene {main} is not in the sources")
    collector.add("project.godot", raw)
    project = collector.collect(roots, optional)
    project.main_scene = main
    project.features = found.features
    return project
