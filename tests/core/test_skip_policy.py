"""The skip policy (tests/skips.py): under CI a skip not on the allow-list fails the run; every skip is
printed with its reason; an allowed skip, an expected failure or a run outside CI passes.

Each case runs pytest in a child process on a small suite in a temporary folder, with the policy
registered as tests/conftest.py registers it, but with that folder's own allow-list."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.skips import load_allow_list

ROOT = Path(__file__).resolve().parents[2]

CONFTEST = '''
from pathlib import Path
from tests.skips import SkipPolicy, in_ci, load_allow_list

def pytest_configure(config):
    allowed = load_allow_list(Path(__file__).with_name("allowed.toml"))
    config.pluginmanager.register(SkipPolicy(allowed, in_ci()), "skip-policy")
'''

SUITE = '''
import pytest

def test_runs():
    assert True

def test_listed():
    pytest.skip("needs what CI cannot have")

@pytest.mark.parametrize("n", [1, 2])
def test_listed_with_parameters(n):
    pytest.skip(f"case {n} cannot run here")

@pytest.mark.xfail(reason="a known bug", strict=True)
def test_known_bug():
    assert False
'''

ALLOWED = '''
[[skip]]
test = "test_suite.py::test_listed"
reason = "the thing it needs may not be copied in"

[[skip]]
test = "test_suite.py::test_listed_with_parameters"
reason = "every case needs the same missing thing"
'''


def run_suite(tmp_path: Path, ci: str | None, extra: str = "") -> subprocess.CompletedProcess[str]:
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_suite.py").write_text(SUITE + extra)
    (tmp_path / "allowed.toml").write_text(ALLOWED)
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "SKIP_REPORT", "PYTEST_ADDOPTS")}
    env.update(PYTHONPATH=str(ROOT), PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")  # plain pytest: a quicker start
    if ci is not None:
        env["CI"] = ci
    env["SKIP_REPORT"] = str(tmp_path / "skips.txt")
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)


def test_allowed_skips_pass_in_ci_and_are_printed_with_their_reasons(tmp_path: Path) -> None:
    run = run_suite(tmp_path, "true")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "1 passed, 3 skipped, 1 xfailed" in run.stdout
    assert "skipped: 3, of them 0 not on tests/allowed_skips.toml" in run.stdout  # the xfail is no skip
    assert "test_suite.py::test_listed: needs what CI cannot have [allowed in CI]" in run.stdout
    assert "test_suite.py::test_listed_with_parameters[2]: case 2 cannot run here [allowed in CI]" in run.stdout
    report = (tmp_path / "skips.txt").read_text().splitlines()
    assert report == ["test_suite.py::test_listed\tallowed\tneeds what CI cannot have",
                      "test_suite.py::test_listed_with_parameters[1]\tallowed\tcase 1 cannot run here",
                      "test_suite.py::test_listed_with_parameters[2]\tallowed\tcase 2 cannot run here"]


UNLISTED = '''
def test_unlisted():
    pytest.skip("chromedriver is missing")
'''


@pytest.mark.parametrize("ci", ["true", "1"])
def test_an_unlisted_skip_fails_a_ci_run(tmp_path: Path, ci: str) -> None:
    run = run_suite(tmp_path, ci, UNLISTED)
    assert run.returncode == pytest.ExitCode.TESTS_FAILED, run.stdout + run.stderr
    assert "test_suite.py::test_unlisted: chromedriver is missing [NOT ALLOWED in CI]" in run.stdout
    assert "CI: 1 test(s) skipped that tests/allowed_skips.toml does not allow: the run fails" in run.stdout
    assert "test_suite.py::test_unlisted\tNOT ALLOWED\tchromedriver is missing" in (tmp_path / "skips.txt").read_text()


@pytest.mark.parametrize("ci", [None, "false"])
def test_outside_ci_an_unlisted_skip_is_printed_but_passes(tmp_path: Path, ci: str | None) -> None:
    run = run_suite(tmp_path, ci, UNLISTED)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "test_suite.py::test_unlisted: chromedriver is missing [NOT ALLOWED in CI]" in run.stdout
    assert "the run fails" not in run.stdout


def test_a_module_skipped_whole_fails_a_ci_run(tmp_path: Path) -> None:
    (tmp_path / "test_other.py").write_text('import pytest\npytest.importorskip("no_such_module_here")\n')
    run = run_suite(tmp_path, "true")
    assert run.returncode == pytest.ExitCode.TESTS_FAILED, run.stdout + run.stderr
    assert "test_other.py: could not import 'no_such_module_here'" in run.stdout


def test_an_entry_without_a_reason_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "allowed.toml"
    path.write_text('[[skip]]\ntest = "test_suite.py::test_listed"\n')
    with pytest.raises(ValueError, match="needs a test and a reason"):
        load_allow_list(path)


def test_the_repositorys_allow_list_names_only_the_boardgame_schema_tests() -> None:
    allowed = load_allow_list()
    assert allowed and all(test.startswith("tests/boardgame/test_schemas.py::") for test in allowed)
    assert all("not obtainable in CI" in reason or "may neither fetch" in reason for reason in allowed.values())
