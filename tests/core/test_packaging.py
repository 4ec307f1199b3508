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
