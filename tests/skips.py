"""No test skips silently: every skip is printed with its reason, and under CI a skip fails the run
unless ``tests/allowed_skips.toml`` names the test and says why it may skip there.

Registered by ``tests/conftest.py``. A skip is any test (or whole module, as ``importorskip`` does)
that pytest reports as skipped; an expected failure (``xfail``) is not a skip. An allow-list entry
names a test by its node id, without parameters (``tests/x.py::test_y`` covers ``test_y[1]`` too),
or a whole module by its path. With ``SKIP_REPORT=<file>`` the skips are also written to that file,
one ``node id<TAB>allowed|NOT ALLOWED<TAB>reason`` line each, for ``.ci/run``'s summary.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ALLOW_LIST = Path(__file__).with_name("allowed_skips.toml")


def in_ci() -> bool:
    """True when the CI variable says so (``CI=true``, as ``.ci/run`` and CI services set it)."""
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def load_allow_list(path: Path = ALLOW_LIST) -> dict[str, str]:
    """Node id (or module path) -> the reason it may skip in CI. Every entry must give a reason."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    allowed: dict[str, str] = {}
    for entry in data.get("skip", []):
        test, reason = str(entry.get("test", "")).strip(), str(entry.get("reason", "")).strip()
        if not test or not reason:
            raise ValueError(f"{path.name}: every [[skip]] needs a test and a reason, got {entry!r}")
        allowed[test] = reason
    return allowed


@dataclass(frozen=True)
class Skip:
    nodeid: str
    reason: str
    allowed: bool


def _reason(report: Any) -> str:
    longrepr = report.longrepr  # (path, line, "Skipped: reason") for a skip
    text = str(longrepr[2]) if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
    return text.removeprefix("Skipped: ")


def _is_allowed(nodeid: str, allowed: dict[str, str]) -> bool:
    base = nodeid.split("[", 1)[0]
    module = nodeid.split("::", 1)[0]
    return nodeid in allowed or base in allowed or module in allowed


class SkipPolicy:
    """Collects the run's skips; fails a CI run that has one not on the allow-list."""

    def __init__(self, allowed: dict[str, str], ci: bool) -> None:
        self.allowed = allowed
        self.ci = ci
        self.skips: list[Skip] = []

    def _record(self, report: Any) -> None:
        if report.skipped and not hasattr(report, "wasxfail"):
            self.skips.append(Skip(report.nodeid, _reason(report), _is_allowed(report.nodeid, self.allowed)))

    def pytest_runtest_logreport(self, report: Any) -> None:
        self._record(report)

    def pytest_collectreport(self, report: Any) -> None:
        self._record(report)  # a module skipped as a whole (importorskip, allow_module_level)

    @property
    def unlisted(self) -> list[Skip]:
        return [s for s in self.skips if not s.allowed]

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        target = os.environ.get("SKIP_REPORT")
        if target:
            lines = [f"{s.nodeid}\t{'allowed' if s.allowed else 'NOT ALLOWED'}\t{s.reason}" for s in self.skips]
            Path(target).write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        if self.ci and self.unlisted and exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.skips:
            return
        tr = terminalreporter
        bad = len(self.unlisted)
        tr.section(f"skipped: {len(self.skips)}, of them {bad} not on tests/{ALLOW_LIST.name}",
                   sep="-", red=bool(bad and self.ci), yellow=not (bad and self.ci))
        for s in self.skips:
            mark = "allowed in CI" if s.allowed else "NOT ALLOWED in CI"
            tr.write_line(f"{s.nodeid}: {s.reason} [{mark}]")
        if bad and self.ci:
            tr.write_line(f"CI: {bad} test(s) skipped that tests/{ALLOW_LIST.name} does not allow: the run fails. "
                          "Make them run here, or add each with its reason to the allow-list.", red=True, bold=True)
