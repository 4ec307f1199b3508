"""The linear mixed model of a within-subject study (statsmodels MixedLM, fitted by REML):

    value ~ condition + position + (1 | participant)

``condition`` is treatment-coded against the control (by default the first condition in sorted order):
each of its terms is a condition's difference from the control, adjusted for where in the order it came.
``position`` (the 1-based place in the participant's order, a linear trend) is the check for order and
carry-over effects: its estimate is the change in the outcome from one game to the next. Unlike the
Friedman test and the ANOVA, the model uses every value, also those of a participant who missed a
condition. ``n`` counts the participants.

One result per fixed-effect term: the estimate with its 95 % Wald interval, the Wald z statistic and its
normal p-value. statsmodels gives no Satterthwaite degrees of freedom (R's lmerTest does), so ``df`` is
None; with few participants the z p-value is somewhat smaller than lmerTest's t p-value. The estimates
equal lme4's; the standard errors differ from lme4's by about 1e-4 relative or less (statsmodels takes
them from the observed information of every parameter, the variances' included).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from statsmodels.regression.mixed_linear_model import MixedLM

from agent.analyze.results.long_data import check_long, require_conditions
from agent.analyze.results.result import TestResult, note, number, unavailable

MIN_PARTICIPANTS = 3
# statsmodels' gradient optimisers and Powell's derivative-free search: each fit is made and the one with
# the higher REML log-likelihood kept. When the participants' variance is at (or near) its bound of 0
# (lme4's "singular fit") the gradient optimisers can stop short of it, even reporting convergence (a
# simulated pilot's effort scale: -2 REML log-likelihood 562.168 where lme4's optimum is 562.155, standard
# errors 3e-4 relative off), and Powell's search reaches lme4's optimum; elsewhere both agree.
FIT_METHODS: tuple[list[str] | str, ...] = (["bfgs", "lbfgs", "cg"], "powell")
MIN_CONDITIONS = 2
POSITION = "position"


def _term(condition: str) -> str:
    return f"condition: {condition}"


def _design(frame: pd.DataFrame, others: list[str]) -> pd.DataFrame:
    columns = {"intercept": np.ones(len(frame))}
    for other in others:
        columns[_term(other)] = (frame["condition"] == other).to_numpy(dtype=float)
    columns[POSITION] = frame["position"].to_numpy(dtype=float)
    return pd.DataFrame(columns, index=frame.index)


def mixed_model(data: pd.DataFrame, outcome: str, control: str | None = None) -> list[TestResult]:
    """Each condition against ``control`` and the position's trend, from one random-intercept model."""
    long = check_long(data)
    control = control if control is not None else (long.conditions[0] if long.conditions else "")
    require_conditions(long, control)
    others = [c for c in long.conditions if c != control]
    terms = [_term(c) for c in others] + [POSITION]
    frame = long.frame
    if frame["position"].isna().any():
        raise ValueError("position must be a number in every row with a value (the place in the participant's order)")
    n = frame["participant"].nunique()

    def none(text: str) -> list[TestResult]:
        return [unavailable(outcome, "mixed_model", term, n, text) for term in terms]

    if len(long.conditions) < MIN_CONDITIONS:
        conditions = ", ".join(long.conditions)
        return none(note("too_few_conditions", minimum=MIN_CONDITIONS, k=len(long.conditions), conditions=conditions))
    if n < MIN_PARTICIPANTS:
        return none(note("too_few_participants", n=n, minimum=MIN_PARTICIPANTS))
    if np.ptp(frame["value"].to_numpy(dtype=float)) == 0:
        return none(note("no_variance"))
    exog = _design(frame, others)
    if np.linalg.matrix_rank(exog.to_numpy()) < exog.shape[1]:
        return none(note("order_confounded"))
    values, groups = frame["value"].to_numpy(dtype=float), frame["participant"].to_numpy()
    model = MixedLM(values, exog, groups=groups)
    fit, reason = None, "the fit did not converge"
    for method in FIT_METHODS:
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                candidate = model.fit(reml=True, method=method)
        except (np.linalg.LinAlgError, ValueError) as error:
            reason = (str(error).splitlines() or [type(error).__name__])[0]
            continue
        if candidate.converged and np.isfinite(candidate.llf) and (fit is None or candidate.llf > fit.llf):
            fit = candidate
    if fit is None:
        return none(note("model_failed", reason=reason))
    interval = fit.conf_int(alpha=0.05)
    return [
        TestResult(
            outcome=outcome,
            test="mixed_model",
            comparison=term,
            n=n,
            statistic=number(fit.tvalues[term]),
            df=None,
            df2=None,
            p=number(fit.pvalues[term]),
            p_corrected=None,
            effect="estimate",
            estimate=number(fit.params[term]),
            ci_low=number(interval.loc[term, 0]),
            ci_high=number(interval.loc[term, 1]),
            note=None,
        )
        for term in terms
    ]
