"""Take the replay screenshot in docs/study.md with the headless browser the tests use.

    python -m tests.tangram.replay.screenshots [OUTPUT_DIR]    (default: docs/)

Plays one real session through the simulator (an LLM player against the fake OpenAI server naming
candidate A, a chatty scripted partner, the pictures kept), makes its replay page, and writes
replay.png: an AI turn with its board, drawer, chat, the model's decision and its LLM call unfolded.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

from selenium.webdriver.common.by import By

from agent.core.testing.fake_openai import FakeOpenAI, first_enum_responder
from agent.games.tangram.config import Config
from agent.games.tangram.replay import transcript_replay
from agent.games.tangram.sim.runner import RunOptions, run_in_process
from tests.tangram.console.support import ready_for_screenshots, start_browser
from tests.tangram.replay.support import read

TURN = "ai-4"


def main(out: Path) -> int:
    if not ready_for_screenshots(out):
        return 1
    folder = Path(tempfile.mkdtemp(prefix="replay-shot-"))
    with FakeOpenAI(responder=first_enum_responder) as fake:
        config = Config.model_validate({
            "player": "llm", "tags": {"participant": "P01", "condition": "explain"},
            "llm": {"base_url": fake.base_url, "api_key_required": False, "request_timeout": 5, "candidates": 3},
            "images": {"annotate": ["grid", "labels", "candidates"]}, "transcripts": {"dir": str(folder)}})
        options = RunOptions(games=1, turns=8, human="chatty", seed=4, objective="A house", deadline=30)
        asyncio.run(run_in_process(config, options, folder))
    transcript = sorted(folder.glob("*.jsonl"))[0]
    page = folder / "replay.html"
    page.write_text(transcript_replay(read(transcript), transcript), encoding="utf-8")
    driver = start_browser(1500, 1240)
    try:
        driver.get(f"{page.as_uri()}#{TURN}")
        section = driver.find_element(By.CSS_SELECTOR, f'section.step[data-anchor="{TURN}"]')
        for details in section.find_elements(By.CSS_SELECTOR, ".llm details")[:1]:
            driver.execute_script("arguments[0].open = true", details)
        driver.save_screenshot(str(out / "replay.png"))
    finally:
        driver.quit()
    print(f"wrote {out / 'replay.png'} (from {page})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("docs")))
