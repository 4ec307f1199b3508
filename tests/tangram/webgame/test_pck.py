"""Godot main packs: what we write reads back with our own reader, in both formats the engines read."""

from __future__ import annotations

import hashlib
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent.games.tangram.webgame.pck import (
    ALIGNMENT,
    MAGIC,
    PackError,
    engine_pack_format,
    pack_bytes,
    read_file,
    read_index,
)

FILES = {
    "project.godot": b"config_version=5\n",
    "game/Scenes/Main_scene.tscn": b"[gd_scene format=3]\n",
    ".godot/imported/a b.png-1.ctex": bytes(range(256)) * 3,
    "empty.txt": b"",
    "\u00fcnicode/T\u00edtulo.gd": "extends Node # \u00e9\n".encode(),
}


@pytest.mark.parametrize(("engine", "fmt"), [((4, 6, 0), 3), ((4, 5, 1), 3), ((4, 4, 1), 2), ((4, 2, 2), 2)])
def test_pack_reads_back_paths_sizes_md5s_and_contents(engine, fmt):
    data = pack_bytes(FILES.items(), engine)
    index = read_index(data)
    assert (index.format, index.engine) == (fmt, engine)
    assert [e.path for e in index.entries] == sorted(FILES)
    for entry in index.entries:
        assert entry.size == len(FILES[entry.path])
        assert entry.md5 == hashlib.md5(FILES[entry.path]).digest()
        assert entry.offset % ALIGNMENT == 0
        assert read_file(data, entry) == FILES[entry.path]


def test_header_is_what_the_engine_checks():
    data = pack_bytes(FILES.items(), (4, 6, 0))
    magic, fmt, major, minor, patch, flags = struct.unpack_from("<6I", data)
    assert (magic, fmt, major, minor, patch) == (MAGIC, 3, 4, 6, 0)
    assert flags == 2  # offsets relative to the pack, directory not encrypted
    base, directory = struct.unpack_from("<QQ", data, 24)
    assert base % ALIGNMENT == 0 and base >= 40 + 64
    (count,) = struct.unpack_from("<I", data, directory)
    assert count == len(FILES) and directory > base


def test_engines_before_4_4_get_res_paths_and_newer_ones_plain_paths():
    old = pack_bytes([("a/b.gd", b"x")], (4, 3, 0))
    new = pack_bytes([("a/b.gd", b"x")], (4, 6, 0))
    assert b"res://a/b.gd" in old and b"res://" not in new
    assert read_index(old).entries[0].path == read_index(new).entries[0].path == "a/b.gd"


def test_each_engine_gets_its_own_exporters_format():
    assert [engine_pack_format(v) for v in [(4, 0, 0), (4, 4, 1), (4, 5, 0), (4, 6, 0)]] == [2, 2, 3, 3]


def test_res_prefix_is_dropped_and_bad_paths_refused():
    assert read_index(pack_bytes([("res://x.gd", b"1")], (4, 6, 0))).entries[0].path == "x.gd"
    for bad in ["", "/abs.gd", "a/../b.gd", "a//b.gd", "res://"]:
        with pytest.raises(PackError):
            pack_bytes([(bad, b"1")], (4, 6, 0))
    with pytest.raises(PackError, match="twice"):
        pack_bytes([("x.gd", b"1"), ("res://x.gd", b"2")], (4, 6, 0))


def test_reader_refuses_what_is_not_a_sound_pack():
    data = bytearray(pack_bytes(FILES.items(), (4, 6, 0)))
    with pytest.raises(PackError, match="GDPC"):
        read_index(b"PK\x03\x04" + bytes(data[4:]))
    with pytest.raises(PackError, match=r"truncated|past"):
        read_index(bytes(data[:60]))
    entry = read_index(bytes(data)).entry("project.godot")
    data[entry.offset] ^= 0xFF
    with pytest.raises(PackError, match="MD5"):
        read_file(bytes(data), entry)


@settings(max_examples=40, deadline=None)
@given(st.dictionaries(st.from_regex(r"[a-zA-Z0-9_ ]{1,12}(/[a-zA-Z0-9_.]{1,12}){0,3}", fullmatch=True),
                       st.binary(max_size=300), max_size=12),
       st.sampled_from([(4, 2, 0), (4, 6, 0)]))
def test_any_set_of_files_round_trips(files, engine):
    files = {k: v for k, v in files.items() if all(p not in (".", "..") for p in k.split("/"))}
    data = pack_bytes(files.items(), engine)
    index = read_index(data)
    assert {e.path: read_file(data, e) for e in index.entries} == files
