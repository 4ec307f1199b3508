"""The engine and the game's pack, as a participant's browser downloads them: once.

The built game's engine files and main pack are copied, at start, into a folder named after the
SHA-256 of their contents (``/g/<hash>/index.wasm``): a name that never holds other bytes, so
browsers may keep it for a year without asking again (``Cache-Control: immutable``). Each file
also gets a gzip copy beside it, which aiohttp sends to browsers that accept gzip (38 MB of
engine become about 9). Copies are made once per build, in a worker thread, and reused at the
next start.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

ENGINE_FILES = ("index.js", "index.wasm", "index.audio.worklet.js", "index.audio.position.worklet.js")
"""What the Godot web engine loads by its executable's name ("index"); the main pack comes from
the build's webgame.json."""
GZIP_LEVEL = 9
COMPRESSED = (".js", ".wasm", ".pck")
HASH_CHARS = 20
MAX_ASSET_BYTES = 512 * 1024 * 1024


class AssetError(Exception):
    """The built game cannot be served; one line."""


@dataclass(frozen=True)
class Assets:
    folder: Path
    """Holds the files under their own names, and their .gz copies."""
    key: str
    """The content hash that names the folder (and the URL path /g/<key>/)."""
    main_pack: str
    file_sizes: dict[str, int]
    """Uncompressed sizes the engine's progress bar counts (wasm and pack)."""
    engine: str

    def names(self) -> set[str]:
        return {p.name for p in self.folder.iterdir() if not p.name.startswith(".") and not p.name.endswith(".gz")}

    def boot(self, prefix: str) -> dict[str, object]:
        """What the game page hands the engine, every path under ``prefix`` (e.g. /g/<key>)."""
        return {"executable": f"{prefix}/index", "mainPack": f"{prefix}/{self.main_pack}",
                "fileSizes": {f"{prefix}/{k}": v for k, v in self.file_sizes.items()}}


def _hash_files(paths: list[Path]) -> str:
    digest = hashlib.sha256()
    for path in paths:
        digest.update(path.name.encode() + b"\0")
        with path.open("rb") as f:
            while chunk := f.read(1 << 20):
                digest.update(chunk)
    return digest.hexdigest()[:HASH_CHARS]


def prepare_assets(built: Path, cache: Path) -> Assets:
    """The engine and pack of the built game folder ``built``, hashed and compressed under ``cache``
    (reused when there already). Blocking: run it in a worker thread."""
    try:
        boot = json.loads((built / "webgame.json").read_text())
        pack = str(boot["mainPack"])
        engine = str(boot.get("engine", "?"))
    except (OSError, ValueError, KeyError) as exc:
        raise AssetError(f"{built} is no built game (webgame.json: {exc})") from exc
    if "/" in pack or pack.startswith("."):
        raise AssetError(f"{built}/webgame.json names a main pack outside the folder: {pack!r}")
    names = [n for n in ENGINE_FILES if (built / n).is_file()]
    if "index.wasm" not in names or "index.js" not in names or not (built / pack).is_file():
        raise AssetError(f"{built} lacks the engine (index.js, index.wasm) or its pack {pack}")
    paths = [built / n for n in (*names, pack)]
    if sum(p.stat().st_size for p in paths) > MAX_ASSET_BYTES:
        raise AssetError(f"{built}: the engine and pack exceed {MAX_ASSET_BYTES >> 20} MB")
    key = _hash_files(paths)
    target = cache / key
    sizes = {"index.wasm": (built / "index.wasm").stat().st_size, pack: (built / pack).stat().st_size}
    if not (target / ".complete").exists():
        cache.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=f".{key}-", dir=cache))
        try:
            for path in paths:
                shutil.copyfile(path, work / path.name)
                if path.suffix in COMPRESSED:
                    with path.open("rb") as src, gzip.open(work / f"{path.name}.gz", "wb", GZIP_LEVEL) as out:
                        shutil.copyfileobj(src, out, 1 << 20)
            (work / ".complete").write_text("ok\n")
            if target.exists():
                shutil.rmtree(target)
            os.replace(work, target)
        finally:
            if work.exists():
                shutil.rmtree(work, ignore_errors=True)
    return Assets(target, key, pack, sizes, engine)
