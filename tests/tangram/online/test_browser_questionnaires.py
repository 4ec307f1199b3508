"""The questionnaires in a real browser (headless Chromium through Selenium): three participants go
consent -> first questionnaire -> game -> after-game questionnaire -> ... -> final -> completion
code. One answers in Portuguese (from the link's lang=pt), one reloads in the middle of a
questionnaire and finds what they entered, one fails the attention check and gets the screen-out
code. What the store keeps equals what the browsers entered. Skipped without a working browser, as
test_browser.py is."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import unquote

import pytest

from tests.questionnaire_study import QUESTIONNAIRES
from tests.tangram.console.support import browser_or_skip_reason, module_browser, skip_without_browser
from tests.tangram.online.support import STUDY, served_study
from tests.tangram.online.test_browser import OnlineRig, shown, wait

REASON = browser_or_skip_reason()
pytestmark = skip_without_browser("questionnaire browser tests", REASON)

if REASON is None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

Q_STUDY = ("\n".join(line for line in STUDY.splitlines() if "completion_url" not in line) + "\n"
           + "  screen_out_code: SCR33N\n" + QUESTIONNAIRES)


class QuestionnaireRig(OnlineRig):
    async def _start(self) -> None:
        self.served = await self._stack.enter_async_context(served_study(self.dir, study_text=Q_STUDY))


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    yield from module_browser("questionnaire browser tests", REASON, width=1280, height=800)


def page_title(browser: Any, title: str) -> None:
    wait(browser, lambda: browser.find_element(By.ID, "title").text == title and browser.find_elements(By.ID, "page"))


def choose(browser: Any, item: str, value: str) -> None:
    browser.find_element(By.CSS_SELECTOR, f"input[name=q-{item}][value='{value}']").click()


def about(browser: Any, age: int, reload_midway: bool = False, rig: QuestionnaireRig | None = None) -> None:
    age_input = browser.find_element(By.ID, "q-age-input")
    age_input.send_keys(str(age))
    choose(browser, "games", "other")
    browser.find_element(By.ID, "q-games-other").send_keys("<i>chess</i>")
    if reload_midway:
        assert rig is not None
        # The draft reaches the server; a reload returns to the same page with it.
        def drafted() -> bool:
            pages = rig.run(rig.served.run.store.pages())
            return any(p.draft and p.draft["answers"].get("age") == age and p.draft["other"].get("games")
                       for p in pages)
        wait(browser, drafted)
        browser.refresh()
        wait(browser, lambda: browser.find_elements(By.ID, "q-age-input")
             and browser.find_element(By.ID, "q-age-input").get_attribute("value") == str(age))
        assert browser.find_element(By.CSS_SELECTOR, "input[name=q-games][value=other]").is_selected()
        assert browser.find_element(By.ID, "q-games-other").get_attribute("value") == "<i>chess</i>"
    browser.find_element(By.CSS_SELECTOR, "#page button[type=submit]").click()


def partner(browser: Any, helped: int, check: str) -> None:
    choose(browser, "helped", str(helped))
    choose(browser, "hindered", "2")
    slider = browser.find_element(By.ID, "q-effort-input")
    slider.send_keys(*([Keys.ARROW_RIGHT] * 20))  # the keyboard moves it: 50 -> 70
    choose(browser, "check", check)
    browser.find_element(By.CSS_SELECTOR, "#page button[type=submit]").click()


def play(browser: Any, rig: QuestionnaireRig, number: int) -> None:
    wait(browser, lambda: shown(browser, "game") and "#t=" in (browser.find_element(By.ID, "game").get_attribute("src")
                                                               or ""))
    src = browser.find_element(By.ID, "game").get_attribute("src")
    rig.play(unquote(src.split("#t=", 1)[1]))
    browser.execute_script("window.postMessage({kind: 'turn-ended'}, window.location.origin)")
    wait(browser, lambda: shown(browser, "continue") and browser.find_element(By.ID, "continue")).click()


def agree(browser: Any) -> None:
    wait(browser, lambda: (browser.find_elements(By.CSS_SELECTOR, "#buttons button.primary") or [None])[0]).click()


def test_three_participants_one_in_portuguese_one_reloading_one_screened_out(browser: Any) -> None:
    with QuestionnaireRig() as rig:
        store = rig.served.run.store
        # 1: in Portuguese, from the link.
        first = rig.invite()
        browser.get(f"{rig.served.url}/p/{first.code}?lang=pt")
        agree(browser)
        page_title(browser, "Sobre si")
        assert browser.find_element(By.ID, "withdraw").text == "Parar e apagar os meus dados"
        about(browser, 31)
        for number, helped in ((1, 4), (2, 5)):
            play(browser, rig, number)
            page_title(browser, "O seu parceiro neste jogo")
            partner(browser, helped, "blue")
        page_title(browser, "Em retrospetiva")
        text = browser.find_element(By.ID, "q-preferred").text
        assert "o primeiro parceiro" in text and "planner" not in text and "quiet" not in text
        choose(browser, "preferred", "1")
        browser.find_element(By.ID, "q-why-input").send_keys("<script>x</script> mais rápido")
        browser.find_element(By.CSS_SELECTOR, "#page button[type=submit]").click()
        code = wait(browser, lambda: (browser.find_elements(By.ID, "completion-code") or [None])[0])
        assert code.text == "C0DE42"

        # 2: a missing answer is refused with a message; then a reload in the middle of the page.
        second = rig.invite()
        browser.get(f"{rig.served.url}/p/{second.code}")
        agree(browser)
        page_title(browser, "About you")
        browser.find_element(By.CSS_SELECTOR, "#page button[type=submit]").click()
        problems = wait(browser, lambda: shown(browser, "problems") and browser.find_element(By.ID, "problems"))
        assert "Your age" in problems.text and "required" in problems.text
        assert rig.run(store.answers("L0002")) == []
        about(browser, 45, reload_midway=True, rig=rig)
        for number in (1, 2):
            play(browser, rig, number)
            page_title(browser, "Your partner in this game")
            partner(browser, 3, "blue")
        page_title(browser, "Looking back")
        choose(browser, "preferred", "2")
        browser.find_element(By.CSS_SELECTOR, "#page button[type=submit]").click()
        code = wait(browser, lambda: (browser.find_elements(By.ID, "completion-code") or [None])[0])
        assert code.text == "C0DE42"

        # 3: fails the attention check after the first game: screened out, with its own code.
        third = rig.invite()
        browser.get(f"{rig.served.url}/p/{third.code}")
        agree(browser)
        page_title(browser, "About you")
        about(browser, 22)
        play(browser, rig, 1)
        page_title(browser, "Your partner in this game")
        partner(browser, 2, "red")
        code = wait(browser, lambda: (browser.find_elements(By.ID, "completion-code") or [None])[0])
        assert code.text == "SCR33N" and "C0DE42" not in browser.page_source

        answers = rig.run(store.answers())
        got = {(a["participant"], a["step"], a["item"]): (a["value"], a["other"], a["language"]) for a in answers}
        assert got[("L0001", 1, "age")] == (31, None, "pt")
        assert got[("L0001", 1, "games")] == ("other", "<i>chess</i>", "pt")
        assert got[("L0001", 3, "helped")][0] == 4 and got[("L0001", 5, "helped")][0] == 5
        assert got[("L0001", 3, "effort")][0] == 70
        assert got[("L0001", 6, "why")][0] == "<script>x</script> mais rápido"
        assert got[("L0002", 1, "age")] == (45, None, "en") and got[("L0002", 6, "preferred")][0] == "2"
        assert got[("L0003", 3, "check")][0] == "red"
        rows = {r.id: r for r in rig.run(store.participants())}
        assert (rows["L0001"].state, rows["L0002"].state) == ("completed", "completed")
        assert (rows["L0003"].state, rows["L0003"].outcome) == ("dropped", "screened_out")
