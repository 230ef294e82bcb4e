"""The shared OR/Hillis core (`or_hillis`) fed the accuracy analysis' own FOMs and jackknife
covariance gives the accuracy analysis' results (`or_design`), factorial and split-plot: the
core is where accuracy can move (its jackknife is one more covariance estimate). And the core
refuses what it cannot analyse, in words."""

import numpy as np
import pytest

from analysis.stats.frame import AnalysisInputError
from analysis.stats.jackknife import jackknife_covariance
from analysis.stats.or_accuracy import or_design
from analysis.stats.or_core import or_hillis
from analysis.stats.simulate import LatentModel, simulate_cube

FIELDS = ("estimate", "se", "df", "ci_low", "ci_high", "p_value")


@pytest.mark.parametrize(("groups", "seed"), [(1, 1), (2, 2), (3, 3)])
def test_the_core_gives_the_accuracy_analysis(groups, seed):
    rng = np.random.default_rng(seed)
    correct, counted, reader_groups, case_groups = simulate_cube(
        rng, LatentModel(effect=0.2), readers=6, xrays=40, questions=3, groups=groups
    )
    accuracy = or_design(correct, counted, reader_groups=reader_groups, case_groups=case_groups)
    fom, cov = jackknife_covariance(correct, counted, case_groups, reader_groups)
    # or_design reports modality 2 - modality 1: order the modalities so, first - second
    core = or_hillis(
        fom[::-1],
        _reverse_modalities(cov, 2, 6),
        modalities=("aided", "unaided"),
        readers=[f"r{j}" for j in range(6)],
        groups=reader_groups,
    )
    for ours, theirs in ((core.random, accuracy.random), (core.fixed_readers, accuracy.fixed)):
        difference = ours.differences[0]
        for field in FIELDS:
            assert getattr(difference, field) == pytest.approx(
                getattr(theirs, field if field != "p_value" else "p_value"), abs=1e-12
            ), field
    assert core.random.global_test.statistic == pytest.approx(accuracy.random.f, abs=1e-10)
    c, a = core.components, accuracy.components
    for name in ("var", "cov1", "cov2", "cov3", "ms_t", "ms_r", "ms_tr", "var_r", "var_tr"):
        assert getattr(c, name) == pytest.approx(getattr(a, name), abs=1e-12), name
    assert (c.df_r, c.df_tr, c.r_tilde) == (a.df_r, a.df_tr, a.r_tilde)
    for ours, theirs in zip(core.random.means[::-1], accuracy.means, strict=True):
        for field in ("estimate", "se", "df", "ci_low", "ci_high"):
            assert getattr(ours, field) == pytest.approx(getattr(theirs, field), abs=1e-12)


def _reverse_modalities(cov, t, r):
    order = np.concatenate([np.arange(r) + i * r for i in reversed(range(t))])
    return cov[np.ix_(order, order)]


def test_the_core_refuses_what_it_cannot_analyse():
    fom = np.array([[0.8, 0.9], [0.85, 0.95]])
    cov = np.eye(4) * 1e-3
    with pytest.raises(AnalysisInputError, match="two modalities"):
        or_hillis(fom[:1], cov[:2, :2], modalities=["a"], readers=["r1", "r2"])
    with pytest.raises(AnalysisInputError, match="two readers"):
        or_hillis(fom[:, :1], cov[:2, :2], modalities=["a", "b"], readers=["r1"])
    with pytest.raises(AnalysisInputError, match="4 x 4"):
        or_hillis(fom, cov[:3, :3], modalities=["a", "b"], readers=["r1", "r2"])
    with pytest.raises(AnalysisInputError, match="at least two readers"):
        or_hillis(fom, cov, modalities=["a", "b"], readers=["r1", "r2"], groups=[0, 1])
