"""Prompt templates: Jinja2 files in a folder, rendered with StrictUndefined.

Each game names the templates its folder must hold (tangram: ``system``, ``play``, ``feedback``,
``chat``). All are rendered once at start-up with a complete sample context, so a template that
names a variable we do not provide fails before the game starts, not in the middle of a
participant's session.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined, TemplateError


class PromptError(Exception):
    """A template folder that cannot be used; the message names the file and the problem."""


@dataclass(frozen=True)
class PromptSet:
    directory: Path
    env: Environment

    def render(self, name: str, context: dict[str, Any]) -> str:
        return self.env.get_template(f"{name}.j2").render(**context).strip()

    def messages(self, system: str, user: str, context: dict[str, Any]) -> list[dict[str, Any]]:
        """A system message and a user message, each rendered from its template with ``context``."""
        return [{"role": "system", "content": self.render(system, context)},
                {"role": "user", "content": self.render(user, context)}]


def load_prompts(directory: Path, sample_context: dict[str, Any], names: Sequence[str]) -> PromptSet:
    """Load and check the templates ``names`` against ``sample_context`` (every variable we pass).

    One context serves all templates, so it must hold the union of their variables. A context with
    a ``compact`` variable (the games' short form for a small context window) is checked in both forms.
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise PromptError(f"prompt folder {directory} does not exist")
    # auto_reload off: the templates checked at start-up are the ones used all session (an edit
    # during a study must not slip in unchecked), and no file is stat()ed on the event loop.
    env = Environment(loader=FileSystemLoader(str(directory)), undefined=StrictUndefined, auto_reload=False,
                      autoescape=False, trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=False)
    prompts = PromptSet(directory, env)
    for name in names:
        path = directory / f"{name}.j2"
        if not path.is_file():
            raise PromptError(f"prompt folder {directory} has no {name}.j2")
        forms = [sample_context]
        if "compact" in sample_context:
            forms.append({**sample_context, "compact": True})
        try:
            for context in forms:
                prompts.render(name, context)
        except TemplateError as exc:
            line = getattr(exc, "lineno", None) or _template_line(exc, path)
            where = f"{path}:{line}" if line else str(path)
            raise PromptError(f"template {where}: {exc.message or exc}") from exc
    return prompts


def _template_line(exc: BaseException, path: Path) -> int | None:
    """The template line a render error happened on: Jinja2 rewrites the traceback so that the
    template's own frames carry its file name and line (syntax errors carry ``lineno`` instead)."""
    line = None
    target = str(path.resolve())
    tb = exc.__traceback__
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if filename == str(path) or filename == target:
            line = tb.tb_lineno  # the innermost frame in the template is where it failed
        tb = tb.tb_next
    return line
