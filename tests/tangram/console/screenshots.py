"""Take the screenshots in docs/console.md with the headless browser the tests use.

    python -m tests.tangram.console.screenshots [OUTPUT_DIR]    (default: docs/)

Writes console-overview.png (two games side by side, one waiting for the experimenter),
console-edit.png (editing a proposed move: collision shown, repair previewed) and
console-wizard.png (a wizard turn with the planner's suggestion and a participant's question) and
console-model-view.png (an LLM game's "What the model saw": the marked pictures it got).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from agent.core.testing.fake_openai import FakeOpenAI, first_enum_responder
from tests.tangram.console.support import Rig, ready_for_screenshots, start_browser


def main(out: Path) -> int:
    if not ready_for_screenshots(out):
        return 1
    driver = start_browser(1600, 1180)
    wait = WebDriverWait(driver, 15, poll_frequency=0.05)
    try:
        with Rig(deadline=120) as rig:
            driver.get(rig.url)
            wait.until(lambda d: d.find_element(By.ID, "status").get_attribute("data-state") == "open")
            who = driver.find_element(By.ID, "who")
            who.clear()
            who.send_keys("Ana")

            house, _ = rig.new_game("A house", seed=1)
            rocket, b = rig.new_game("A rocket", seed=2)
            for _ in range(3):
                rig.start_turn(house).result(20)
                rig.run(house.human_turn())
            rig.run(house.chat("Could the roof be red?", timeout=10))
            rig.start_turn(rocket).result(20)
            rig.set_mode(b, "supervised")
            rig.start_turn(rocket)
            panel_b = driver.find_element(By.CSS_SELECTOR, f'section.game[data-game="{b}"]')
            review = wait.until(lambda d: panel_b.find_element(By.CSS_SELECTOR, ".review").is_displayed()
                                and panel_b.find_element(By.CSS_SELECTOR, ".review"))
            wait.until(lambda d: panel_b.find_elements(By.CSS_SELECTOR, ".overlay polygon.proposal"))
            time.sleep(1.2)  # let the countdown visibly run down a little
            driver.save_screenshot(str(out / "console-overview.png"))

            review.find_element(By.CSS_SELECTOR, ".btn-edit").click()
            piece = wait.until(lambda d: panel_b.find_element(By.CSS_SELECTOR, ".overlay polygon.editing"))
            review.find_element(By.CSS_SELECTOR, ".ed-rot-right").click()
            time.sleep(0.3)
            piece = panel_b.find_element(By.CSS_SELECTOR, ".overlay polygon.editing")
            ActionChains(driver).click_and_hold(piece).move_by_offset(-30, 25).release().perform()
            for cls, value in ((".ed-x", "52"), (".ed-y", "58")):  # typed: onto the Red piece
                field = review.find_element(By.CSS_SELECTOR, cls)
                field.clear()
                field.send_keys(value)
                driver.execute_script("arguments[0].dispatchEvent(new Event('change'))", field)
            wait.until(lambda d: "Collides" in review.find_element(By.CSS_SELECTOR, ".ed-status").text)
            time.sleep(0.3)
            chat = review.find_element(By.CSS_SELECTOR, ".ed-chat")
            chat.clear()
            chat.send_keys("I'll turn the nose piece a bit.")
            panel_b.screenshot(str(out / "console-edit.png"))

            cat, c = rig.new_game("A cat", seed=3)
            rig.set_mode(c, "wizard")
            rig.start_turn(cat)
            panel_c = wait.until(lambda d: d.find_element(By.CSS_SELECTOR, f'section.game[data-game="{c}"]'))
            driver.execute_script("arguments[0].scrollIntoView()", panel_c)
            wait.until(lambda d: panel_c.find_element(By.CSS_SELECTOR, ".editor").is_displayed())
            panel_c.find_element(By.CSS_SELECTOR, ".ed-chat").send_keys("Let me start with the body.")
            time.sleep(0.5)
            panel_c.screenshot(str(out / "console-wizard.png"))
        model_view(driver, wait, out)
    finally:
        driver.quit()
    for name in ("console-overview.png", "console-edit.png", "console-wizard.png", "console-model-view.png"):
        print(out / name)
    return 0


def model_view(driver: Any, wait: WebDriverWait[Any], out: Path) -> None:
    """An LLM game (the fake server naming candidate A) with "What the model saw" unfolded."""
    with FakeOpenAI(responder=first_enum_responder) as fake:
        settings = {"player": "llm", "llm": {"base_url": fake.base_url, "api_key_required": False,
                                             "request_timeout": 5, "candidates": 3},
                    "images": {"annotate": ["grid", "labels", "candidates"]}}
        with Rig(deadline=60, settings=settings) as rig:
            driver.get(rig.url)
            wait.until(lambda d: d.find_element(By.ID, "status").get_attribute("data-state") == "open")
            house, gid = rig.new_game("A house", seed=4)
            for _ in range(3):
                rig.start_turn(house).result(20)
                rig.run(house.human_turn())
            rig.start_turn(house).result(20)
            panel = wait.until(lambda d: d.find_element(By.CSS_SELECTOR, f'section.game[data-game="{gid}"]'))
            view = wait.until(lambda d: panel.find_element(By.CSS_SELECTOR, ".model-view").is_displayed()
                              and panel.find_element(By.CSS_SELECTOR, ".model-view"))
            view.find_element(By.CSS_SELECTOR, "summary").click()
            wait.until(lambda d: d.execute_script(
                "return arguments[0].querySelector('.model_board-img').naturalWidth", panel) == 512)
            driver.execute_script("arguments[0].scrollIntoView()", view)
            time.sleep(0.3)
            view.screenshot(str(out / "console-model-view.png"))


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("docs")))
