"""MRMC analysis of AUC: the one entry point, as MRMCaov's
`mrmc(empirical_auc(truth, rating), modality, reader, case, data, cov = ...)`.

`auc_mrmc(ratings, cov="jackknife")` validates the long ratings frame (`roc_frame`), names the
design, computes every reader's empirical AUC per modality and their covariance over X-rays
by the chosen method (`auc_covariance`), and runs the OR/Hillis core (`or_hillis`) for random
readers, fixed readers and fixed cases. The result carries the words every output must say
of it: unit, method, design.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from analysis.stats.auc_covariance import METHOD_WORDS, CovarianceMethod, auc_covariance
from analysis.stats.or_hillis import (
    ORHillisResult,
    components_frame,
    differences_frame,
    means_frame,
    or_hillis,
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
    def method(self) -> str:
        return (
            "Obuchowski-Rockette with Hillis df on the empirical (trapezoidal, ties 1/2) AUC; "
            f"covariance: {METHOD_WORDS[self.cov_method]}; design: "
            f"{self.cube.describe_design()}; as MRMCaov's mrmc(empirical_auc(truth, rating), "
            f"...); intervals not clipped to [0, 1]"
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
    alpha: float = 0.05,
) -> AucMrmc:
    """OR/Hillis MRMC analysis of AUC (see the module docstring). `modalities` orders the
    modalities; differences are first minus second in that order."""
    cube = ratings if isinstance(ratings, RatingsCube) else ratings_cube(ratings, modalities)
    fom, covariance = auc_covariance(cube, cov)
    result = or_hillis(
        fom,
        covariance,
        modalities=cube.modalities,
        readers=cube.readers,
        design=cube.design,
        alpha=alpha,
    )
    return AucMrmc(cube, cov, result)
