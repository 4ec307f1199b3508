"""The shipped prompts and configs are found in a checkout and in an installed wheel."""

from __future__ import annotations

import importlib.util
import sys
import tomllib
from pathlib import Path

import pytest

from agent.core import resources
from agent.core.config import GameConfig

ROOT = Path(__file__).resolve().parents[2]


def _build_command() -> type:
    spec = importlib.util.spec_from_file_location("project_setup", ROOT / "setup.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.BuildWithData  # type: ignore[no-any-return]


def test_the_build_copies_every_prompt_and_config_into_the_package(tmp_path: Path) -> None:
    from setuptools.dist import Distribution

    command = _build_command()(Distribution({"name": "x", "packages": []}))
    command.initialize_options()
    command.build_lib = str(tmp_path)
    command.finalize_options()
    command.editable_mode = False
    command.run()
    data = tmp_path / "agent" / "data"
    shipped = {p.relative_to(ROOT).as_posix() for tree in ("prompts", "configs") for p in (ROOT / tree).rglob("*")
               if p.is_file() and "__pycache__" not in p.parts}
    copied = {p.relative_to(data).as_posix() for p in data.rglob("*") if p.is_file()}
    assert "prompts/tangram/system.j2" in copied and "configs/gpt4o.yaml" in copied
    assert shipped == copied


def test_an_installed_layout_finds_its_bundled_copies(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bundled = tmp_path / "agent" / "data"
    (bundled / "prompts" / "tangram").mkdir(parents=True)
    (bundled / "configs").mkdir()
    (bundled / "configs" / "gpt4o.yaml").write_text("player: llm\n")
    monkeypatch.setattr(resources, "BUNDLED_DIR", bundled)
    assert resources.prompts_dir("tangram") == bundled / "prompts" / "tangram"
    assert resources.find_shipped_config("gpt4o") == bundled / "configs" / "gpt4o.yaml"
    assert resources.search_roots()[0] == bundled
    # a shipped config's relative prompts_dir resolves inside the package
    config = GameConfig(source=bundled / "configs" / "gpt4o.yaml")
    assert config.resolve_dir(Path("prompts/tangram")) == (bundled / "prompts" / "tangram").resolve()


def test_a_checkout_uses_its_own_trees() -> None:
    assert resources.shipped_dir("prompts") == ROOT / "prompts"
    assert {p.name for p in resources.shipped_configs()} >= {"gpt4o.yaml", "offline.yaml", "ollama.yaml"}


def test_license_is_an_spdx_expression_and_setup_adds_nothing_else() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "MIT"
    assert "analysis" in project["optional-dependencies"]
    assert {"pandas", "matplotlib", "ruff", "mypy"} <= {
        d.split(">")[0].split("=")[0].split("[")[0] for d in project["optional-dependencies"]["dev"]}
    assert sys.version_info >= (3, 11)


def test_the_pythons_ci_runs_are_the_ones_the_package_and_readme_promise() -> None:
    import re

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    classified = {c.rsplit(" :: ", 1)[1] for c in project["classifiers"]
                  if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)}
    ci = re.search(r"^SUPPORTED=\(([^)]*)\)", (ROOT / ".ci" / "run").read_text(), re.MULTILINE)
    assert ci is not None
    supported = ci.group(1).split()
    assert set(supported) == classified == {"3.11", "3.12", "3.13"}
    assert project["requires-python"] == f">={supported[0]}"
    assert f"Python {', '.join(supported[:-1])} or {supported[-1]}" in (ROOT / "README.md").read_text()


# ---- the wheel as users install it (issue 51) ------------------------------------------------------

SOURCES = ("agent", "prompts", "configs", "setup.py", "pyproject.toml", "README.md")
"""What the build reads: copied out first, so the build's own folders never land in the checkout."""


@pytest.fixture(scope="module")
def built_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel ``pip install .`` builds, made offline with this venv's setuptools."""
    import shutil
    import subprocess

    work = tmp_path_factory.mktemp("wheel")
    source = work / "source"
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(ROOT / name, source / name)
    out = work / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation", "--no-index",
                    "--wheel-dir", str(out), str(source)], check=True, timeout=300, capture_output=True)
    wheels = list(out.glob("tangram_agent-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


def _data_files(top: Path) -> set[str]:
    """Every non-Python file under ``top``: the tracked ones in a git checkout (a stray local file
    is nobody's data), else every file on disk."""
    import subprocess

    listed = subprocess.run(["git", "ls-files", "-z", "--", str(top)], cwd=ROOT, capture_output=True)
    if listed.returncode == 0 and listed.stdout:
        paths = [ROOT / name for name in listed.stdout.decode().split("\0") if name]
    else:
        paths = [p for p in top.rglob("*") if p.is_file()]
    return {p.relative_to(top).as_posix() for p in paths
            if p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts
            and not any(part.startswith(".") for part in p.relative_to(top).parts)}


@pytest.mark.timeout(600)
def test_every_data_file_under_agent_is_in_the_wheel(built_wheel: Path) -> None:
    """The code reads its data files next to itself (stopwords.txt, figures, phrases, templates,
    static pages): each non-Python file under agent/ must ship, whatever its extension."""
    import zipfile

    listed = set(zipfile.ZipFile(built_wheel).namelist())
    wanted = {f"agent/{name}" for name in _data_files(ROOT / "agent")}
    assert "agent/games/tangram/planner/stopwords.txt" in wanted
    assert sorted(wanted - listed) == []
    bundled = {n for n in listed if n.startswith("agent/data/")}
    assert "agent/data/prompts/forge/decide.j2" in bundled and "agent/data/configs/forge-gpt4o.yaml" in bundled


@pytest.mark.timeout(600)
def test_the_installed_wheel_plays_every_game_away_from_the_checkout(built_wheel: Path, tmp_path: Path) -> None:
    """``pip install`` of the wheel into a fresh venv, then, from a folder away from the checkout:
    every shipped config and template through the start-up checks, the figure matcher, a tangram game
    (tangram-agent against the simulator), a hive match, boardgame matches and Forge games
    (tests/core/installed_play.py). Offline: the wheel goes in with --no-deps, and the venv reaches
    this venv's dependencies through a path file added afterwards."""
    import os
    import subprocess
    import sysconfig
    import venv

    target = tmp_path / "venv"
    venv.create(target, with_pip=False, symlinks=os.name != "nt")
    python = target / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-deps",
                    "--no-index", str(built_wheel)], check=True, timeout=300, capture_output=True)
    purelib = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                  check=True, capture_output=True, text=True).stdout.strip())
    # After the install, so pip never sees (nor touches) this venv's own editable install.
    (purelib / "zz_test_venv_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    away = tmp_path / "elsewhere"
    away.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(OPENAI_API_KEY="sk-test-not-a-key", PATH=f"{target / 'bin'}{os.pathsep}{env.get('PATH', '')}")
    run = subprocess.run([str(python), str(ROOT / "tests" / "core" / "installed_play.py"), str(ROOT), str(away)],
                         cwd=away, env=env, capture_output=True, text=True, timeout=540)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-5000:]
    done = [line for line in run.stdout.splitlines() if line.startswith("ok ")]
    assert len(done) == 8, run.stdout
