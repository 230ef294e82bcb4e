"""Our OR/Hillis result laid out as MRMCaov's printed summary, and the comparison of the two.

`results/mrmcaov_summary.R` writes MRMCaov's summary as JSON (every table it prints, plus the
AUCs and covariance matrix); `summary_like` builds the same tables from an `ORHillisResult`
and `compare` checks every number MRMCaov gives, returning the largest absolute difference.
MRMCaov truncates the modality and reader means' intervals to [0, 1]; ours are not clipped, so
they are clipped here before comparing.
"""

from __future__ import annotations

import math

import numpy as np

from analysis.stats.or_core import Analysis, ORHillisResult

KINDS = {"mrmc_rrrc": "random", "mrmc_frrc": "fixed_readers", "mrmc_rrfc": "fixed_cases"}
COMPARISON = {"random": "t", "fixed_readers": "z", "fixed_cases": "t"}


def _clip(value: float) -> float:
    return min(max(value, 0.0), 1.0)


def _differences(analysis: Analysis, kind: str, differences) -> dict:
    rows = {
        "Comparison": [f"{d.first} - {d.second}" for d in differences],
        "Estimate": [d.estimate for d in differences],
        "StdErr": [d.se for d in differences],
        "CI.Lower": [d.ci_low for d in differences],
        "CI.Upper": [d.ci_high for d in differences],
        COMPARISON[kind]: [d.statistic for d in differences],
        "p-value": [d.p_value for d in differences],
    }
    if kind != "fixed_readers":
        rows["df"] = [d.df for d in differences]
    return rows


def _means(analysis: Analysis, kind: str) -> dict:
    means = analysis.means
    rows = {
        "row": [m.modality for m in means],
        "Estimate": [m.estimate for m in means],
        "StdErr": [m.se for m in means],
        "CI.Lower": [_clip(m.ci_low) for m in means],
        "CI.Upper": [_clip(m.ci_high) for m in means],
    }
    if kind == "random":
        rows |= {"MS(R)": [m.ms_r for m in means], "Cov2": [m.cov2 for m in means]}
        rows["df"] = [m.df for m in means]
    elif kind == "fixed_readers":
        rows |= {"Var(Error)": [m.var for m in means], "Cov2": [m.cov2 for m in means]}
    else:
        rows |= {"MS(R)": [m.ms_r for m in means], "df": [m.df for m in means]}
    return rows


def summary_like(result: ORHillisResult, kind: str) -> dict:
    """MRMCaov's summary tables for one analysis ("random", "fixed_readers", "fixed_cases")."""
    analysis: Analysis = getattr(result, kind)
    c = result.components
    test = analysis.global_test
    out = {
        "design": result.design,
        "foms": {"empirical_auc": list(result.fom.ravel())},
        "test_diffs": _differences(analysis, kind, analysis.differences),
        "test_means": _means(analysis, kind),
    }
    if kind != "fixed_cases":
        out["cov"] = result.cov
        out["vcov_comps"] = {
            "row": ["reader", "treatment:reader", "Error", "Cov1", "Cov2", "Cov3"],
            "Estimate": [c.var_r, c.var_tr, c.var, c.cov1, c.cov2, c.cov3],
            "Correlation": [
                None,
                None,
                None,
                c.correlation("cov1"),
                c.correlation("cov2"),
                c.correlation("cov3"),
            ],
        }
    if kind == "random":
        out["test_equality"] = {
            "MS(T)": c.ms_t,
            "MS(T:R)": c.ms_tr,
            "Cov2": c.cov2,
            "Cov3": c.cov3,
            "Denominator": test.denominator,
            "F": test.statistic,
            "df1": test.df1,
            "df2": test.df2,
            "p-value": test.p_value,
        }
    elif kind == "fixed_readers":
        out["test_equality"] = {
            "MS(T)": c.ms_t,
            "Cov1": c.cov1,
            "Cov2": c.cov2,
            "Cov3": c.cov3,
            "Denominator": test.denominator,
            "X2": test.statistic,
            "df": test.df1,
            "p-value": test.p_value,
        }
        reader_diffs = _differences(analysis, kind, analysis.reader_differences)
        reader_diffs["Reader"] = [d.reader for d in analysis.reader_differences]
        out["reader_test_diffs"] = reader_diffs
        out["reader_means"] = {
            "empirical_auc": [m.estimate for m in analysis.reader_means],
            "treatment": [m.modality for m in analysis.reader_means],
            "reader": [m.reader for m in analysis.reader_means],
            "StdErr": [m.se for m in analysis.reader_means],
            "CI.Lower": [_clip(m.ci_low) for m in analysis.reader_means],
            "CI.Upper": [_clip(m.ci_high) for m in analysis.reader_means],
        }
    else:
        out["test_equality"] = {
            "MS(T)": c.ms_t,
            "MS(T:R)": c.ms_tr,
            "F": test.statistic,
            "df1": test.df1,
            "df2": test.df2,
            "p-value": test.p_value,
        }
    return out


def _as_list(value):
    return value if isinstance(value, list) else [value]


MODALITY_COLUMNS = ("Comparison", "row", "treatment")
READER_COLUMNS = ("Reader", "reader")


def _renamed(value, names: dict[str, str]):
    """MRMCaov's name (or "a - b" comparison) as ours, by `names`."""
    if not isinstance(value, str) or not names:
        return value
    return " - ".join(names.get(part, part) for part in value.split(" - "))


def _compare_values(ours, theirs, where: str, worst: list[float], names=None) -> None:
    ours, theirs = _as_list(ours), _as_list(theirs)
    column = where.rsplit(".", 1)[-1]
    if names and column in MODALITY_COLUMNS:
        theirs = [_renamed(value, names["modalities"]) for value in theirs]
    elif names and column in READER_COLUMNS:
        theirs = [_renamed(value, names["readers"]) for value in theirs]
    assert len(ours) == len(theirs), f"{where}: {len(ours)} values, MRMCaov {len(theirs)}"
    for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        if b is None:  # NA in R
            assert a is None or not math.isfinite(a), f"{where}[{i}]: {a} where MRMCaov has NA"
        elif isinstance(b, str):
            assert str(a) == b, f"{where}[{i}]: {a!r} != {b!r}"
        else:
            worst.append(abs(float(a) - float(b)))
            assert abs(float(a) - float(b)) <= 1e-8, f"{where}[{i}]: {a} != MRMCaov {b}"


def compare(
    result: ORHillisResult,
    reference: dict,
    design: int | None = None,
    modalities: dict[str, str] | None = None,
    readers: dict[str, str] | None = None,
) -> float:
    """Assert every number of MRMCaov's summary `reference` equals ours to 1e-8; returns the
    largest absolute difference. `design` is the design MRMCaov is expected to name (default:
    ours); `modalities` and `readers` map MRMCaov's names to ours where they differ."""
    names = None
    if modalities or readers:
        names = {"modalities": modalities or {}, "readers": readers or {}}
    kind = KINDS[reference["factor_types"]]
    ours = summary_like(result, kind)
    worst: list[float] = [0.0]
    assert reference["design"] == (result.design if design is None else design)
    for table, theirs in reference.items():
        if table in ("factor_types", "design", "cov_method", "cov_names") or theirs is None:
            continue
        assert table in ours, f"MRMCaov prints {table}, we give none"
        if table == "cov":
            difference = np.abs(np.asarray(ours["cov"]) - np.asarray(theirs, dtype=float))
            worst.append(float(difference.max()))
            assert difference.max() <= 1e-8, "covariance matrix"
            continue
        for column, values in theirs.items():
            if column == "row" and table in ("test_equality", "test_diffs", "vcov_comps"):
                continue
            if column in ("row",) and table in ("reader_means", "reader_test_diffs"):
                continue
            if table == "foms" and column != "empirical_auc":
                continue
            assert column in ours[table], f"{table}.{column} not given"
            _compare_values(ours[table][column], values, f"{table}.{column}", worst, names)
    return max(worst)
