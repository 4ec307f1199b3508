"""Building the game from a small Godot project of the tests' own, read back with our own reader."""

from __future__ import annotations

import io
import json
import shutil
import struct
import subprocess

import pytest
from hypothesis import given
from hypothesis import strategies as st
from PIL import Image

from agent.games.tangram.webgame.build import BuildError, build_game, plan_build
from agent.games.tangram.webgame.ctex import read_ctex
from agent.games.tangram.webgame.pck import read_pack
from agent.games.tangram.webgame.project import collect_project, uid_to_id
from agent.games.tangram.webgame.source import FolderTree, GitTree
from tests.tangram.webgame.support import write_project, write_template

# Godot's ResourceUID::id_to_text alphabet: 'a'..'y' then '0'..'8' (base 34).
ALPHABET = "abcdefghijklmnopqrstuvwxy012345678"


def id_to_text(number: int) -> str:
    digits = ""
    while True:
        digits = ALPHABET[number % 34] + digits
        number //= 34
        if not number:
            return "uid://" + digits


@given(st.integers(min_value=0, max_value=2**63 - 1))
def test_uid_text_turns_into_the_id_godot_gives_it(number):
    assert uid_to_id(id_to_text(number)) == number


def uid_cache(data: bytes) -> dict[int, str]:
    (count,) = struct.unpack_from("<I", data)
    pos, out = 4, {}
    for _ in range(count):
        uid, length = struct.unpack_from("<qI", data, pos)
        out[uid] = data[pos + 12:pos + 12 + length].decode()
        pos += 12 + length
    assert pos == len(data)
    return out


def test_project_holds_what_the_engine_loads_and_nothing_else(tmp_path):
    project = collect_project(FolderTree(write_project(tmp_path / "p")))
    files = project.files
    assert set(files) == {
        "project.godot", "game/Scenes/Main_scene.tscn", "game/Scenes/main.gd", "game/Scenes/piece.tscn",
        "art/dot.png.import", ".godot/imported/Dot.png-aaaa.ctex",
        "art/gone.png.import", ".godot/imported/gone.png-bbbb.ctex",
        "art/stripe.png.import", ".godot/imported/stripe.png-0123456789abcdef0123456789abcdef.ctex",
        "icon.svg", ".godot/uid_cache.bin", ".godot/global_script_class_cache.cfg",
    }  # no unused.gd, no unused.png, no source pictures, no plugin that is not there
    assert files["game/Scenes/main.gd"] == (tmp_path / "p/game/Scenes/main.gd").read_bytes()
    assert project.main_scene == "res://game/Scenes/Main_scene.tscn"
    assert project.engine_feature == (4, 2)


def test_pictures_are_lossless_and_missing_ones_stand_in_with_a_warning(tmp_path):
    project = collect_project(FolderTree(write_project(tmp_path / "p")))
    dot = read_ctex(project.files[".godot/imported/Dot.png-aaaa.ctex"])
    original = Image.open(tmp_path / "p/art/Dot.png")
    assert Image.open(io.BytesIO(dot.png)).tobytes() == original.tobytes() and (dot.width, dot.height) == (12, 9)
    gone = Image.open(io.BytesIO(read_ctex(project.files[".godot/imported/gone.png-bbbb.ctex"]).png))
    assert gone.size == (64, 64) and gone.getcolors() == [(64 * 64, (128, 128, 128, 255))]
    assert any("res://art/gone.png" in w and "stand-in" in w for w in project.warnings)
    assert any("res://icon.svg" in w and "stand-in" in w for w in project.warnings)
    assert project.files["icon.svg"].startswith(b"<svg")
    assert len(project.warnings) == 2
    assert project.notes == ["Main_scene.tscn names res://art/dot.png; the sources hold res://art/Dot.png: "
                             "packed under the name Main_scene.tscn uses"]


def test_caches_name_every_uid_and_class(tmp_path):
    files = collect_project(FolderTree(write_project(tmp_path / "p"))).files
    uids = uid_cache(files[".godot/uid_cache.bin"])
    assert uids == {uid_to_id("uid://cmainscene1"): "res://game/Scenes/Main_scene.tscn",
                    uid_to_id("uid://cpiece00001"): "res://game/Scenes/piece.tscn",
                    uid_to_id("uid://bdotdotdot1"): "res://art/dot.png",
                    uid_to_id("uid://bgonegone22"): "res://art/gone.png",
                    uid_to_id("uid://bstripe0001"): "res://art/stripe.png"}
    classes = files[".godot/global_script_class_cache.cfg"].decode()
    assert '"class": &"TestMain"' in classes and '"base": &"Node2D"' in classes
    assert '"path": "res://game/Scenes/main.gd"' in classes


def test_a_bare_git_mirror_gives_the_same_project(tmp_path):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    work = write_project(tmp_path / "work")
    env = ["-c", "user.name=t", "-c", "user.email=t@example.org"]
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    subprocess.run(["git", "-C", str(work), "add", "."], check=True)
    subprocess.run(["git", *env, "-C", str(work), "commit", "-q", "-m", "t"], check=True)
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(tmp_path / "mirror.git")], check=True)
    from_git = collect_project(GitTree(tmp_path / "mirror.git"))
    from_folder = collect_project(FolderTree(work))
    assert from_git.files == from_folder.files


def test_build_writes_a_pack_the_reader_opens_and_a_page_of_ours(tmp_path):
    template = write_template(tmp_path / "tpl")
    built = build_game(write_project(tmp_path / "p"), template, cache=tmp_path / "cache")
    assert built.kind == "built from the sources" and built.engine == "4.6.stable"
    names = {p.name for p in built.folder.iterdir()}
    assert names == {"index.html", "webgame.js", "webgame.css", "webgame.json", "index.js", "index.wasm",
                     "index.audio.worklet.js", "index.pck", "build.json"}
    index, files = read_pack(built.folder / "index.pck")
    assert index.format == 3 and index.engine == (4, 6, 0)
    assert files == collect_project(FolderTree(tmp_path / "p")).files
    config = json.loads((built.folder / "webgame.json").read_text())
    assert config["fileSizes"]["index.pck"] == (built.folder / "index.pck").stat().st_size
    assert b"index.js" in (built.folder / "index.html").read_bytes()


def test_a_second_build_is_the_cached_one_and_a_changed_source_rebuilds(tmp_path):
    template = write_template(tmp_path / "tpl")
    project = write_project(tmp_path / "p")
    first = build_game(project, template, cache=tmp_path / "cache")
    stamp = (first.folder / "index.pck").stat().st_mtime_ns
    again = build_game(project, template, cache=tmp_path / "cache")
    assert again.folder == first.folder and (again.folder / "index.pck").stat().st_mtime_ns == stamp
    (project / "game/Scenes/main.gd").write_text(MAIN_CHANGED)
    changed = build_game(project, template, cache=tmp_path / "cache")
    assert changed.folder != first.folder
    assert read_pack(changed.folder / "index.pck")[1]["game/Scenes/main.gd"] == MAIN_CHANGED.encode()


MAIN_CHANGED = "extends Node2D\n"


def test_a_complete_own_web_build_is_served_as_it_is(tmp_path):
    project = write_project(tmp_path / "p")
    exe = project / "exe"
    exe.mkdir()
    for name, data in {"index.html": b"<html>theirs</html>", "index.js": b"//", "index.wasm": b"\0asm....",
                       "index.pck": b"GDPC....", "index.worker.js": b"//w"}.items():
        (exe / name).write_bytes(data)
    built = build_game(project, None, cache=tmp_path / "cache")
    assert built.kind == "own web build"
    assert (built.folder / "index.html").read_bytes() == b"<html>theirs</html>"
    assert (built.folder / "index.worker.js").is_file()


def test_an_incomplete_own_build_needs_a_template(tmp_path):
    project = write_project(tmp_path / "p")
    (project / "exe").mkdir()
    (project / "exe/index.html").write_text("<html></html>")
    (project / "exe/index.pck").write_text("version https://git-lfs.github.com/spec/v1\n")  # an LFS pointer
    with pytest.raises(BuildError, match=r"no complete web build in exe/ \(index.js, index.wasm missing\)"):
        plan_build(project, None)


def _settings(text: str):
    def make(folder):
        (folder / "project.godot").write_text(text)
        return folder
    return make


@pytest.mark.parametrize(("make", "message"), [
    (lambda p: p, "not a GAIPS Tangram clone .* holds no project.godot"),
    (_settings("config_version=4\n"), "not a Godot 4 project"),
    (_settings('config_version=5\n[application]\nrun/main_scene="res://m.tscn"\n'), "not the GAIPS Tangram game"),
])
def test_a_folder_that_is_no_gaips_clone_is_one_line(tmp_path, make, message):
    folder = tmp_path / "x"
    folder.mkdir()
    with pytest.raises(BuildError, match=message) as info:
        plan_build(make(folder), write_template(tmp_path / "tpl"))
    assert "\n" not in str(info.value)


def test_a_build_finished_first_by_another_process_is_kept(tmp_path):
    from agent.games.tangram.webgame.build import build_from_sources
    from agent.games.tangram.webgame.template import open_template

    template = write_template(tmp_path / "tpl")
    project = write_project(tmp_path / "p")
    first = build_game(project, template, cache=tmp_path / "cache")
    stamp = (first.folder / "index.pck").stat().st_mtime_ns
    # A second process that started before the first one finished builds the same key again.
    build_from_sources(FolderTree(project), open_template(template, tmp_path / "cache"), first.folder, replace=False)
    assert (first.folder / "index.pck").stat().st_mtime_ns == stamp
    assert sorted(p.name for p in first.folder.parent.iterdir() if p.name.startswith(first.folder.name)) == \
        [first.folder.name]  # its temporary folder is gone
    forced = build_game(project, template, cache=tmp_path / "cache", target=first.folder)
    assert (forced.folder / "index.pck").stat().st_mtime_ns != stamp
