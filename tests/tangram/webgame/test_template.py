"""Web export templates: every accepted form, its engine version, and one line for each bad one."""

from __future__ import annotations

import pytest

from agent.games.tangram.webgame.template import TemplateError, check_engine, open_template
from tests.tangram.webgame.support import ENGINE_JS, write_npm_tarball, write_template, write_tpz


def test_a_folder_with_index_files(tmp_path):
    template = open_template(write_template(tmp_path / "t"), tmp_path / "cache")
    assert template.version == (4, 6, 0) and template.version_text == "4.6.stable"
    assert sorted(template.runtime_files()) == ["index.audio.worklet.js", "index.js", "index.wasm"]


def test_the_official_tpz_uses_the_no_threads_engine_renamed_to_index(tmp_path):
    template = open_template(write_tpz(tmp_path / "export_templates.tpz", "4.5.1.stable.official"),
                             tmp_path / "cache")
    assert template.version == (4, 5, 1) and template.name == "godot"
    assert sorted(template.runtime_files()) == ["index.audio.worklet.js", "index.js", "index.wasm"]
    assert template.runtime_files()["index.js"].read_bytes() == ENGINE_JS


def test_the_npm_package_as_tarball_or_folder(tmp_path):
    from_tarball = open_template(write_npm_tarball(tmp_path / "pkg.tgz"), tmp_path / "cache")
    assert from_tarball.version == (4, 6, 0)
    write_template(tmp_path / "npm/package/godot")
    assert open_template(tmp_path / "npm", tmp_path / "cache").folder == tmp_path / "npm/package/godot"


@pytest.mark.parametrize(("setup", "message"), [
    (lambda t: (t / "index.wasm").unlink(), r"incomplete: index.wasm missing"),
    (lambda t: (t / "index.js").unlink(), r"incomplete: index.js missing"),
    (lambda t: (t / "index.wasm").write_bytes(b"\0asm but no version"), "not a Godot engine"),
    (lambda t: (t / "index.wasm").write_bytes(b"<html>404</html>"), "not a Godot engine"),
])
def test_a_template_with_files_missing_is_one_line(tmp_path, setup, message):
    folder = write_template(tmp_path / "t")
    setup(folder)
    with pytest.raises(TemplateError, match=message) as info:
        open_template(folder, tmp_path / "cache")
    assert "\n" not in str(info.value)


def test_no_template_at_all(tmp_path):
    with pytest.raises(TemplateError, match="does not exist"):
        open_template(tmp_path / "nope", tmp_path / "cache")
    (tmp_path / "empty").mkdir()
    with pytest.raises(TemplateError, match="not a Godot web template"):
        open_template(tmp_path / "empty", tmp_path / "cache")
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(TemplateError, match="neither a folder, a zip"):
        open_template(tmp_path / "notes.txt", tmp_path / "cache")


@pytest.mark.parametrize(("version", "wanted", "message"), [
    ("3.5.2.stable.official", None, "is Godot 3.5.2.stable; the game needs a Godot 4 web template"),
    ("4.1.stable.official", (4, 2), "is Godot 4.1.stable; the game was made for Godot 4.2"),
])
def test_a_template_of_another_engine_version_is_one_line(tmp_path, version, wanted, message):
    template = open_template(write_template(tmp_path / "t", version), tmp_path / "cache")
    with pytest.raises(TemplateError, match=message):
        check_engine(template, wanted)


def test_a_newer_godot_4_is_fine_for_an_older_project(tmp_path):
    check_engine(open_template(write_template(tmp_path / "t", "4.6.stable.official"), tmp_path / "c"), (4, 2))
