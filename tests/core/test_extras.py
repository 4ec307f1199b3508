"""A missing optional dependency is one line naming the extra to install (issue 22)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agent.core.extras import MissingExtra, require

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("missing", ["pandas", "matplotlib"])
def test_without_the_analysis_extra_the_command_says_what_to_install_in_one_line(tmp_path: Path, missing: str) -> None:
    """The real command with the module hidden; before: a ModuleNotFoundError traceback."""
    (tmp_path / "t.jsonl").write_text(json.dumps({"t": 0, "session": "s", "kind": "session_start"}) + "\n")
    hide = (f"import sys, runpy; sys.modules[{missing!r}] = None; "
            "runpy.run_module('agent.analyze', run_name='__main__', alter_sys=True)")
    done = subprocess.run([sys.executable, "-c", hide, str(tmp_path), "--out", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=60, cwd=ROOT)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    assert missing in lines[0] and "pip install 'tangram-agent[analysis]'" in lines[0]
    assert not (tmp_path / "out").exists()  # nothing half written


def test_require_names_the_missing_module_and_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "some_optional_module", None)
    with pytest.raises(MissingExtra) as missing:
        require("the feature", "feature", "json", "some_optional_module")
    assert str(missing.value) == ("the feature needs some_optional_module, which is not installed here: "
                                  "pip install 'tangram-agent[feature]'")
    require("the feature", "feature", "json")  # present: nothing happens
