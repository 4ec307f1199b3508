"""Godot 4 main packs (``.pck``): write one from a list of files, read one back.

The layout, from Godot's ``core/io/file_access_pack.cpp`` (reader) and ``editor/export`` (writer),
all integers little-endian:

- header: magic ``GDPC``, pack format version, engine major/minor/patch, pack flags, the files'
  base offset (u64), then in format 3 the directory's offset (u64), then 16 reserved u32;
- format 2 (Godot 4.0 to 4.4): the directory follows the header, the files follow the directory;
  format 3 (Godot 4.5 and later; they read format 2 too): the files follow the header, the
  directory is at the end;
- directory: file count, then per file its path (u32 length, UTF-8 padded with NULs to a multiple
  of 4; with ``res://`` before Godot 4.4, without from 4.4 on), offset from the files' base
  (u64), size (u64), MD5 of the contents, flags.

Offsets are relative to the pack's start (``PACK_REL_FILEBASE``); every file starts on a
``ALIGNMENT`` boundary, as Godot's exporter writes them.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

MAGIC = 0x43504447  # "GDPC"
PACK_REL_FILEBASE = 1 << 1
FORMATS = (2, 3)
ALIGNMENT = 16
RESERVED_WORDS = 16
MAX_FILES = 100_000
MAX_PATH_BYTES = 4096


class PackError(ValueError):
    """Not a Godot main pack we can read, or files we cannot pack; one line."""


@dataclass(frozen=True)
class PackEntry:
    path: str
    """As the engine sees it, without ``res://`` (``tangran/Scenes/Main_scene.tscn``)."""
    offset: int
    """From the pack's start."""
    size: int
    md5: bytes
    flags: int = 0


@dataclass(frozen=True)
class PackIndex:
    format: int
    engine: tuple[int, int, int]
    flags: int
    entries: tuple[PackEntry, ...]

    def entry(self, path: str) -> PackEntry:
        for e in self.entries:
            if e.path == path:
                return e
        raise KeyError(path)


def pack_path(path: str) -> str:
    """``res://a/b.png`` and ``a/b.png`` both name ``a/b.png`` in a pack."""
    path = path.removeprefix("res://")
    if not path or path.startswith("/") or any(part in ("", ".", "..") for part in path.split("/")):
        raise PackError(f"{path!r} is not a path inside a Godot project")
    return path


def _align(n: int) -> int:
    return -(-n // ALIGNMENT) * ALIGNMENT


def _padded_path(path: str) -> bytes:
    raw = path.encode("utf-8")
    if len(raw) > MAX_PATH_BYTES:
        raise PackError(f"path too long for a pack: {path[:80]}...")
    return raw + b"\0" * (-len(raw) % 4)


def engine_pack_format(engine: tuple[int, int, int]) -> int:
    """The pack format an engine's own exporter writes: 3 from Godot 4.5 on, 2 for Godot 4.0 to 4.4."""
    return 3 if engine[:2] >= (4, 5) else 2


def pack_bytes(files: Iterable[tuple[str, bytes]], engine: tuple[int, int, int], fmt: int | None = None) -> bytes:
    """A main pack for ``engine`` holding ``files`` (path, contents), sorted by path.

    ``fmt`` defaults to the format the engine's own exporter writes; paths carry ``res://`` for
    engines before 4.4, which look files up by that name.
    """
    fmt = engine_pack_format(engine) if fmt is None else fmt
    prefix = "res://" if engine[:2] < (4, 4) else ""
    if fmt not in FORMATS:
        raise PackError(f"pack format {fmt} is not one we write (we write {FORMATS})")
    contents: dict[str, bytes] = {}
    for path, data in files:
        key = pack_path(path)
        if key in contents:
            raise PackError(f"{key} is packed twice")
        contents[key] = data
    if len(contents) > MAX_FILES:
        raise PackError(f"{len(contents)} files is more than a pack of ours holds ({MAX_FILES})")
    names = sorted(contents)

    header_size = 4 * 6 + 8 + (8 if fmt == 3 else 0) + 4 * RESERVED_WORDS
    directory_size = 4 + sum(4 + len(_padded_path(prefix + n)) + 8 + 8 + 16 + 4 for n in names)
    base = _align(header_size + (directory_size if fmt == 2 else 0))
    offsets: dict[str, int] = {}
    body = bytearray()
    for name in names:
        offsets[name] = len(body)
        body += contents[name]
        body += b"\0" * (_align(len(body)) - len(body))

    directory = bytearray(struct.pack("<I", len(names)))
    for name in names:
        data = contents[name]
        raw = _padded_path(prefix + name)
        directory += struct.pack("<I", len(raw)) + raw
        directory += struct.pack("<QQ", offsets[name], len(data)) + hashlib.md5(data).digest()
        directory += struct.pack("<I", 0)

    header = bytearray(struct.pack("<IIIIII", MAGIC, fmt, *engine, PACK_REL_FILEBASE))
    header += struct.pack("<Q", base)
    if fmt == 3:
        header += struct.pack("<Q", base + len(body))
    header += b"\0" * (4 * RESERVED_WORDS)
    if fmt == 2:
        header += directory
    header += b"\0" * (base - len(header))
    out = header + body
    if fmt == 3:
        out += directory
    return bytes(out)


def write_pack(target: Path, files: Iterable[tuple[str, bytes]], engine: tuple[int, int, int],
               fmt: int | None = None) -> int:
    """Write the pack to ``target`` (via a temporary file, so a reader never sees half a pack)."""
    data = pack_bytes(files, engine, fmt)
    tmp = target.with_name(target.name + ".tmp")
    tmp.write_bytes(data)
    tmp.replace(target)
    return len(data)


def read_index(data: bytes) -> PackIndex:
    """The directory of a standalone main pack."""

    def need(end: int) -> None:
        if end > len(data):
            raise PackError("pack is truncated")

    need(24)
    magic, fmt, major, minor, patch, flags = struct.unpack_from("<6I", data, 0)
    if magic != MAGIC:
        raise PackError("not a Godot main pack (no GDPC magic at its start)")
    if fmt not in FORMATS:
        raise PackError(f"pack format {fmt} is not one we read ({FORMATS})")
    need(40)
    (base,) = struct.unpack_from("<Q", data, 24)
    if fmt == 3:
        (dir_at,) = struct.unpack_from("<Q", data, 32)
    else:
        dir_at = 32 + 4 * RESERVED_WORDS
    if not flags & PACK_REL_FILEBASE:
        raise PackError("pack offsets are not relative to the pack (an embedded pack?)")
    if flags & 1:
        raise PackError("pack directory is encrypted")
    need(dir_at + 4)
    (count,) = struct.unpack_from("<I", data, dir_at)
    if count > MAX_FILES:
        raise PackError(f"pack claims {count} files")
    pos = dir_at + 4
    entries = []
    for _ in range(count):
        need(pos + 4)
        (length,) = struct.unpack_from("<I", data, pos)
        if length > MAX_PATH_BYTES:
            raise PackError("pack holds a path longer than we read")
        pos += 4
        need(pos + length + 36)
        path = data[pos:pos + length].rstrip(b"\0").decode("utf-8").removeprefix("res://")
        pos += length
        offset, size = struct.unpack_from("<QQ", data, pos)
        md5 = data[pos + 16:pos + 32]
        (file_flags,) = struct.unpack_from("<I", data, pos + 32)
        pos += 36
        if base + offset + size > len(data):
            raise PackError(f"{path} lies past the pack's end")
        entries.append(PackEntry(path, base + offset, size, md5, file_flags))
    return PackIndex(fmt, (major, minor, patch), flags, tuple(entries))


def read_file(data: bytes, entry: PackEntry) -> bytes:
    """One file's contents, checked against the MD5 the directory holds."""
    content = data[entry.offset:entry.offset + entry.size]
    if entry.md5 != bytes(16) and hashlib.md5(content).digest() != entry.md5:
        raise PackError(f"{entry.path}: contents do not match the pack's MD5")
    return content


def read_pack(path: Path) -> tuple[PackIndex, dict[str, bytes]]:
    """Every file of a pack on disk, by path."""
    data = path.read_bytes()
    index = read_index(data)
    return index, {e.path: read_file(data, e) for e in index.entries}
