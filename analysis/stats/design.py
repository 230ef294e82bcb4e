"""Design-aware results of a two-arm (aided vs unaided) or second-read study, as tables.

`design_results(frame, policy)` is the one call the page, the API and the ZIP make: it checks
the canonical letters, builds the reader x X-ray cube (`design_frame`), runs the two-modality
OR/Hillis analysis by X-ray (`or_design`), states non-inferiority and superiority against the
policy's margin, and adds reliance on the AI (`reliance`). Every table comes with the unit it
rests on, the method and the policy, in words, so an output can say only what is true of it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from analysis.stats import reliance
from analysis.stats.bounded import difference_note
from analysis.stats.design_frame import (
    ANCHOR,
    ARMS,
    Cube,
    DesignTable,
    check_canonical,
    is_second_read,
    modality_cube,
)
from analysis.stats.distributions import norm_sf, t_sf
from analysis.stats.frame import ALL, AnalysisInputError, Missing, right
from analysis.stats.or_accuracy import Comparison, Components, ORDesignResult, or_design


@dataclass(frozen=True)
class DesignPolicy:
    """The part of the analysis policy the design-aware results depend on."""

    missing: Missing = "wrong"
    alpha: float = 0.05
    ni_margin: float = 0.05  # on the accuracy scale (0.05 = 5 percentage points)

    def describe(self) -> str:
        missing = (
            "a missing answer counts as wrong"
            if self.missing == "wrong"
            else "missing answers are left out of n"
        )
        return (
            f"{missing}; {(1 - self.alpha) * 100:g}% two-sided CIs; non-inferiority margin "
            f"{self.ni_margin:g} on the accuracy scale"
        )

    def as_dict(self) -> dict:
        return asdict(self)


def design_sentence(frame: pd.DataFrame, cube: Cube) -> str:
    """One sentence on the design the analysis used."""
    readers = len(cube.readers)
    parts = []
    if is_second_read(frame):
        parts.append("Second read (aided reads: first answer before the AI, final after it)")
    else:
        parts.append("Crossover, 2 arms (unaided / aided)")
    parts.append(f"{readers} readers")
    if cube.split_plot:
        anchors = frame.loc[frame["case_group"] == ANCHOR, "case_id"].nunique()
        sizes = "/".join(str(int((cube.groups == g).sum())) for g in range(len(cube.group_names)))
        parts.append(
            f"split-plot in {len(cube.group_names)} groups (readers {sizes}), "
            f"{len(cube.case_ids)} X-rays in groups + {anchors} anchor X-rays read by everyone"
        )
        parts.append(f"{cube.n_questions} questions compared")
    else:  # as the study's own design sentence counts its sample
        parts.append(f"{cube.n_questions} questions on {len(cube.case_ids)} X-rays compared")
    if cube.dropped_questions:
        parts.append(f"{cube.dropped_questions} questions not yet read by all left out")
    if cube.left_out_readers:
        names = ", ".join(cube.left_out_readers)
        parts.append(f"left out (no answers yet in one of the two readings): {names}")
    return ", ".join(parts) + "."


PANEL = "Panel (mean of readers)"
ARM_ACCURACY_COLUMNS = ["arm", "task", "reader", "n", "correct", "accuracy", "note"]


def _not_started(rows: pd.DataFrame, arm_column: str) -> dict[str, list[str]]:
    """Per arm, the readers with rows in it but not a single answer yet (their session has
    not opened): under missing = "wrong" they would enter as all wrong, so every per-arm
    table leaves them out and names them."""
    answered = rows["answer"].notna().groupby([rows[arm_column], rows["reader"]]).any()
    out: dict[str, list[str]] = {}
    for (arm, reader), any_answer in answered.items():
        if not any_answer:
            out.setdefault(str(arm), []).append(str(reader))
    return out


def _started(rows: pd.DataFrame, arm_column: str, waiting: dict[str, list[str]]) -> np.ndarray:
    """The rows of readers who have answered in the row's arm (`_not_started` left out)."""
    pairs = zip(rows[arm_column], rows["reader"], strict=True)
    return np.array([r not in waiting.get(str(a), ()) for a, r in pairs], dtype=bool)


def not_started_words(readers: list[str]) -> str:
    """The note of a per-arm row whose readers leave some out (empty when none)."""
    if not readers:
        return ""
    return f"left out (no answer yet in this arm): {', '.join(readers)}"


def arm_accuracy(frame: pd.DataFrame, missing: Missing = "wrong") -> pd.DataFrame:
    """Accuracy per arm, reader and task (task "All" = every question), plus the panel.

    The panel row is the mean of the readers' accuracies (the OR figure of merit), not the
    pooled proportion. Second-read studies add the aided reads' first answers as their own
    arm ("aided (first answer)"). A reader without a single answer in an arm has not read it
    yet: they are in none of that arm's rows (nor its panel mean), and the panel row's `note`
    names them.
    """
    rows = frame.assign(arm_label=frame["arm"])
    if is_second_read(frame):
        first = frame[frame["arm"] == "aided"].assign(
            arm_label="aided (first answer)", answer=lambda d: d["first_answer"]
        )
        rows = pd.concat([rows, first], ignore_index=True)
    waiting = _not_started(rows, "arm_label")
    started = _started(rows, "arm_label", waiting)
    answered = rows["answer"].notna()
    rows = rows.assign(
        counted=answered if missing == "exclude" else True,
        right=right(rows),
    )
    arms = list(pd.unique(rows["arm_label"]))
    rows = rows[started]
    tasks = [ALL, *sorted(rows["task"].dropna().unique())] if "task" in rows else [ALL]
    out = []
    for task in tasks:
        part = rows if task == ALL else rows[rows["task"] == task]
        stats = part.groupby(["arm_label", "reader"]).agg(
            n=("counted", "sum"), correct=("right", "sum")
        )
        stats = stats.reset_index()
        stats["accuracy"] = stats["correct"] / stats["n"].where(stats["n"] > 0)
        for arm in arms:
            block = stats[stats["arm_label"] == arm]
            for _, row in block.iterrows():
                out.append(
                    {
                        "arm": arm,
                        "task": task,
                        "reader": row["reader"],
                        "n": int(row["n"]),
                        "correct": int(row["correct"]),
                        "accuracy": row["accuracy"],
                        "note": "",
                    }
                )
            note = not_started_words(waiting.get(str(arm), []))
            if block.empty:
                note = f"no reader has answered in this arm yet: {', '.join(waiting[str(arm)])}"
            out.append(
                {
                    "arm": arm,
                    "task": task,
                    "reader": PANEL,
                    "n": int(block["n"].sum()),
                    "correct": int(block["correct"].sum()),
                    "accuracy": float(block["accuracy"].mean()) if not block.empty else np.nan,
                    "note": note,
                }
            )
    arm_order = {a: i for i, a in enumerate([*ARMS, "aided (first answer)"])}
    table = pd.DataFrame(out, columns=ARM_ACCURACY_COLUMNS)
    key = pd.DataFrame(
        {"task": table["task"] != ALL, "name": table["task"], "arm": table["arm"].map(arm_order)}
    )
    order = key.sort_values(["task", "name", "arm"], kind="stable").index
    return table.loc[order].reset_index(drop=True)


def session_accuracy(frame: pd.DataFrame, missing: Missing = "wrong") -> pd.DataFrame:
    """Crossover order check: the readers' mean accuracy per arm and session (period). The
    MRMC comparison assumes the arm effect does not depend on which arm came first; a large
    gap between sessions within an arm points at learning or fatigue. Readers without an
    answer yet in an arm are left out of it and named in `note`."""
    columns = ["arm", "session", "readers", "n", "mean_accuracy", "note"]
    if "session" not in frame.columns or frame["session"].isna().all():
        return pd.DataFrame(columns=columns)
    waiting = _not_started(frame, "arm")
    answered = frame["answer"].notna()
    rows = frame.assign(
        counted=answered if missing == "exclude" else True,
        right=right(frame),
    )
    rows = rows[_started(rows, "arm", waiting)]
    per_reader = rows.groupby(["arm", "session", "reader"]).agg(
        n=("counted", "sum"), correct=("right", "sum")
    )
    per_reader["accuracy"] = per_reader["correct"] / per_reader["n"].where(per_reader["n"] > 0)
    table = per_reader.groupby(["arm", "session"]).agg(
        readers=("accuracy", "size"), n=("n", "sum"), mean_accuracy=("accuracy", "mean")
    )
    table = table.reset_index()
    table["note"] = [not_started_words(waiting.get(str(a), [])) for a in table["arm"]]
    return table[columns]


def _number(value: float, digits: int = 3) -> str:
    """An accuracy or difference as every design conclusion writes it: 3 decimals, a true
    minus sign."""
    return f"{value:.{digits}f}".replace("-", "−") if np.isfinite(value) else "–"


def _bound(value: float, thresholds: tuple[float, ...]) -> str:
    """A CI bound as _number writes it, with more decimals (up to 9) when 3 would put it on
    the other side of, or on, a threshold it is compared with (0.0004 as "0.000 > 0",
    −0.0499999 as "−0.050 > −0.05"), so the words stay true of the number shown."""
    if not np.isfinite(value):
        return _number(value)
    for digits in range(3, 10):
        rounded = round(value, digits)
        if all(np.sign(rounded - t) == np.sign(value - t) for t in thresholds):
            break
    return _number(value, digits)


def non_inferiority(comparison: Comparison, margin: float, test: str, reference: str) -> dict:
    """Non-inferiority and superiority of `test` vs `reference` from the two-sided CI.

    H0 (non-inferiority): test − reference ≤ −margin; rejected at one-sided alpha/2 when the
    lower bound of the two-sided (1 − alpha) CI is above −margin. Superiority: lower bound > 0.

    `conclusion` is the one sentence the page, the API, the CSV and the ZIP's README give:
    the difference with its CI and level, then what the CI shows against the margin and 0.
    """
    low = comparison.ci_low
    shown = _bound(low, (0.0, -margin))
    level = f"{(1 - comparison.alpha) * 100:g}%"
    hypothesis = (
        f"H0: {test} − {reference} ≤ −{margin:g} against H1: > −{margin:g} (one-sided, "
        f"alpha {comparison.alpha / 2:g}: the lower bound of the two-sided {level} CI)"
    )
    difference = f"{test} − {reference} = {_number(comparison.estimate)}"
    if not np.isfinite(low):
        conclusion = (
            f"{difference}, no CI (the difference has no variance estimate): non-inferiority "
            "and superiority are not estimable"
        )
        p_ni = float("nan")
    else:
        difference += f" ({level} CI {shown} to {_number(comparison.ci_high)})"
        if low > 0:
            conclusion = (
                f"{difference}: {test} is superior to {reference} (lower bound {shown} > 0), "
                f"and so non-inferior at margin {margin:g}"
            )
        elif low > -margin:
            conclusion = (
                f"{difference}: {test} is non-inferior to {reference} at margin {margin:g} "
                f"(lower bound {shown} > −{margin:g}); superiority is not shown (lower bound "
                "≤ 0)"
            )
        else:
            conclusion = (
                f"{difference}: non-inferiority of {test} to {reference} at margin "
                f"{margin:g} is not shown (lower bound {shown} ≤ −{margin:g})"
            )
        z = (comparison.estimate + margin) / comparison.se
        p_ni = float(norm_sf(z) if np.isinf(comparison.df) else t_sf(z, comparison.df))
    return {
        "analysis": comparison.analysis,
        "margin": margin,
        "difference": comparison.estimate,
        "ci_low": low,
        "ci_high": comparison.ci_high,
        "p_non_inferiority": p_ni,
        "non_inferior": bool(np.isfinite(low) and low > -margin),
        "superior": bool(np.isfinite(low) and low > 0),
        "hypothesis": hypothesis,
        "conclusion": conclusion,
    }


def conclusions(results: dict | None) -> list[tuple[str, str]]:
    """(analysis, conclusion) per analysis (random readers; fixed readers), as the page, the
    API's `conclusions` and the ZIP's README.txt state them; empty when nothing compares."""
    table = (results or {}).get("tables", {}).get("non_inferiority")
    if table is None:
        return []
    return [(str(row["analysis"]), str(row["conclusion"])) for _, row in table.data.iterrows()]


def comparison_table(result: ORDesignResult, cube: Cube) -> pd.DataFrame:
    rows = []
    for comparison in (result.random, result.fixed):
        rows.append(
            {
                "comparison": cube.modalities.comparison,
                "analysis": comparison.analysis,
                "reference_mean": result.means[0].estimate,
                "test_mean": result.means[1].estimate,
                "difference": comparison.estimate,
                "se": comparison.se,
                "df": comparison.df,
                "ci_low": comparison.ci_low,
                "ci_high": comparison.ci_high,
                "statistic": comparison.statistic,
                "p_value": comparison.p_value,
                # The random-readers test is an F (1, df) and the fixed-readers one a
                # chi-square (1 df): each in its own column, named as MRMCaov prints them.
                "F": comparison.f if np.isfinite(comparison.df) else float("nan"),
                "X2": comparison.f if not np.isfinite(comparison.df) else float("nan"),
                "readers": len(cube.readers),
                "x_rays": len(cube.case_ids),
                "questions": cube.n_questions,
                "note": _note(comparison, len(cube.readers), result.components),
            }
        )
    return _range_notes(pd.DataFrame(rows))


def _range_notes(table: pd.DataFrame) -> pd.DataFrame:
    """Each row's note, with words where its interval passes -1 or 1 (shown as computed: it
    is the OR/Hillis result the R packages give)."""
    past = [
        difference_note(low, high)
        for low, high in zip(table["ci_low"], table["ci_high"], strict=True)
    ]
    table["note"] = [
        "; ".join(part for part in (note, said) if part)
        for note, said in zip(table["note"], past, strict=True)
    ]
    return table


def _note(comparison: Comparison, readers: int, components: Components) -> str:
    fixed = comparison.analysis.startswith("fixed readers")
    if not np.isfinite(comparison.se):
        return _not_estimable(fixed, components)
    if fixed:
        return "generalises to these readers only (new X-rays, not new readers)"
    if np.isinf(comparison.df):  # random readers: MS(T×R) = 0
        return (
            "every reader's aided − unaided difference is the same (MS(T×R) = 0): the Hillis "
            "df are infinite and the interval rests on Cov2 − Cov3 alone"
        )
    if readers < 4:
        return f"only {readers} readers: few df, a wide interval; see the fixed-readers row"
    return ""


def _not_estimable(fixed: bool, c: Components) -> str:
    """Why a comparison has no SE, from the terms of its denominator (OR/Hillis)."""
    between = c.cov2 - c.cov3

    def _g(value: float) -> str:
        return f"{value:.3g}".replace("-", "−")

    if fixed:
        den = c.var - c.cov1 + (c.r_tilde - 1) * between
        return (
            "not estimable: the readers' aided − unaided difference does not vary over X-rays "
            f"(Var − Cov1 + (r − 1)(Cov2 − Cov3) = {_g(den)} ≤ 0)"
        )
    return (
        "not estimable with random readers: every reader's aided − unaided difference is the "
        f"same (MS(T×R) = 0) and Cov2 − Cov3 = {_g(between)} ≤ 0, so the OR/Hillis "
        "denominator MS(T×R) + r·max(Cov2 − Cov3, 0) is 0"
    )


def components_table(result: ORDesignResult) -> pd.DataFrame:
    c = result.components
    rows = [
        ("Var(R)", c.var_r, "reader variance"),
        ("Var(T×R)", c.var_tr, "modality × reader variance"),
        ("Var (error)", c.var, "jackknife variance of a reader's accuracy (X-ray resampling)"),
        ("Cov1", c.cov1, "same reader, different modalities"),
        ("Cov2", c.cov2, "different readers, same modality"),
        ("Cov3", c.cov3, "different readers, different modalities"),
        ("MS(T)", c.ms_t, "modality mean square"),
        ("MS(R)", c.ms_r, f"reader mean square ({c.df_r} df)"),
        ("MS(T×R)", c.ms_tr, f"modality × reader mean square ({c.df_tr} df)"),
    ]
    return pd.DataFrame(rows, columns=["component", "estimate", "meaning"])


def design_results(frame: pd.DataFrame, policy: DesignPolicy | None = None) -> dict:
    """Every design-aware table of a two-arm or second-read study.

    Returns {"design": sentence, "tables": {name: DesignTable}, "result": ORDesignResult,
    "cube": Cube}. Raises AnalysisInputError when a letter is not canonical. When the
    comparison is not estimable yet (one reader, fewer than two X-rays read by everyone in
    both arms) "result" is None and "mrmc_difference" holds one "not estimable: why" row; the
    per-arm accuracy and reliance tables are still given.
    """
    policy = policy or DesignPolicy()
    check_canonical(frame)
    said = policy.describe()
    accuracy = DesignTable(
        arm_accuracy(frame, policy.missing),
        "question (per reader and arm); panel = mean of readers",
        "proportion correct over every question the reader read in the arm (anchor X-rays "
        "included); no interval here: the MRMC table gives the paired comparison's",
        said,
    )
    try:
        cube = modality_cube(frame, policy.missing)
        result = or_design(
            cube.correct,
            cube.counted,
            reader_groups=cube.groups,
            case_groups=cube.case_groups,
            alpha=policy.alpha,
        )
    except (AnalysisInputError, ValueError) as error:
        reason = f"not estimable: {error}"
        tables = {
            "arm_accuracy": accuracy,
            "mrmc_difference": DesignTable(
                pd.DataFrame({"note": [reason]}), "X-ray", "two-modality OR/Hillis", said
            ),
        }
        tables.update(reliance.reliance_tables(frame, alpha=policy.alpha, policy=said))
        return {
            "design": reason,
            "comparison": None,
            "tables": tables,
            "result": None,
            "cube": None,
        }
    reference, test = cube.modalities.labels
    xray = "X-ray: a reader's accuracy is over questions; the jackknife leaves out whole X-rays"
    if cube.split_plot:
        method = (
            "two-modality Obuchowski–Rockette with Hillis df for a split-plot design (readers "
            "and X-rays in groups; MS(T×R) pooled within groups, Cov2/Cov3 over same-group "
            "reader pairs; anchor X-rays left out of the comparison and used for agreement)"
        )
    else:
        method = "two-modality Obuchowski–Rockette with Hillis df (factorial design)"
    ni = [
        non_inferiority(c, policy.ni_margin, test, reference) for c in (result.random, result.fixed)
    ]
    tables = {
        "arm_accuracy": accuracy,
        "mrmc_difference": DesignTable(
            comparison_table(result, cube),
            xray,
            method + f"; {cube.modalities.sentence}; fixed readers: normal reference",
            said,
        ),
        "mrmc_variance_components": DesignTable(
            components_table(result), xray, method + "; jackknife covariances", said
        ),
        "non_inferiority": DesignTable(
            pd.DataFrame(ni),
            xray,
            "the two-sided CI of the MRMC difference against the margin",
            said,
        ),
    }
    if not is_second_read(frame):
        tables["arm_by_session"] = DesignTable(
            session_accuracy(frame, policy.missing),
            "reader (mean of the readers' accuracies per arm and session)",
            "order check, descriptive: the MRMC analysis assumes no arm × session interaction",
            said,
        )
    tables.update(reliance.reliance_tables(frame, alpha=policy.alpha, policy=said))
    return {
        "design": design_sentence(frame, cube),
        "comparison": cube.modalities.comparison,
        "tables": tables,
        "result": result,
        "cube": cube,
    }


def power_table(
    results: dict, effect: float, target: float = 0.8, alpha: float = 0.05, readers=range(3, 21)
) -> DesignTable:
    """Readers x X-rays needed to detect `effect` with `target` power, using this study as the
    pilot (its OR variance components and questions per X-ray). This is what the
    `mrmc_power SLUG --effect 0.05 --power 0.8` command and the page's power section print."""
    from analysis.stats import power

    unit = "X-ray (planned X-rays carry the pilot's questions per X-ray)"
    if results.get("result") is None:
        data = pd.DataFrame({"note": ["no pilot estimate: the comparison is not estimable yet"]})
        return DesignTable(data, unit, "Hillis–Obuchowski–Berbaum (2011) OR power", "")
    cube = results["cube"]
    if cube.split_plot:
        data = pd.DataFrame({"note": ["power for split-plot designs is not implemented"]})
        return DesignTable(data, unit, "Hillis–Obuchowski–Berbaum (2011) OR power", "")
    try:
        pilot = power.Pilot.from_components(results["result"].components, cube.n_questions)
        data = power.sample_size_table(pilot, effect, target, alpha, readers)
    except (ZeroDivisionError, ValueError, FloatingPointError) as error:
        # A degenerate pilot (e.g. accuracies that do not vary over X-rays): no estimate.
        reason = f"no pilot estimate: its variance components give none ({error})"
        data = pd.DataFrame({"note": [reason]})
        return DesignTable(data, unit, "Hillis–Obuchowski–Berbaum (2011) OR power", "")
    return DesignTable(
        data,
        unit,
        power.describe(pilot, effect, target, alpha),
        f"effect {effect:g} (accuracy scale), power {target:g}, alpha {alpha:g}",
    )


def as_json(results: dict) -> dict:
    """The design results as JSON-ready data for the API: each table as records with its
    unit, method and policy (NaN/inf as None)."""

    def clean(value):
        if isinstance(value, float | np.floating) and not np.isfinite(value):
            return None
        if isinstance(value, np.generic):
            return value.item()
        return value

    tables = {
        name: {
            "unit": table.unit,
            "method": table.method,
            "policy": table.policy,
            "rows": [
                {key: clean(value) for key, value in row.items()}
                for row in table.data.to_dict(orient="records")
            ],
        }
        for name, table in results["tables"].items()
    }
    return {
        "design": results["design"],
        "comparison": results["comparison"],
        "conclusions": [
            {"analysis": analysis, "conclusion": conclusion}
            for analysis, conclusion in conclusions(results)
        ],
        "tables": tables,
    }
