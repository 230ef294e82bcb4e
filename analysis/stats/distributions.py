"""The normal, t and F functions the tables use, and Wilson's binomial interval: what
scipy.stats (and statsmodels' `proportion_confint`) compute, from the scipy.special functions
they call, with their answers at the edges (q = 0 or 1, x <= 0, undefined arguments).

Importing scipy.stats (statsmodels imports it too) costs a process about 50 MB and half a
second, a sixth of what an analysis worker or `export_analysis` may hold at ReXVQA's size,
for these few functions. tests/stats_tests/test_distributions.py checks them
against scipy.stats and statsmodels, value for value.

Rarer needs import scipy.stats where they are (the Clopper-Pearson interval, power, the
noncentral distributions).
"""

from __future__ import annotations

import numpy as np


def _valid(*parameters) -> np.ndarray:
    """scipy.stats' check of shape parameters: positive (and not NaN)."""
    ok = np.asarray(True)
    for value in parameters:
        ok = ok & (np.asarray(value) > 0)
    return ok


def _out(values):
    """A 0-d result as a numpy scalar, as scipy.stats returns it."""
    values = np.asarray(values, dtype=float)
    return values[()] if values.ndim == 0 else values


def norm_ppf(q):
    """scipy.stats.norm.ppf."""
    from scipy import special

    return _out(special.ndtri(q) + 0.0)


def norm_isf(q):
    """scipy.stats.norm.isf."""
    from scipy import special

    return _out(0.0 - special.ndtri(q))


def norm_sf(x):
    """scipy.stats.norm.sf."""
    from scipy import special

    return _out(special.ndtr(-np.asarray(x, dtype=float)))


def t_ppf(q, df):
    """scipy.stats.t.ppf."""
    from scipy import special

    q = np.asarray(q, dtype=float)
    values = np.where(q == 0, -np.inf, special.stdtrit(df, q))
    return _out(np.where(_valid(df), values, np.nan))


def t_sf(x, df):
    """scipy.stats.t.sf."""
    from scipy import special

    values = special.stdtr(df, -np.asarray(x, dtype=float))
    return _out(np.where(_valid(df), values, np.nan))


def f_sf(x, dfn, dfd):
    """scipy.stats.f.sf (1 at and below 0, the edge of the F distribution's support)."""
    from scipy import special

    x = np.asarray(x, dtype=float)
    values = np.where(x <= 0, 1.0, special.fdtrc(dfn, dfd, x))
    return _out(np.where(_valid(dfn, dfd), values, np.nan))


def wilson_interval(count, nobs, alpha: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    """statsmodels' `proportion_confint(count, nobs, alpha, method="wilson")` for arrays: the
    two-sided Wilson score interval, clipped to [0, 1]; the same operations in the same
    order, so the same numbers."""
    count = np.asarray(count, dtype=float)
    nobs = np.asarray(nobs, dtype=float)
    q_ = count / nobs
    crit = norm_isf(alpha / 2.0)
    crit2 = crit**2
    denom = 1 + crit2 / nobs
    center = (q_ + crit2 / (2 * nobs)) / denom
    dist = crit * np.sqrt(q_ * (1.0 - q_) / nobs + crit2 / (4.0 * nobs**2))
    dist /= denom
    return np.clip(center - dist, 0, 1), np.clip(center + dist, 0, 1)
