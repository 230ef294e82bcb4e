"""MRMC analysis of AUC: the one entry point, as MRMCaov's
`mrmc(empirical_auc(truth, rating), modality, reader, case, data, cov = ...)`.

`auc_mrmc(ratings, cov="jackknife")` validates the long ratings frame (`roc_frame`), names the
design, computes every reader's empirical AUC per modality and their covariance over X-rays
by the chosen method (`auc_covariance`), and runs the OR/Hillis core (`or_hillis`) for random
readers, fixed readers and fixed cases. The result carries the words every output must say
of it: unit, method, design.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from analysis.stats.auc_covariance import METHOD_WORDS, CovarianceMethod, auc_covariance
from analysis.stats.bounded import auc_note, no_interval_note
from analysis.stats.frame import AnalysisInputError
from analysis.stats.or_core import (
    FIXED_READERS,
    RANDOM,
    ORHillisResult,
    components_frame,
    differences_frame,
    interval,
    means_frame,
    or_hillis,
    or_single,
)
from analysis.stats.roc import auc_table
from analysis.stats.roc_frame import RatingsCube, ratings_cube

UNIT = (
    "question (each binary question one positive or negative); X-ray as the case: resampling "
    "keeps an X-ray's questions together"
)


@dataclass(frozen=True)
class AucMrmc:
    cube: RatingsCube
    cov_method: CovarianceMethod
    result: ORHillisResult

    @property
    def split_plot(self) -> bool:
        return len(np.unique(self.result.groups)) > 1

    @property
    def design(self) -> str:
        if self.split_plot:
            sizes = "/".join(str(n) for n in np.bincount(self.result.groups))
            return (
                f"split-plot in {len(np.unique(self.result.groups))} groups (readers "
                f"{sizes}), each group reading its own X-rays in every modality"
            )
        return self.cube.describe_design()

    @property
    def method(self) -> str:
        if self.split_plot:
            how = (
                "MS(T×R) pooled within groups, Cov2/Cov3 over same-group reader pairs, r~ = "
                "sum(r_g²)/r (as the accuracy analysis; MRMCaov would treat the study as a "
                "partially paired factorial one)"
            )
        else:
            how = "as MRMCaov's mrmc(empirical_auc(truth, rating), ...)"
        return (
            "Obuchowski-Rockette with Hillis df on the empirical (trapezoidal, ties 1/2) AUC; "
            f"covariance: {METHOD_WORDS[self.cov_method]}; design: {self.design}; {how}; "
            "intervals not clipped to [0, 1]"
        )

    def tables(self) -> dict[str, pd.DataFrame]:
        """The result as the tables an output shows (each rests on `UNIT` and `method`)."""
        return {
            "auc": auc_table(self.cube),
            "auc_differences": differences_frame(self.result),
            "auc_means": means_frame(self.result),
            "auc_variance_components": components_frame(self.result.components),
        }


def auc_mrmc(
    ratings: pd.DataFrame | RatingsCube,
    *,
    cov: CovarianceMethod = "jackknife",
    modalities: Sequence | None = None,
    reader_groups: Mapping[str, Hashable] | None = None,
    alpha: float = 0.05,
) -> AucMrmc:
    """OR/Hillis MRMC analysis of AUC (see the module docstring). `modalities` orders the
    modalities; differences are first minus second in that order. `reader_groups` (reader ->
    group) analyses a split-plot study by its groups, as the accuracy analysis does; without
    it the design is MRMCaov's reading of the data."""
    cube = ratings if isinstance(ratings, RatingsCube) else ratings_cube(ratings, modalities)
    groups = None if reader_groups is None else _groups(cube, reader_groups)
    fom, covariance = auc_covariance(cube, cov)
    result = or_hillis(
        fom,
        covariance,
        modalities=cube.modalities,
        readers=cube.readers,
        design=cube.design,
        groups=groups,
        alpha=alpha,
    )
    return AucMrmc(cube, cov, result)


PANEL_COLUMNS = [
    "modality",
    "reader",
    "analysis",
    "positives",
    "negatives",
    "auc",
    "se",
    "df",
    "ci_low",
    "ci_high",
    "note",
]


def auc_panel(
    ratings: pd.DataFrame | RatingsCube,
    *,
    cov: CovarianceMethod = "jackknife",
    modalities: Sequence | None = None,
    alpha: float = 0.05,
) -> pd.DataFrame:
    """Per modality, with no comparison (a study of one modality too): each reader's AUC with
    a normal interval from its variance over X-rays (by `cov`), then the readers' mean AUC for
    random readers and cases (Hillis df) and for fixed readers (`or_core.or_single`, the
    per-modality means MRMCaov prints). Intervals are not clipped to [0, 1]; the `note` says
    where one passes it."""
    cube = ratings if isinstance(ratings, RatingsCube) else ratings_cube(ratings, modalities)
    fom, covariance = auc_covariance(cube, cov)
    r = fom.shape[1]
    rows = []
    for i, modality in enumerate(cube.modalities):
        block = covariance[i * r : (i + 1) * r, i * r : (i + 1) * r]
        rated = cube.rated[i]
        for j, reader in enumerate(cube.readers):
            se = float(np.sqrt(block[j, j]))
            _, _, low, high = interval(fom[i, j], se, float("inf"), alpha)
            truth = cube.truth[rated[j]]
            rows.append(
                (
                    modality,
                    reader,
                    "this reader (normal)",
                    int(truth.sum()),
                    int((~truth).sum()),
                    fom[i, j],
                    se,
                    float("inf"),
                    low,
                    high,
                    auc_note(low, high) or no_interval_note(se),
                )
            )
        if r < 2:
            continue
        single = or_single(fom[i], block, alpha=alpha, design=cube.design, label=modality)
        for name, estimate in ((RANDOM, single.random), (FIXED_READERS, single.fixed_readers)):
            truth = cube.truth[rated.any(axis=0)]
            rows.append(
                (
                    modality,
                    "mean of readers",
                    name,
                    int(truth.sum()),
                    int((~truth).sum()),
                    estimate.estimate,
                    estimate.se,
                    estimate.df,
                    estimate.ci_low,
                    estimate.ci_high,
                    auc_note(estimate.ci_low, estimate.ci_high) or no_interval_note(estimate.se),
                )
            )
    return pd.DataFrame(rows, columns=PANEL_COLUMNS)


def _groups(cube: RatingsCube, reader_groups: Mapping[str, Hashable]) -> np.ndarray:
    """Each reader's group as an index; refused unless readers of different groups share no
    X-ray (what makes Cov2 and Cov3 between groups zero by design)."""
    names = {str(k): v for k, v in reader_groups.items()}
    lacking = [r for r in cube.readers if r not in names]
    if lacking:
        raise AnalysisInputError(f"no split-plot group for reader(s) {lacking}")
    _, groups = np.unique([str(names[r]) for r in cube.readers], return_inverse=True)
    read = np.zeros((len(cube.readers), len(cube.case_ids)), dtype=bool)
    for j in range(len(cube.readers)):
        read[j, cube.question_case[cube.rated[:, j].any(axis=0)]] = True
    for g in np.unique(groups):
        shared = read[groups == g].any(axis=0) & read[groups != g].any(axis=0)
        if shared.any():
            raise AnalysisInputError(
                f"X-ray {cube.case_ids[np.flatnonzero(shared)[0]]} is read by readers of "
                "different split-plot groups; in a split-plot design each group reads its own "
                "X-rays"
            )
    return groups
