"""The "thinking" chat line: said once in an AI turn when no play has gone out ``turn.thinking_after_s``
into it, so the partner knows a slow model is at work (the game shows nothing else meanwhile). It is
said in the partner's language (the language of their last chat line; the game's own before any).

The words are the conversation's (``thinking`` in ``dialogue/words/partner_lines.yaml``, English and
Portuguese), passed to ``thinking.j2`` as ``words``; a config's prompt folder may have its own
``thinking.j2`` (its variables: ``after_s``, ``lang``, ``words``), else the shipped one says
``words``. The line is rendered once per language when the server is made, and checked like every
template (StrictUndefined): a broken one stops the start.
"""

from __future__ import annotations

from agent.core.prompts import load_prompts
from agent.core.resources import prompts_dir as shipped_prompts
from agent.games.tangram.config import Config
from agent.games.tangram.dialogue import LANGUAGES, partner_line

THINKING_TEMPLATE = "thinking"
MAX_THINKING_CHARS = 200
"""The line is clipped to this: the game's chat box, not a paragraph."""


def thinking_context(config: Config, lang: str = LANGUAGES[0]) -> dict[str, int | str]:
    """The template's variables."""
    return {"after_s": round(config.turn.thinking_after_s), "lang": lang, "words": partner_line("thinking", lang)}


def thinking_lines(config: Config) -> dict[str, str] | None:
    """The line in each of the partner's languages, or None when ``turn.thinking_line`` is off (or
    the template renders empty in the game's own language)."""
    if not config.turn.thinking_line:
        return None
    folder = config.prompts_dir
    if not (folder / f"{THINKING_TEMPLATE}.j2").is_file():
        folder = shipped_prompts("tangram")
    prompts = load_prompts(folder, thinking_context(config), [THINKING_TEMPLATE])
    lines = {lang: " ".join(prompts.render(THINKING_TEMPLATE, thinking_context(config, lang)).split())
             [:MAX_THINKING_CHARS] for lang in LANGUAGES}
    if not lines[LANGUAGES[0]]:
        return None
    return {lang: text or lines[LANGUAGES[0]] for lang, text in lines.items()}


def thinking_line(config: Config, lang: str = LANGUAGES[0]) -> str | None:
    """The line to say in ``lang``, or None when ``turn.thinking_line`` is off (or it renders empty)."""
    lines = thinking_lines(config)
    return None if lines is None else lines.get(lang, lines[LANGUAGES[0]])
