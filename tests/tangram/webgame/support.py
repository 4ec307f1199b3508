"""A small Godot 4 project and fake web templates written by the tests (nothing of GAIPS or Godot).

The project has what the builder must handle in the real game: a main scene with a script, a
texture named with other letter case than its file, a texture whose picture is missing (only its
.import is there), a CompressedTexture2D sub-resource pointing straight at an imported .ctex, a
script with class_name, a preload, a commented-out path, and an icon that is not there.
"""

from __future__ import annotations

import io
import tarfile
import zipfile
from pathlib import Path

from PIL import Image

MAIN_SCENE = """[gd_scene load_steps=5 format=3 uid="uid://cmainscene1"]

[ext_resource type="Script" path="res://game/Scenes/main.gd" id="1_a"]
[ext_resource type="Texture2D" uid="uid://bdotdotdot1" path="res://art/dot.png" id="2_b"]
[ext_resource type="Texture2D" uid="uid://bgonegone22" path="res://art/gone.png" id="3_c"]
[ext_resource type="PackedScene" uid="uid://cpiece00001" path="res://game/Scenes/piece.tscn" id="4_d"]

[sub_resource type="CompressedTexture2D" id="CompressedTexture2D_x"]
load_path = "res://.godot/imported/stripe.png-0123456789abcdef0123456789abcdef.ctex"

[node name="Main" type="Node2D"]
script = ExtResource("1_a")

[node name="Dot" type="Sprite2D" parent="."]
texture = ExtResource("2_b")
"""
PIECE_SCENE = """[gd_scene format=3 uid="uid://cpiece00001"]

[node name="Piece" type="Polygon2D"]
"""
MAIN_SCRIPT = """extends Node2D
class_name TestMain

const OTHER = preload("res://game/Scenes/piece.tscn")
#image.save_png("res://not_a_resource.png")

func _ready():
\tprint("ready")
"""
UNUSED_SCRIPT = "extends Node\n"


def import_file(picture: str, ctex: str, uid: str) -> str:
    return (f'[remap]\n\nimporter="texture"\ntype="CompressedTexture2D"\nuid="{uid}"\npath="res://.godot/imported/'
            f'{ctex}"\nmetadata={{\n"vram_texture": false\n}}\n\n[deps]\n\nsource_file="res://{picture}"\n')


def picture_bytes(size: tuple[int, int], mode: str = "RGBA") -> bytes:
    image = Image.new(mode, size)
    pixels = image.load()
    for x in range(size[0]):
        for y in range(size[1]):
            value = (x * 37 + y * 11) % 256
            pixels[x, y] = {"RGBA": (value, 255 - value, x % 256, 128 + y % 128), "RGB": (value, y % 256, 7),
                            "L": value}[mode]
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def write_project(root: Path, features: str = '"4.2", "GL Compatibility"') -> Path:
    """The test project in ``root`` (returned)."""
    files: dict[str, str | bytes] = {
        "project.godot": ("config_version=5\n\n[application]\n\nconfig/name=\"test\"\n"
                          'run/main_scene="res://game/Scenes/Main_scene.tscn"\n'
                          f"config/features=PackedStringArray({features})\n"
                          'config/icon="res://icon.svg"\n\n[editor_plugins]\n\n'
                          'enabled=PackedStringArray("res://addons/nothing/plugin.cfg")\n'),
        "game/Scenes/Main_scene.tscn": MAIN_SCENE,
        "game/Scenes/piece.tscn": PIECE_SCENE,
        "game/Scenes/main.gd": MAIN_SCRIPT,
        "game/Scenes/unused.gd": UNUSED_SCRIPT,
        "art/Dot.png": picture_bytes((12, 9)),
        "art/Dot.png.import": import_file("art/Dot.png", "Dot.png-aaaa.ctex", "uid://bdotdotdot1"),
        "art/gone.png.import": import_file("art/gone.png", "gone.png-bbbb.ctex", "uid://bgonegone22"),
        "art/stripe.png": picture_bytes((5, 3), "RGB"),
        "art/stripe.png.import": import_file("art/stripe.png", "stripe.png-0123456789abcdef0123456789abcdef.ctex",
                                             "uid://bstripe0001"),
        "art/unused.png": picture_bytes((4, 4), "L"),
    }
    for name, data in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data if isinstance(data, bytes) else data.encode())
    return root


def fake_wasm(version: str = "4.6.stable.official") -> bytes:
    """Not an engine: a wasm header and the version string the template check looks for."""
    return b"\0asm\x01\0\0\0" + b"\0" * 64 + f"Godot Engine v{version}.0123abcd".encode() + b"\0" * 64


ENGINE_JS = b"// a stand-in for the engine's loader, written by the tests\nvar Engine = function () {};\n"


def write_template(folder: Path, version: str = "4.6.stable.official", name: str = "index") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.js").write_bytes(ENGINE_JS)
    (folder / f"{name}.wasm").write_bytes(fake_wasm(version))
    (folder / f"{name}.audio.worklet.js").write_bytes(b"// worklet\n")
    (folder / f"{name}.html").write_bytes(b"<html>not ours, not served</html>")
    return folder


def write_tpz(path: Path, version: str = "4.6.stable.official") -> Path:
    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w") as z:
        z.writestr("godot.js", ENGINE_JS)
        z.writestr("godot.wasm", fake_wasm(version))
        z.writestr("godot.audio.worklet.js", b"// worklet\n")
        z.writestr("godot.html", b"<html></html>")
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("templates/version.txt", version.rsplit(".", 1)[0])
        z.writestr("templates/web_nothreads_release.zip", inner.getvalue())
        z.writestr("templates/web_release.zip", b"not used")
    return path


def write_npm_tarball(path: Path, version: str = "4.6.stable.official") -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for name, data in (("package/godot/index.js", ENGINE_JS), ("package/godot/index.wasm", fake_wasm(version)),
                           ("package/godot/index.pck", b"GDPC"), ("package/package.json", b"{}")):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path
