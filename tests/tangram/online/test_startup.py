"""What the online study says at start-up (stderr, as a person starting it reads it): a Wizard-of-Oz
condition says plainly that someone must be at the experimenter console, and on which address."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.core.studies.run import StudyRun
from agent.games import read_study
from agent.games.tangram.console.start import wizard_notice
from agent.games.tangram.online import public
from agent.games.tangram.online.assets import prepare_assets
from tests.tangram.online.support import fake_build, write_study

WIZARD_STUDY = """name: web-wizard
design: within
conditions:
  planner: {config: planner.yaml}
  wizard: {config: planner.yaml, console: wizard}
online:
  recruitment: RECRUITMENT
"""


async def test_a_wizard_condition_says_at_start_up_that_someone_must_be_at_the_console_and_where(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    stop = asyncio.Event()

    @contextlib.contextmanager
    def stop_signals() -> Iterator[asyncio.Event]:  # the test's Ctrl-C
        yield stop

    monkeypatch.setattr(public, "stop_signals", stop_signals)
    # No --console: the wizard condition starts the console by itself (on a free port here).
    study = read_study(write_study(tmp_path, config="player: planner\nconsole: {port: 0}\n", study=WIZARD_STUDY))
    assets = prepare_assets(fake_build(tmp_path / "built"), tmp_path / "cache")
    async with await StudyRun.open(study) as run:
        serving = asyncio.create_task(public.serve_assets(run, assets, "127.0.0.1", 0, None))
        said = ""
        async with asyncio.timeout(20):
            while "Wizard-of-Oz" not in said:
                assert not serving.done(), capsys.readouterr().err
                await asyncio.sleep(0.05)
                said += capsys.readouterr().err
        stop.set()
        assert await serving == 0
    lines = said.splitlines()
    console = next(line for line in lines if line.startswith("Experimenter console: "))
    address = console.removeprefix("Experimenter console: ")
    assert address.startswith("http://127.0.0.1:") and not address.endswith(":0/")
    assert lines[lines.index(console) + 1] == (
        f"Condition 'wizard' is Wizard-of-Oz: someone must be at the experimenter console, {address}, for every "
        "game of it: its AI turns wait for that person, and a turn nobody answers plays the offline planner's "
        "suggestion at its deadline.")
    assert "participants' links: python -m agent study invite --study FILE --n N" in said


def test_the_notice_names_every_wizard_condition_and_what_an_unanswered_turn_does(tmp_path: Path) -> None:
    two = WIZARD_STUDY.replace("planner: {config: planner.yaml}",
                               "planner: {config: planner.yaml, console: wizard, "
                               "overrides: {console: {wizard_fallback: pass}}}")
    study = read_study(write_study(tmp_path, study=two))
    notice = wizard_notice(study, "http://127.0.0.1:8080/")
    assert notice is not None and notice.startswith("Conditions 'planner' and 'wizard' are Wizard-of-Oz: ")
    assert "every game of them: their AI turns wait" in notice and "suggestion or passes" in notice
    assert wizard_notice(read_study(write_study(tmp_path)), "http://127.0.0.1:8080/") is None
