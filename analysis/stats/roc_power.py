"""Power and sample size on AUC from a pilot study's OR variance components.

The pilot is an AUC MRMC analysis (`roc_mrmc.auc_mrmc`); the power formulas are Hillis,
Obuchowski & Berbaum (2011), the same as for accuracy (`power.power`), as RJafroc's
`SsPowerGivenJK(method = "OR")` computes them: the pilot's Var, Cov1, Cov2, Cov3 scale by
K*/K for K planned cases (X-rays, at the pilot's prevalence and questions per X-ray), and

    Var(T×R) = MS(T×R) - Var + Cov1 + max(Cov2 - Cov3, 0)      (RJafroc; HOB 2011 eq. 9).

Where the pilot gives a negative Var(T×R), or Cov2 < Cov3, the formulas use 0 in its place (as
the paper and RJafroc do): the power then rests on a pilot that estimated less variability than
is possible, and every output says so in `notes` with the estimate itself, never silently.
Factorial pilots only (not nested or split-plot designs).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from analysis.stats import power
from analysis.stats.frame import AnalysisInputError
from analysis.stats.or_core import ORHillisResult
from analysis.stats.roc_mrmc import AucMrmc


@dataclass(frozen=True)
class AucPilot:
    pilot: power.Pilot
    notes: tuple[str, ...]  # negative components set to 0, in words (empty when none)


def auc_pilot(pilot: AucMrmc) -> AucPilot:
    """The pilot's OR components (RJafroc's Var(T×R)) and the notes on what was set to 0."""
    result: ORHillisResult = pilot.result
    if result.design != 1:
        raise AnalysisInputError(
            "power from a pilot is for factorial designs (every reader rated every question "
            f"in every modality); this pilot is {pilot.cube.describe_design()}"
        )
    if len(result.modalities) != 2:
        raise AnalysisInputError("power is for a comparison of two modalities")
    planned = power.Pilot.from_components(
        result.components, len(pilot.cube.question_ids), cases=len(pilot.cube.case_ids)
    )
    return AucPilot(planned, power.truncation_notes(planned))


def auc_power(
    pilot: AucPilot,
    effect: float,
    readers: int,
    cases: int,
    alpha: float = 0.05,
    analysis: str = "random",
) -> float:
    """Power of the two-sided OR test for an AUC difference `effect` with `readers` readers
    and `cases` X-rays ("random", "fixed-readers" or "fixed-cases")."""
    return power.power(pilot.pilot, effect, readers, cases, alpha, analysis)


def method(pilot: AucPilot, effect: float, target: float, alpha: float) -> str:
    """The method sentence every AUC power output carries."""
    p = pilot.pilot
    return (
        f"Hillis–Obuchowski–Berbaum (2011) OR power for a difference of {effect:g} in AUC, "
        f"two-sided alpha {alpha:g}, target power {target:g}; variance components from an "
        f"AUC pilot of {p.cases} X-rays ({p.questions_per_case:.2g} binary questions per "
        "X-ray and the pilot's prevalence, assumed the same in the planned study), as RJafroc's "
        'SsPowerGivenJK(method = "OR"); random readers and X-rays unless stated'
    )


def auc_sample_size_table(
    pilot: AucPilot,
    effect: float,
    target: float = 0.8,
    alpha: float = 0.05,
    readers: range = range(3, 21),
    analysis: str = "random",
) -> pd.DataFrame:
    """Per number of readers: the X-rays (and questions) needed for `target` power; `note`
    repeats the pilot's truncation notes on every row (`power.sample_size_table`)."""
    if not np.isfinite(effect) or effect == 0:
        raise AnalysisInputError("the effect must be a nonzero AUC difference")
    return power.sample_size_table(pilot.pilot, effect, target, alpha, readers, analysis)
