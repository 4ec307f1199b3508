"""The console's study panel in a real browser (headless Chromium through Selenium), with the
simulator as the game: the experimenter starts a participant by id, the participant's
Wizard-of-Oz game opens in wizard mode under their name, the experimenter plays the turn, the
completed game moves the participant on, and pause, resume and drop out work from the table."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.tangram.console.study_rig import StudyRig
from tests.tangram.console.support import browser_or_skip_reason, module_browser, skip_without_browser

REASON = browser_or_skip_reason()
pytestmark = skip_without_browser("console study browser tests", REASON)

if REASON is None:
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

WAIT_S = 15.0
ONE_TURN = {"overrides": {"study": {"completed_after_turns": 1}}}


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    yield from module_browser("console study browser tests", REASON)


def wait(driver: Any, condition: Any, timeout: float = WAIT_S) -> Any:
    return WebDriverWait(driver, timeout, poll_frequency=0.05,
                         ignored_exceptions=(StaleElementReferenceException,)).until(lambda d: condition())


def row(driver: Any, pid: str) -> Any:
    return wait(driver, lambda: (driver.find_elements(By.CSS_SELECTOR, f'tr[data-participant="{pid}"]') or [None])[0])


def cells(driver: Any, pid: str) -> list[str]:
    return [td.text for td in row(driver, pid).find_elements(By.TAG_NAME, "td")]


def test_the_experimenter_runs_a_participant_from_the_console(browser: Any) -> None:
    with StudyRig({"wizard": {"console": "wizard", **ONE_TURN}, "planner": ONE_TURN}) as rig:
        browser.get(rig.url)
        wait(browser, lambda: browser.find_element(By.ID, "status").get_attribute("data-state") == "open")
        panel = browser.find_element(By.ID, "study")
        wait(browser, lambda: panel.is_displayed() and "console-study" in panel.text)
        browser.find_element(By.ID, "study-id").send_keys("P01")
        browser.find_element(By.ID, "study-start").click()
        wait(browser, lambda: cells(browser, "P01")[1] == "active")
        assert cells(browser, "P01")[2] == "wizard → planner" and cells(browser, "P01")[4] == "wizard"
        assert rig.call(lambda: rig.run_.study.name) == "console-study"

        game = rig.game()
        rig.run(game.human_turn())
        turn = rig.submit(game.ai_turn(deadline=40))
        card = wait(browser, lambda: (browser.find_elements(By.CSS_SELECTOR, "section.game") or [None])[0])
        tag = card.find_element(By.CSS_SELECTOR, ".study-tag")
        wait(browser, lambda: tag.text == "P01 · wizard (condition 1)")
        wait(browser, lambda: card.find_element(By.CSS_SELECTOR, '.modes button[data-mode="wizard"]')
             .get_attribute("aria-pressed") == "true")
        suggest = wait(browser, lambda: (b := card.find_element(By.CSS_SELECTOR, ".btn-suggest")).is_displayed() and b)
        suggest.click()
        assert turn.result(30).finished
        rig.run(game.close())
        wait(browser, lambda: cells(browser, "P01")[3] == "1 of 2 games" and cells(browser, "P01")[4] == "planner")

        row(browser, "P01").find_element(By.CSS_SELECTOR, 'button[data-action="pause"]').click()
        wait(browser, lambda: cells(browser, "P01")[1] == "paused")
        row(browser, "P01").find_element(By.CSS_SELECTOR, 'button[data-action="resume"]').click()
        wait(browser, lambda: cells(browser, "P01")[1] == "active")
        row(browser, "P01").find_element(By.CSS_SELECTOR, 'button[data-action="drop"]').click()
        browser.switch_to.alert.accept()
        wait(browser, lambda: cells(browser, "P01")[1] == "dropped")
        assert "1 dropped out" in browser.find_element(By.ID, "study-balance").text
