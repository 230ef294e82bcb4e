"""Power and sample size for a two-modality reader study (Hillis, Obuchowski & Berbaum 2011;
Hillis & Schartz 2018), from a pilot's Obuchowski-Rockette variance components.

For J readers and K cases (here: X-rays, each with the pilot's questions per X-ray), with a
pilot of K* cases whose error variance and covariances scale by K*/K:

    den   = Var(T×R) + (K*/K) (Var - Cov1 + (J - 1) max(Cov2 - Cov3, 0))
    ncp   = J d^2 / (2 den)
    df2   = den^2 / [(Var(T×R) + (K*/K)(Var - Cov1 - max(Cov2 - Cov3, 0)))^2 / (J - 1)]
    power = P(F(1, df2, ncp) > F_{1-alpha}(1, df2))        (random readers and cases)

Fixed readers: chi-square(1, ncp) with den = (K*/K)(Var - Cov1 + (J - 1) max(Cov2 - Cov3, 0)).
Random readers, fixed cases: F(1, J - 1) with den = Var(T×R) + (K*/K)(Var - Cov1 -
max(Cov2 - Cov3, 0)). The pilot's Var(T×R) is RJafroc's (HOB 2011 eq. 9),
MS(T×R) - Var + Cov1 + max(Cov2 - Cov3, 0).

A negative Var(T×R) estimate is set to 0, as the paper and RJafroc's `SsPowerGivenJK` do, so
the powers equal RJafroc's. Power falls as Var(T×R) grows, so 0 is the most favourable value
there is: with random readers the powers are then the most the pilot allows, not an estimate
it supports (a pilot of few readers often estimates a negative Var(T×R) when readers do differ
in their aided - unaided difference, and studies planned on 0 fall short). `truncation_notes`
says so in words, and every output (`describe`, the table's `note`) carries it. The tests
reproduce RJafroc's documented powers for the Van Dyke pilot and RJafroc itself on a negative
pilot, and check the prediction against simulated studies. Factorial designs only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from analysis.stats.or_accuracy import Components
from analysis.stats.or_core import Components as CoreComponents

ANALYSES = ("random", "fixed-readers", "fixed-cases")
NOT_REACHABLE = "not reachable: reader variability dominates"


@dataclass(frozen=True)
class Pilot:
    """OR variance components of a pilot study and its number of cases (X-rays)."""

    var_tr: float
    var: float
    cov1: float
    cov2: float
    cov3: float
    cases: int
    questions_per_case: float = 1.0

    @classmethod
    def from_components(
        cls,
        components: Components | CoreComponents,
        questions: int | None = None,
        *,
        cases: int | None = None,
    ) -> Pilot:
        """The pilot as RJafroc takes it from a dataset: Var(T×R) by HOB 2011 eq. 9 (with
        max(Cov2 - Cov3, 0)), which differs from MRMCaov's when Cov2 < Cov3. `components`:
        the accuracy analysis' (which know their X-rays) or the OR/Hillis core's of any
        figure of merit (`cases` then given); `questions`: all the pilot's questions."""
        c = components
        cases = c.cases if cases is None else cases
        per_case = questions / cases if questions else 1.0
        return cls(
            c.ms_tr - c.var + c.cov1 + max(c.cov2 - c.cov3, 0.0),
            c.var,
            c.cov1,
            c.cov2,
            c.cov3,
            cases,
            per_case,
        )


def _number(value: float) -> str:
    return f"{value:.3g}".replace("-", "−")


def truncation_notes(pilot: Pilot) -> tuple[str, ...]:
    """What the power formulas set to 0, with the pilot's estimates, in words (empty when
    nothing was)."""
    notes = []
    if pilot.var_tr < 0:
        notes.append(
            "power with random readers not supported by this pilot: its Var(T×R) estimate is "
            f"negative ({_number(pilot.var_tr)}) and is set to 0, as Hillis, Obuchowski & "
            "Berbaum (2011) and RJafroc do; 0 is the most favourable value, so these powers "
            "are the most this pilot allows, and any modality × reader variance lowers them"
        )
    if pilot.cov2 - pilot.cov3 < 0:
        notes.append(
            f"the pilot's Cov2 − Cov3 is negative ({_number(pilot.cov2 - pilot.cov3)}); the "
            "power uses 0 in its place"
        )
    return tuple(notes)


def power(
    pilot: Pilot, effect: float, readers: int, cases: int, alpha: float = 0.05, analysis="random"
) -> float:
    """Power of the two-sided OR test of equal modalities for `effect` (accuracy scale)."""
    from scipy import stats as sps

    if readers < 2 or cases < 2:
        raise ValueError("needs at least two readers and two cases")
    var_tr = max(pilot.var_tr, 0.0)
    scale = pilot.cases / cases
    between = max(pilot.cov2 - pilot.cov3, 0.0)
    if analysis == "random":
        den = var_tr + scale * (pilot.var - pilot.cov1 + (readers - 1) * between)
        df2 = den**2 / ((var_tr + scale * (pilot.var - pilot.cov1 - between)) ** 2 / (readers - 1))
        ncp = effect**2 * readers / 2 / den
        return float(sps.ncf.sf(sps.f.ppf(1 - alpha, 1, df2), 1, df2, ncp))
    if analysis == "fixed-readers":
        den = scale * (pilot.var - pilot.cov1 + (readers - 1) * between)
        ncp = effect**2 * readers / 2 / den
        return float(sps.ncx2.sf(sps.chi2.ppf(1 - alpha, 1), 1, ncp))
    if analysis == "fixed-cases":
        den = var_tr + scale * (pilot.var - pilot.cov1 - between)
        ncp = effect**2 * readers / 2 / den
        df2 = readers - 1
        return float(sps.ncf.sf(sps.f.ppf(1 - alpha, 1, df2), 1, df2, ncp))
    raise ValueError(f"analysis must be one of {ANALYSES}")


def cases_needed(
    pilot: Pilot,
    effect: float,
    readers: int,
    target: float = 0.8,
    alpha: float = 0.05,
    analysis: str = "random",
    max_cases: int = 100_000,
) -> int | None:
    """The fewest cases giving at least `target` power with `readers` readers; None when no
    number of cases up to `max_cases` reaches it (with random readers, reader variability
    caps the power however many cases are read)."""
    if power(pilot, effect, readers, max_cases, alpha, analysis) < target:
        return None
    low, high = 2, max_cases
    if power(pilot, effect, readers, low, alpha, analysis) >= target:
        return low
    while high - low > 1:
        middle = (low + high) // 2
        if power(pilot, effect, readers, middle, alpha, analysis) >= target:
            high = middle
        else:
            low = middle
    return high


def sample_size_table(
    pilot: Pilot,
    effect: float,
    target: float = 0.8,
    alpha: float = 0.05,
    readers: range = range(3, 21),
    analysis: str = "random",
) -> pd.DataFrame:
    """Per number of readers: X-rays (and questions) needed and the power they give; `note`
    carries the pilot's truncation notes on every row, so no row is read without them."""
    said = "; ".join(truncation_notes(pilot))
    rows = []
    for j in readers:
        k = cases_needed(pilot, effect, j, target, alpha, analysis)
        rows.append(
            {
                "readers": j,
                "x_rays": k,
                "questions": None if k is None else int(np.ceil(k * pilot.questions_per_case)),
                "power": None if k is None else power(pilot, effect, j, k, alpha, analysis),
                "note": "; ".join(filter(None, ["" if k is not None else NOT_REACHABLE, said])),
            }
        )
    return pd.DataFrame(rows)


def describe(pilot: Pilot, effect: float, target: float, alpha: float) -> str:
    """The method sentence every power output carries, with what was set to 0."""
    return "; ".join(
        [
            f"Hillis–Obuchowski–Berbaum (2011) OR power for a difference of {effect:g} in "
            f"accuracy, two-sided alpha {alpha:g}, target power {target:g}, as RJafroc's "
            'SsPowerGivenJK(method = "OR"); variance components from a pilot of '
            f"{pilot.cases} X-rays ({pilot.questions_per_case:.2g} questions per X-ray, "
            "assumed the same in the planned study); random readers and X-rays unless stated",
            *truncation_notes(pilot),
        ]
    )
