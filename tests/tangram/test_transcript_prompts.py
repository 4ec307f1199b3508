import json
import stat

import pytest

from agent.core.prompts import PromptError, load_prompts
from agent.core.transcript import Transcript
from agent.games.tangram.config import PROJECT_DIR
from agent.games.tangram.llm_player.context import TEMPLATE_NAMES, sample_context


async def test_transcript_writes_ordered_jsonl_owner_only_and_masks_secrets(tmp_path):
    t = Transcript(tmp_path, secrets=["sk-very-secret-key"])
    await t.open()
    for i in range(50):
        t.record("frame_in", n=i, note="auth sk-very-secret-key")
    await t.close()
    await t.close()  # idempotent
    lines = t.path.read_text().splitlines()
    assert [json.loads(x)["n"] for x in lines] == list(range(50))
    assert "sk-very-secret-key" not in t.path.read_text()
    assert stat.S_IMODE(t.path.stat().st_mode) == 0o600


async def test_disabled_transcript_records_nothing():
    t = Transcript(None)
    await t.open()
    t.record("x", a=1)
    await t.close()
    assert t.path is None


def test_shipped_prompts_render_with_the_sample_context():
    prompts = load_prompts(PROJECT_DIR / "prompts" / "tangram", sample_context(), TEMPLATE_NAMES)
    for name in TEMPLATE_NAMES:
        assert prompts.render(name, sample_context())
    assert "A house" in prompts.render("play", sample_context())


def test_a_template_with_an_unknown_variable_fails_at_load(tmp_path):
    for name in TEMPLATE_NAMES:
        (tmp_path / f"{name}.j2").write_text("{{ objective }}")
    (tmp_path / "chat.j2").write_text("hello\n{{ objectiv }}")
    with pytest.raises(PromptError, match=r"chat\.j2.*objectiv"):
        load_prompts(tmp_path, sample_context(), TEMPLATE_NAMES)


def test_a_missing_template_is_named(tmp_path):
    (tmp_path / "system.j2").write_text("x")
    with pytest.raises(PromptError, match=r"play\.j2"):
        load_prompts(tmp_path, sample_context(), TEMPLATE_NAMES)
