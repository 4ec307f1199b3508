"""The LLM's checked candidates come from the figure the objective names, and the prompt says
which figure that is, or plainly that the objective has none (issue 32, point 4)."""

from __future__ import annotations

import pytest
from jinja2 import Environment, FileSystemLoader, StrictUndefined

from agent.core.resources import prompts_dir
from agent.games.tangram.llm_player.context import marks_context
from agent.games.tangram.planner.candidates import NO_CANDIDATES, CandidateSet, propose_candidates
from agent.games.tangram.planner.library import load_library

LIBRARY = load_library()
ENV = Environment(loader=FileSystemLoader(str(prompts_dir("tangram"))), undefined=StrictUndefined)


def render(candidates: CandidateSet) -> str:
    return ENV.get_template("candidates.j2").render(**marks_context(candidates))


@pytest.mark.parametrize("objective,figure,match", [
    ("A camel", "camel", "exact"), ("a bird flying", "bird", "exact"), ("a man on a chair", "sitting person", "exact"),
    ("kitty", "cat", "exact"), ("A cow", "horse", "related"), ("a spoon", "house", "none"),
])
def test_candidates_build_the_matched_figure(objective: str, figure: str, match: str) -> None:
    cands = propose_candidates(objective, {}, 3, library=LIBRARY)
    assert (cands.figure, cands.match, cands.status) == (figure, match, "ok")
    parts = set(LIBRARY[figure].parts.values())
    assert len(cands.candidates) == 3 and all(c.figure == figure and c.part in parts for c in cands.candidates)


def test_the_prompt_names_the_figure_the_candidates_build() -> None:
    text = render(propose_candidates("A camel", {}, 2, library=LIBRARY))
    assert "the candidates build toward a camel" in text and "no figure" not in text
    text = render(propose_candidates("an airplane", {}, 2, library=LIBRARY))
    assert "toward an airplane" in text


def test_the_prompt_says_plainly_when_the_objective_has_no_figure() -> None:
    related = render(propose_candidates("A cow", {}, 2, library=LIBRARY))
    assert "no figure for the objective itself" in related and "nearest figure it has is a horse" in related
    none = render(propose_candidates("a spoon", {}, 2, library=LIBRARY))
    assert "no figure for the objective, nor one close to it" in none and "stand-in" in none
    assert "- A: " in none  # still offered: the model may use them or not


def test_no_candidates_asked_means_no_figure_talk() -> None:
    assert render(NO_CANDIDATES).strip() == ""
