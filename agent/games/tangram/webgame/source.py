"""A Godot project's files, from a folder (a clone's work tree) or from a bare git repository.

A bare mirror may lack some blobs (the project's mirror leaves out files of 4 MiB and more):
such a file is listed with ``size`` None and reads as None, so the builder can say what is
missing instead of failing half-way.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

MAX_FILE_BYTES = 64 * 1024 * 1024
"""No single source file of a game we pack is larger; a bigger one is treated as missing."""
IGNORED_DIRS = (".git", ".godot", ".import")
MAX_FILES = 100_000


class SourceError(ValueError):
    """Not a folder or repository we can read a Godot project from; one line."""


class SourceTree(Protocol):
    label: str

    def sizes(self) -> dict[str, int | None]:
        """Every file's path (``/``-separated, from the tree's root) and size; None: listed but absent."""
        ...

    def read(self, path: str) -> bytes | None:
        """The file's bytes, or None when it is absent."""
        ...

    def identity(self) -> str:
        """Changes whenever a file may have changed (a commit id, or sizes and times)."""
        ...


@dataclass
class FolderTree:
    root: Path
    label: str = ""
    _sizes: dict[str, int | None] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self.label = self.label or str(self.root)

    def sizes(self) -> dict[str, int | None]:
        if self._sizes is None:
            found: dict[str, int | None] = {}
            for folder, dirs, files in os.walk(self.root):
                dirs[:] = sorted(d for d in dirs if d not in IGNORED_DIRS)
                for name in sorted(files):
                    path = Path(folder) / name
                    if not path.is_file():
                        continue
                    if len(found) >= MAX_FILES:
                        raise SourceError(f"{self.root} holds more than {MAX_FILES} files: not a game project")
                    size = path.stat().st_size
                    found[path.relative_to(self.root).as_posix()] = size if size <= MAX_FILE_BYTES else None
            self._sizes = found
        return self._sizes

    def read(self, path: str) -> bytes | None:
        if self.sizes().get(path) is None:
            return None
        return (self.root / path).read_bytes()

    def identity(self) -> str:
        stamp = []
        for path in self.sizes():
            st = (self.root / path).stat()
            stamp.append(f"{path}:{st.st_size}:{st.st_mtime_ns}")
        return "\n".join(stamp)


@dataclass
class GitTree:
    """The tree of ``rev`` in a (bare) git repository, read with the git command."""

    repo: Path
    rev: str = "HEAD"
    label: str = ""
    _listing: dict[str, tuple[str, int | None]] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self.label = self.label or f"{self.repo} ({self.rev})"

    def _git(self, *args: str) -> bytes:
        try:
            done = subprocess.run(["git", "-C", str(self.repo), *args], capture_output=True, check=False,
                                  timeout=120)
        except FileNotFoundError as exc:
            raise SourceError("reading a git mirror needs the git command, which is not installed") from exc
        except subprocess.TimeoutExpired as exc:
            raise SourceError(f"git took over 2 minutes in {self.repo}") from exc
        if done.returncode != 0:
            message = done.stderr.decode(errors="replace").strip().splitlines()
            raise SourceError(f"git cannot read {self.repo}: {message[-1] if message else done.returncode}")
        return done.stdout

    def _list(self) -> dict[str, tuple[str, int | None]]:
        if self._listing is None:
            listing: dict[str, tuple[str, int | None]] = {}
            for record in self._git("ls-tree", "-r", "-l", "-z", self.rev).split(b"\0"):
                if not record:
                    continue
                meta, _, name = record.partition(b"\t")
                _mode, kind, sha, size = meta.decode().split()
                if kind != "blob":
                    continue
                path = name.decode("utf-8", errors="surrogateescape")
                if path.split("/")[0] in IGNORED_DIRS:
                    continue
                # A blob the repository lacks lists its size as "BAD" (or "-").
                known = int(size) if size.isdigit() and int(size) <= MAX_FILE_BYTES else None
                listing[path] = (sha, known)
            self._listing = listing
        return self._listing

    def sizes(self) -> dict[str, int | None]:
        return {path: size for path, (_sha, size) in self._list().items()}

    def read(self, path: str) -> bytes | None:
        sha, size = self._list().get(path, ("", None))
        if size is None:
            return None
        return self._git("cat-file", "blob", sha)

    def identity(self) -> str:
        return self._git("rev-parse", f"{self.rev}^{{tree}}").decode().strip()


def open_tree(folder: Path) -> SourceTree:
    """A clone's work tree, a bare repository, or a mirror folder holding ``repo/`` (a bare repository)."""
    if not folder.is_dir():
        raise SourceError(f"{folder} is not a folder")
    if (folder / "project.godot").is_file():
        return FolderTree(folder)
    for candidate in (folder, folder / "repo"):
        if (candidate / "HEAD").is_file() and (candidate / "objects").is_dir():
            return GitTree(candidate, label=str(candidate))
    if (folder / ".git").exists():
        return GitTree(folder, label=str(folder))
    raise SourceError(f"{folder} holds no project.godot and is no git repository")
