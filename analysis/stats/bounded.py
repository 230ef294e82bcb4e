"""Intervals that stay inside the range their statistic can take.

An OR/Hillis t interval on the accuracy scale is symmetric: with few readers near 100% it
reaches past it ("83.3%, 95% CI 47.5% - 119.2%"), which a reader of a paper cannot use.

- `logit_interval`: a proportion's interval on the logit scale, from the same standard error
  by the delta method (SE_logit = SE / (p (1 - p))), with the same reference distribution (t on
  the Hillis df, or normal), transformed back: it lies strictly inside (0, 1) and is asymmetric
  where it should be. This is how survey software gives a proportion's interval from a
  design-based SE (e.g. Stata's `proportion`, Korn & Graubard 1998 on small proportions).
- `no_interval_note`: the words beside an estimate whose standard error is 0, which has no
  interval (a zero-width one would claim certainty the data do not give).
- `range_note` (`difference_note` for a difference, -1 to 1; `auc_note` for an AUC, 0 to 1):
  the words said beside an interval that passes its statistic's range, which is then not
  informative on that side.
"""

from __future__ import annotations

import math

from analysis.stats.distributions import norm_ppf, t_ppf

LOGIT_METHOD = (
    "logit-transformed interval: the OR/Hillis (or fixed-readers) standard error carried to "
    "the logit scale by the delta method, SE / (p (1 − p)), with the same t (Hillis df) or "
    "normal reference, transformed back (it cannot leave 0–100%); the untransformed interval "
    "is kept beside it (`*_untransformed`)"
)


def logit_interval(mean: float, se: float, df: float, alpha: float = 0.05) -> tuple[float, float]:
    """(low, high) of a proportion `mean` with standard error `se`: the (1 - alpha) interval
    on the logit scale, back-transformed. NaN when there is no interval (no SE, or a mean of
    0 or 1, where every reader and X-ray agree and the logit is infinite). `df` infinite: a
    normal reference."""
    if not (math.isfinite(mean) and math.isfinite(se) and se > 0 and 0 < mean < 1):
        return float("nan"), float("nan")
    q = 1 - alpha / 2
    crit = float(norm_ppf(q)) if math.isinf(df) else float(t_ppf(q, df))
    centre = math.log(mean / (1 - mean))
    half = crit * se / (mean * (1 - mean))
    return _expit(centre - half), _expit(centre + half)


def _expit(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def range_note(
    low: float, high: float, lower: float = -1.0, upper: float = 1.0, what: str = "a difference"
) -> str:
    """Words for an interval that passes the range `lower`..`upper` its statistic can take
    (empty when inside): it is shown as computed (it is the result the R packages give), and
    said to be uninformative past the bound."""
    if not (math.isfinite(low) and math.isfinite(high)) or (low >= lower and high <= upper):
        return ""
    span = f"{lower:g} to {upper:g}".replace("-", "\N{MINUS SIGN}")
    return (
        f"the interval passes the possible range of {what} ({span}): uninformative "
        "beyond it (too few readers or X-rays); shown as computed"
    )


def no_interval_note(se: float) -> str:
    """Words for an estimate whose standard error is 0 or not a number (empty otherwise): its
    interval is left empty rather than shown with no width, and the row says why."""
    if math.isfinite(se) and se > 0:
        return ""
    return (
        "no interval: the standard error is 0 (the estimate does not change when an X-ray is "
        "left out: every rating the same, or the two groups perfectly apart)"
    )


def difference_note(low: float, high: float) -> str:
    """`range_note` for a difference of two proportions (or of two AUCs): -1 to 1."""
    return range_note(low, high)


def auc_note(low: float, high: float) -> str:
    """`range_note` for an AUC (0 to 1), whose normal interval MRMCaov does not clip."""
    return range_note(low, high, 0.0, 1.0, "an AUC")
