"""The lab's participant pages (online/lab.py): the online pages and calls on the lab machine's loopback,
for the participant ``study next`` started, their games bound only when their flow reaches them.

The browser test (headless Chromium through Selenium, skipped without one as the other browser tests
are) walks one in-lab participant through the example study's pages (configs/study-example.yaml):
the first questionnaire, each game (played as the lab's game window would be: bound by the study's
binder, recorded started and completed), each after-game page, the final page, the thank-you page;
the experimenter console beside it shows where the participant is, and their free text as text."""

from __future__ import annotations

import json
import shutil
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent.core.redact import Secrets
from agent.core.studies.lab import lab_link
from agent.core.studies.run import StudyRun
from agent.games import read_study
from agent.games.tangram.console.messages import StudyAction
from agent.games.tangram.console.start import start_study_console
from agent.games.tangram.console.web import ConsoleServer
from agent.games.tangram.link.study import StudyGame, StudyLink
from agent.games.tangram.online.lab import LabPages, LabPagesError, lab_pages
from tests.tangram.console.support import LoopRig, browser_or_skip_reason, module_browser, skip_without_browser

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "configs" / "study-example.yaml"
WAIT_S = 20.0
COMMENT = "<b>bold</b> & <script>alert(1)</script> não"

REASON = browser_or_skip_reason()
if REASON is None:
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait


class LabRig(LoopRig):
    """The example study served as in the lab: its binder (every condition's seat), the console, and
    the participants' pages on loopback."""

    def __init__(self) -> None:
        super().__init__("lab-pages-", "lab-rig")
        shutil.copy(EXAMPLE, self.dir / "study.yaml")
        self.study = read_study(self.dir / "study.yaml")
        self.run_: StudyRun
        self.link: StudyLink
        self.web: ConsoleServer
        self.pages: LabPages
        self._pages: Any

    async def _start(self) -> None:
        self.run_ = await StudyRun.open(self.study)
        self.link = await StudyLink.build(self.run_, Secrets())
        first = self.link.first.config
        config = first.model_copy(update={"console": first.console.model_copy(
            update={"enabled": True, "host": "127.0.0.1", "port": 0})})
        self.web = await start_study_console(config, self.link, Secrets())
        self._pages = lab_pages(self.run_, 0)
        self.pages = await self._pages.__aenter__()

    async def _stop(self) -> None:
        await self._pages.__aexit__(None, None, None)
        await self.web.stop()
        await self.link.aclose()
        await self.run_.close()

    async def start(self, pid: str) -> str:
        """``study next PID``: the participant started, and their link."""
        await self.run_.next_participant(pid)
        return f"{self.pages.url}/p/{await lab_link(self.run_, pid)}"

    async def play(self) -> int:
        """The lab's game window connects and plays its game to the end, as the study's binder records
        it; the game's position."""
        binding = await self.link.bind()
        assert binding is not None, "the flow is at the game, so the game binds"
        game: StudyGame = binding.context
        started = await self.run_.game_started(game.assignment, f"lab-{game.assignment.position}", None)
        assert await self.run_.game_ended(started, True, "the game closed on the participant's turn")
        return game.assignment.position


def post(url: str, body: dict[str, Any]) -> tuple[int, dict[str, Any] | str]:
    request = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def test_the_lab_serves_the_pages_and_calls_but_no_game_no_open_recruitment_and_only_on_loopback() -> None:
    with LabRig() as rig:
        base = rig.pages.url
        assert base.startswith("http://127.0.0.1:")
        link = rig.run(rig.start("P01"))
        code = link.rsplit("/", 1)[1]
        with urllib.request.urlopen(link, timeout=10) as page:
            assert b"participant.js" in page.read()
        for path in ("/play", "/join?PROLIFIC_PID=abc", "/ws"):
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(base + path, timeout=10)
            assert refused.value.code in (404, 405), path
        status, visit = post(base + "/api/visit", {"code": code})
        assert status == 200 and isinstance(visit, dict)
        assert visit["stage"] == "questionnaire" and visit["lab"] is True and "idle" not in visit
        assert visit["page"]["title"] == "Before you start"
        # Nothing else on the machine answers for them: a code that is nobody's is refused, and a second
        # link (study link) replaces the first.
        assert post(base + "/api/visit", {"code": "x" * 24})[0] == 403
        newer = rig.run(lab_link(rig.run_, "P01"))
        assert post(base + "/api/visit", {"code": code})[0] == 403
        assert post(base + "/api/visit", {"code": newer})[0] == 200
        # The game waits for the flow: no binding while the first page is unanswered, then the first game.
        assert rig.run(rig.link.bind()) is None
        answers = {"puzzles": "never", "tangram_before": "yes", "ai_use": "weekly"}
        status, visit = post(base + "/api/answers", {"code": newer, "step": 1, "answers": answers})
        assert status == 200 and isinstance(visit, dict) and visit["stage"] == "play" and visit["lab"] is True
        status, game = post(base + "/api/game", {"code": newer})
        assert status == 200 and isinstance(game, dict) and game["ticket"] is None  # the lab's window plays
        assert rig.run(rig.play()) == 1
        assert rig.run(rig.link.bind()) is None  # the page after the game comes first

        async def serve_on(port: int) -> None:
            async with lab_pages(rig.run_, port):
                pass
        with pytest.raises(LabPagesError, match="--lab-pages 70000 is not a port"):
            rig.run(serve_on(70000))
        with pytest.raises(LabPagesError, match=f"cannot listen on 127.0.0.1:{rig.pages.port} \\(in use"):
            rig.run(serve_on(rig.pages.port))
        assert rig.run_.pages_url == rig.pages.url  # the pages served still say where they are


def test_the_consoles_next_participant_gives_the_participants_link() -> None:
    with LabRig() as rig:
        panel = rig.web.console.study
        assert panel is not None
        line = rig.run(panel.act(StudyAction(type="study", action="next", participant="P01")))
        assert line.startswith("P01 is active") and f"their pages (open on this machine): {rig.pages.url}/p/" in line
        code = line.rsplit("/p/", 1)[1]
        status, visit = post(f"{rig.pages.url}/api/visit", {"code": code})
        assert status == 200 and isinstance(visit, dict) and visit["page"]["title"] == "Before you start"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    yield from module_browser("lab browser test", REASON, width=1280, height=800)


def wait(driver: Any, condition: Any, timeout: float = WAIT_S) -> Any:
    return WebDriverWait(driver, timeout, poll_frequency=0.05,
                         ignored_exceptions=(StaleElementReferenceException,)).until(lambda d: condition())


def page_title(browser: Any, title: str) -> None:
    wait(browser, lambda: browser.find_element(By.ID, "title").text == title and browser.find_elements(By.ID, "page"))


def choose(browser: Any, item: str, value: str) -> None:
    browser.find_element(By.CSS_SELECTOR, f"input[name=q-{item}][value='{value}']").click()


def submit(browser: Any) -> None:
    browser.find_element(By.CSS_SELECTOR, "#page button[type=submit]").click()


def console_cells(browser: Any, pid: str) -> list[Any]:
    row = wait(browser, lambda: (browser.find_elements(By.CSS_SELECTOR, f'tr[data-participant="{pid}"]') or [None])[0])
    return list(row.find_elements(By.TAG_NAME, "td"))


@skip_without_browser("lab browser test", REASON)
def test_an_in_lab_participant_goes_through_the_example_studys_pages(browser: Any) -> None:
    with LabRig() as rig:
        link = rig.run(rig.start("P01"))
        pages = browser.current_window_handle
        browser.switch_to.new_window("tab")
        console = browser.current_window_handle
        browser.get(rig.web.url)
        where = lambda: console_cells(browser, "P01")[5].text  # noqa: E731
        wait(browser, lambda: where() == "questionnaire about_you (before the first game)")

        browser.switch_to.window(pages)
        browser.get(link)
        page_title(browser, "Before you start")
        choose(browser, "puzzles", "weekly")
        choose(browser, "tangram_before", "no")
        choose(browser, "ai_use", "daily")
        assert rig.run(rig.link.bind()) is None  # the game waits for the page
        submit(browser)
        games = rig.run(rig.run_.store.participant("P01")).conditions
        for number in (1, 2, 3):
            wait(browser, lambda n=number: browser.find_element(By.ID, "title").text == f"Game {n} of 3")
            assert "game window on this computer" in browser.find_element(By.ID, "text").text
            assert not browser.find_elements(By.ID, "page") and not browser.find_element(By.ID, "game").is_displayed()
            assert rig.run(rig.play()) == number
            page_title(browser, "The partner you just played with")  # the page went on by itself
            if number == 1:
                browser.switch_to.window(console)
                wait(browser, lambda: where() == "questionnaire partner (after game 1)")
                browser.switch_to.window(pages)
            assert rig.run(rig.link.bind()) is None  # the next game waits for this page
            for item in ("helped", "understood", "good_spots", "undo_urge"):
                choose(browser, item, str(2 + number))
            browser.find_element(By.ID, "q-effort-input").send_keys(*([Keys.ARROW_RIGHT] * (10 * number)))
            choose(browser, "check", "triangle")
            submit(browser)
        page_title(browser, "To finish")
        choose(browser, "preferred", "2")
        browser.find_element(By.ID, "q-comment-input").send_keys(COMMENT)
        submit(browser)
        wait(browser, lambda: browser.find_element(By.ID, "title").text == "Thank you")
        assert rig.run(rig.link.bind()) is None  # every game played

        # What the store keeps is what the browser entered.
        answers = rig.run(rig.run_.store.answers("P01"))
        by = {(a["questionnaire"], a["step"], a["item"]): a["value"] for a in answers}
        assert by[("about_you", 1, "puzzles")] == "weekly" and by[("about_you", 1, "ai_use")] == "daily"
        assert [by[("partner", step, "helped")] for step in (3, 5, 7)] == [3, 4, 5]
        assert [by[("partner", step, "effort")] for step in (3, 5, 7)] == [60, 70, 80]
        assert by[("final", 8, "preferred")] == "2" and by[("final", 8, "comment")] == COMMENT
        played = rig.run(rig.run_.store.games("P01"))
        assert [g.condition for g in played] == list(games) and all(g.completed for g in played)

        # The console: where they are, and what they wrote as text (no element made of it).
        browser.switch_to.window(console)
        wait(browser, lambda: where() == "done")
        wrote = console_cells(browser, "P01")[6]
        assert wrote.text == COMMENT
        assert wrote.find_elements(By.CSS_SELECTOR, "*") == []
        assert browser.find_elements(By.CSS_SELECTOR, "#study-participants b, #study-participants script") == []
        browser.close()
        browser.switch_to.window(pages)
