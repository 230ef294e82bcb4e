"""Type I error of the AUC comparison by a bounded simulation (seeded): 200 studies each with
no difference between modalities, 6 readers, 60 X-rays, 1-5 ratings. Without a modality x
reader term, so that the fixed-readers null (these readers' mean AUCs are equal) holds as well
as the random-readers one. A rate's Monte Carlo standard error is about 0.015, so the bounds
are 0.05 +- 2.6 standard errors."""

import numpy as np
import pytest

from analysis.stats.frame import AnalysisInputError
from analysis.stats.roc_frame import ratings_cube
from analysis.stats.roc_mrmc import auc_mrmc
from analysis.stats.roc_simulate import RoeMetz, simulate_ratings

STUDIES = 200
NULL = RoeMetz(modality_reader=0.0)
GROUPS = {f"R{j + 1:02d}": j % 2 for j in range(6)}


def rejections(design, analyse, seed):
    rng = np.random.default_rng(seed)
    rejected = []
    for _ in range(STUDIES):
        cube = ratings_cube(
            simulate_ratings(rng, NULL, readers=6, xrays=60, design=design, groups=2)
        )
        result = analyse(cube)
        rejected.append(
            [
                result.random.differences[0].p_value < 0.05,
                result.fixed_readers.differences[0].p_value < 0.05,
            ]
        )
    return np.mean(rejected, axis=0)


@pytest.mark.parametrize("cov", ["jackknife", "DeLong"])
def test_factorial_type_one_error(cov):
    random, fixed = rejections("factorial", lambda c: auc_mrmc(c, cov=cov).result, 31)
    assert 0.01 <= random <= 0.09 and 0.01 <= fixed <= 0.09


def test_split_plot_by_groups_type_one_error():
    analyse = lambda c: auc_mrmc(c, reader_groups=GROUPS).result  # noqa: E731
    random, fixed = rejections("split-plot", analyse, 32)
    assert 0.01 <= random <= 0.09 and 0.01 <= fixed <= 0.09


def test_split_plot_groups_are_the_studys_or_refused():
    rng = np.random.default_rng(4)
    data = simulate_ratings(rng, RoeMetz(), readers=6, xrays=60, design="split-plot", groups=2)
    grouped = auc_mrmc(data, reader_groups=GROUPS)
    assert grouped.split_plot and "split-plot in 2 groups (readers 3/3)" in grouped.method
    assert grouped.result.components.r_tilde == 3.0
    assert not auc_mrmc(data).split_plot  # MRMCaov's reading: partially paired factorial
    wrong = {reader: int(reader < "R04") for reader in GROUPS}
    with pytest.raises(AnalysisInputError, match="read by readers of different split-plot"):
        auc_mrmc(data, reader_groups=wrong)
    with pytest.raises(AnalysisInputError, match="no split-plot group for reader"):
        auc_mrmc(data, reader_groups={"R01": 0})
