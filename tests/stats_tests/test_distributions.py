"""analysis.stats.distributions gives scipy.stats' and statsmodels' numbers exactly (the
tables must not move by a bit when the analysis stops importing scipy.stats), edges too."""

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from analysis.stats import distributions as d

Q = [0.0, 1e-300, 1e-10, 0.025, 0.3, 0.5, 0.7, 0.975, 1 - 1e-12, 1.0, -0.1, 1.1, np.nan]
X = [-np.inf, -50.0, -3.0, -1e-300, -0.0, 0.0, 1e-300, 0.5, 1.96, 40.0, np.inf, np.nan]
DF = [-1.0, 0.0, 0.5, 1.0, 1.7, 3.0, 29.0, 1e6, np.inf, np.nan]


def identical(ours, theirs) -> bool:
    a, b = np.asarray(ours, dtype=float), np.asarray(theirs, dtype=float)
    same = (a == b) & (np.signbit(a) == np.signbit(b))
    return a.shape == b.shape and bool(np.all(same | (np.isnan(a) & np.isnan(b))))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_normal_t_and_f_functions_are_scipy_stats_bit_for_bit():
    q, x = np.array(Q), np.array(X)
    assert identical(d.norm_ppf(q), stats.norm.ppf(q))
    assert identical(d.norm_isf(q), stats.norm.isf(q))
    assert identical(d.norm_sf(x), stats.norm.sf(x))
    grid_q, grid_df = np.meshgrid(Q, DF)
    assert identical(d.t_ppf(grid_q, grid_df), stats.t.ppf(grid_q, grid_df))
    grid_x, grid_df = np.meshgrid(X, DF)
    assert identical(d.t_sf(grid_x, grid_df), stats.t.sf(grid_x, grid_df))
    f, dfn, dfd = np.meshgrid([-1.0, 0.0, 1e-300, 0.3, 1.0, 4.0, 1e6, np.inf, np.nan], DF, DF)
    assert identical(d.f_sf(f, dfn, dfd), stats.f.sf(f, dfn, dfd))
    # Scalars stay numpy scalars, as scipy.stats returns them.
    assert type(d.t_ppf(0.975, 12.0)) is type(stats.t.ppf(0.975, 12.0))
    assert d.t_ppf(0.975, 12.0) == stats.t.ppf(0.975, 12.0)


def test_wilson_interval_is_statsmodels_bit_for_bit():
    rng = np.random.default_rng(0)
    nobs = np.concatenate([rng.uniform(0.5, 5000, 300), [1.0, 2.0, 37.3, 40826.0]])
    count = np.concatenate([rng.uniform(0, 1, 300), [0.0, 1.0, 0.5, 1.0]]) * nobs
    for alpha in (0.05, 0.01, 0.2):
        ours = d.wilson_interval(count, nobs, alpha)
        theirs = proportion_confint(count, nobs, alpha=alpha, method="wilson")
        assert identical(ours[0], theirs[0]) and identical(ours[1], theirs[1])
