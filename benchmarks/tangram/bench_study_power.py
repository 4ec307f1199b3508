"""Issue 66's check by simulation: does the analysis plan's primary test find a known effect, and only
as often as alpha allows when there is none?

    .venv/bin/python -m benchmarks.tangram.bench_study_power [--study configs/study-example.yaml]
        [--participants 24] [--effect 0.75] [--condition planner] [--seeds 200]

For each seed, ``--participants`` simulated participants take the study's order sequences in turn
and answer the questionnaire after each game with the simulated pilot's own answers
(``agent.core.studies.simulated.simulated_answers``: the effect moves the items of every scale after
that condition's games by ``--effect`` scale points); the scores table is made as the analysis
makes it (``agent.analyze.answers.score_rows``) and the plan's primary outcome goes through the
plan's pairwise tests and correction (``agent.analyze.results.declared``). A seed *detects* when a
primary pairwise test's corrected p is below the plan's alpha. Printed: the share of seeds that
detect with the effect (power; the goal: at least 80 %) and without it (the false-positive rate;
the goal: about alpha), each with its Wilson 95 % interval.

The games are not played: a pilot of 24 with games takes about five minutes here (72 games in the
simulator), 400 of them more than a day. Game measures come from real simulated play (the pilot
puts no effect into them), so the benchmark's outcome is the plan's questionnaire scale. The
omnibus test and the mixed model are left out of the loop (they do not decide detection).
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agent.analyze.answers import item_rows, score_rows
from agent.analyze.results.declared import detected, pairwise_test, run_declared
from agent.analyze.results.measures import long_data
from agent.core.proportion import wilson
from agent.core.resources import PROJECT_DIR
from agent.core.studies.analysis_plan import GAME_MEASURES, AnalysisSpec
from agent.core.studies.questionnaires import scored
from agent.core.studies.simulated import simulated_answers
from agent.core.studies.study_file import Study
from agent.games import read_study

EXAMPLE = PROJECT_DIR / "configs" / "study-example.yaml"


def after_each(study: Study, condition: str) -> str:
    q = study.questionnaires
    assert q is not None
    name = q.flow.after_each
    assert name is not None, "the study has no questionnaire after each game"
    return name[condition] if isinstance(name, dict) else name


def simulated_scores(study: Study, participants: int, effects: Mapping[str, float],
                     rng: random.Random) -> list[dict[str, Any]]:
    """One simulated study's scores table (participant x condition), from the pilot's answers."""
    q = study.questionnaires
    assert q is not None
    sequences = study.plan.sequences
    people = {f"P{i + 1:03d}": (i % len(sequences) + 1, tuple(sequences[i % len(sequences)]))
              for i in range(participants)}
    answers = []
    for pid, (_, order) in people.items():
        for condition in order:
            spec = q.specs[after_each(study, condition)]
            given, _ = simulated_answers(spec, condition, effects, rng, len(order))
            answers += [{"participant": pid, "condition": condition, "scale": item.scale,
                         "scored": scored(item, given.get(item.id))} for item in spec.items if item.scale]
    return score_rows(people, answers, [], item_rows(q, len(study.plan.conditions)))


def one(study: Study, plan: AnalysisSpec, participants: int, effects: Mapping[str, float], seed: int) -> bool:
    scores = simulated_scores(study, participants, effects, random.Random(seed))
    keep = {str(r["participant"]) for r in scores}
    data = {o: long_data(scores, o, keep) for o in plan.primary}
    return detected(run_declared(plan, study.plan.design, study.plan.conditions, data), plan)


def rate(name: str, hits: int, seeds: int) -> str:
    low, high = wilson(hits, seeds)
    return f"{name}: {hits}/{seeds} = {hits / seeds:.1%} (95 % CI {low:.1%}-{high:.1%})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--study", type=Path, default=EXAMPLE)
    parser.add_argument("--participants", type=int, default=24)
    parser.add_argument("--effect", type=float, default=0.75, help="scale points put on --condition's scales")
    parser.add_argument("--condition", default=None, help="the condition with the effect (default: the first)")
    parser.add_argument("--seeds", type=int, default=200)
    args = parser.parse_args()
    if not 1 <= args.seeds <= 10_000 or not 2 <= args.participants <= 1000:
        parser.error("--seeds 1 to 10000, --participants 2 to 1000")
    study = read_study(args.study)
    declared = study.analysis
    if declared is None:
        parser.error(f"{args.study} declares no analysis plan")
    if any(o in GAME_MEASURES for o in declared.primary):
        parser.error("the benchmark draws questionnaire answers only: the primary outcome must be a scale")
    plan = declared.model_copy(update={"secondary": [], "omnibus": "none", "mixed_model": False})
    condition = args.condition or study.plan.conditions[0]
    print(f"study {study.name}: primary {', '.join(plan.primary)}, {pairwise_test(plan, study.plan.design)} "
          f"({study.plan.design}), "
          f"{plan.comparison if isinstance(plan.comparison, str) else 'control ' + str(plan.control)}, "
          f"{plan.correction}, alpha {plan.alpha}; {args.participants} participants, effect {args.effect:+} "
          f"scale points on {condition}, {args.seeds} seeds")
    started = time.perf_counter()
    power = sum(one(study, plan, args.participants, {condition: args.effect}, seed) for seed in range(args.seeds))
    null = sum(one(study, plan, args.participants, {}, 100_000 + seed) for seed in range(args.seeds))
    print(rate("with the effect, detected (power; goal >= 80 %)", power, args.seeds))
    print(rate(f"without it, rejected (false positives; goal about alpha = {plan.alpha:.0%})", null, args.seeds))
    print(f"{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
