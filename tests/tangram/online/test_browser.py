"""The participant's page in a real browser (headless Chromium through Selenium): a participant agrees,
plays each game of their sequence (the game's socket spoken by the simulator with the page's ticket,
since the built game here is a stand-in), ends each with Continue, and the thank-you page shows the
completion code alone: no "Game N of N", no Continue. Without a working browser every test here is
skipped, and the skip says what is missing; under CI=true a missing or broken browser fails them."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any
from urllib.parse import unquote

import pytest

from agent.core.studies.online import Invite
from agent.games.tangram.sim.client import GameClient
from tests.tangram.console.support import LoopRig, browser_or_skip_reason, module_browser, skip_without_browser
from tests.tangram.online.support import STUDY, Served, served_study

REASON = browser_or_skip_reason()
pytestmark = skip_without_browser("online study browser tests", REASON)

if REASON is None:
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

WAIT_S = 15.0
# Without completion_url: the thank-you page would leave for Prolific's address after five seconds.
NO_REDIRECT = "\n".join(line for line in STUDY.splitlines() if "completion_url" not in line) + "\n"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    yield from module_browser("online study browser tests", REASON, width=1200, height=800)


class OnlineRig(LoopRig):
    """The online study's participants' origin (tests/tangram/online/support.py) in a loop thread."""

    def __init__(self) -> None:
        super().__init__("online-test-", "online-rig")
        self.served: Served
        self._stack = contextlib.AsyncExitStack()

    async def _start(self) -> None:
        self.served = await self._stack.enter_async_context(served_study(self.dir, study_text=NO_REDIRECT))

    async def _stop(self) -> None:
        await self._stack.aclose()

    def invite(self) -> Invite:
        (invite,) = self.run(self.served.online.invite(1))
        return invite

    def play(self, ticket: str) -> None:
        """The game the page's frame holds the ticket of, as the engine would play it: two AI turns
        (what a played game has, study.completed_after_turns), each ended by the agent's finish."""
        async def play() -> None:
            async with GameClient(f"{self.served.ws_url}?ticket={ticket}", seed=1) as game:
                for _ in range(2):
                    turn = await game.ai_turn(deadline=20)
                    assert turn.finished, turn
        self.run(play(), timeout=60)


def wait(driver: Any, condition: Any, timeout: float = WAIT_S) -> Any:
    return WebDriverWait(driver, timeout, poll_frequency=0.05,
                         ignored_exceptions=(StaleElementReferenceException,)).until(lambda d: condition())


def shown(driver: Any, element_id: str) -> bool:
    """Whether the element takes part in the page: displayed by Selenium's rules and by its computed style."""
    element = driver.find_element(By.ID, element_id)
    style = driver.execute_script("return getComputedStyle(arguments[0]).display", element)
    return bool(element.is_displayed()) and style != "none"


def test_the_thank_you_page_shows_no_game_number_and_no_continue(browser: Any) -> None:
    with OnlineRig() as rig:
        invite = rig.invite()
        browser.get(f"{rig.served.url}/p/{invite.code}")
        agree = wait(browser, lambda: (browser.find_elements(By.CSS_SELECTOR, "#buttons button.primary") or [None])[0])
        assert "voluntary" in browser.find_element(By.ID, "text").text
        assert not shown(browser, "progress")  # the consent page: no game yet
        agree.click()
        for number in (1, 2):
            wait(browser, lambda n=number: browser.find_element(By.ID, "game-number").text == f"Game {n} of 2")
            assert shown(browser, "progress") and not shown(browser, "continue")
            src = browser.find_element(By.ID, "game").get_attribute("src")
            rig.play(unquote(src.split("#t=", 1)[1]))
            # What the game's frame tells the page when the agent's finish comes (play.js).
            browser.execute_script("window.postMessage({kind: 'turn-ended'}, window.location.origin)")
            proceed = wait(browser, lambda: shown(browser, "continue") and browser.find_element(By.ID, "continue"))
            proceed.click()
        code = wait(browser, lambda: (browser.find_elements(By.ID, "completion-code") or [None])[0])
        assert code.text == "C0DE42" and browser.find_element(By.ID, "title").text == "Thank you"
        assert not shown(browser, "progress") and not shown(browser, "continue")
        assert not shown(browser, "game")
        games = rig.run(rig.served.run.store.games())
        assert len(games) == 2 and all(g.completed for g in games)
        assert all((g.end_reason or "").startswith("the participant's Continue") for g in games)
