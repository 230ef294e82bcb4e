"""What each output table rests on (unit, method, the policy that applies to it), stated once.

Every CSV's header block comes from `table_description`, so a header can only claim what is
true of its table: a table that is not resampled does not say "resampled by X-ray", a table
on complete cases does not say "pairwise deletion". Pure (no Django).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from analysis.stats.clustered import CLUSTER_CI_METHOD, PAIRED_METHOD

if TYPE_CHECKING:
    from analysis.pipeline import AnalysisSettings

CI_NAMES = {"wilson": "Wilson", "clopper-pearson": "Clopper–Pearson"}
MISSING_KEYS = ["missing", "missing_means", "not_predicted"]
SELECTION_KEYS = ["excluded_questions", "exclude_rejected", "rejected_questions"]
SCALE_NAMES = {"answer": "A–D answers", "correct": "correct / incorrect"}

OR_HILLIS = (
    "Obuchowski–Rockette with Hillis df (random readers and random X-rays; jackknife leaving "
    "out one X-ray with all its questions), never clipped, with MS(R), Var and Cov2; beside "
    "it the fixed-readers (FRRC) interval and p (jackknife variance of the reader mean, "
    "normal reference: generalises to X-rays, not to readers)"
)


def _kappa_bootstrap(settings: AnalysisSettings) -> str:
    return (
        f"percentile bootstrap {settings.level} CI drawing whole X-rays ({settings.n_boot} "
        f"replicates, seed {settings.seed}); `caveat` where fewer than "
        f"{settings.kappa_min_xrays} X-rays or all replicates equal"
    )


def table_description(settings: AnalysisSettings, table: str) -> tuple[str, str, list[str]]:
    """(unit of analysis, method, policy keys that apply) for one output table."""
    ci = CI_NAMES[settings.ci_method]
    accuracy_ci = f"{settings.level} " + CLUSTER_CI_METHOD.format(ci=ci)
    counts = "counts; no interval"
    if table in ("accuracy", "accuracy_by_category"):
        return (
            "question (n); X-ray as the cluster (x_rays; deff, n_eff per row)",
            f"accuracy = correct / n with a {accuracy_ci}",
            [*MISSING_KEYS, *SELECTION_KEYS, "ci_method", "alpha"],
        )
    if table in ("ai_vs_readers", "reader_panel"):
        what = (
            "mean reader accuracy minus the model's"
            if table == "ai_vs_readers"
            else "mean reader accuracy"
        )
        return (
            "X-ray (each question counted once; the jackknife leaves out an X-ray)",
            f"{what}, on the questions every reader (and the model) is counted on; "
            f"{settings.level} {OR_HILLIS}; `warning` below {settings.min_readers} readers; "
            "`note` where not estimable",
            [*MISSING_KEYS, *SELECTION_KEYS, "min_readers", "alpha"],
        )
    if table == "mcnemar":
        return (
            "question (n, the 2x2 counts); X-ray as the cluster (x_rays)",
            f"difference A − B with a {settings.level} CI and p from one method: {PAIRED_METHOD}; "
            f"p_holm: Holm over {settings.holm_family} (in_holm_family), empty outside it",
            [*MISSING_KEYS, *SELECTION_KEYS, "holm_family", "holm_family_means", "alpha"],
        )
    if table == "fleiss":
        return (
            "question answered by every reader (complete cases, n); X-ray resampled",
            f"Fleiss' κ on A–D answers; {_kappa_bootstrap(settings)}",
            [*SELECTION_KEYS, "kappa_min_xrays", "alpha"],
        )
    if table.startswith("kappa_pairs_"):
        scale = table.removeprefix("kappa_pairs_")
        return (
            "question both raters answered (pairwise deletion, n); X-ray resampled (x_rays)",
            f"Cohen's κ on {SCALE_NAMES.get(scale, scale)}; {_kappa_bootstrap(settings)}; "
            "raw agreement and PABAK beside; `caveat` also where agreement is high and κ low "
            "(prevalence)",
            [*SELECTION_KEYS, "kappa_min_xrays", "alpha"],
        )
    if table.startswith(("kappa_answer_", "kappa_correct_")):
        scale = "answer" if table.startswith("kappa_answer_") else "correct"
        return (
            "question both raters answered (pairwise deletion)",
            f"Cohen's κ on {SCALE_NAMES[scale]}; no interval (CIs and n: kappa_pairs_{scale})",
            SELECTION_KEYS,
        )
    if table == "reading_time":
        return (
            "answer with a recorded time (n)",
            "median and quartiles of seconds on screen, total minutes; no interval",
            [*SELECTION_KEYS, "time_cap_ms", "time_cap_means"],
        )
    if table == "accuracy_by_time":
        return (
            "answer with a recorded time, in quartiles of each reader's own time; X-ray as "
            "the cluster",
            f"accuracy per quartile with a {accuracy_ci}",
            [*SELECTION_KEYS, "time_cap_ms", "time_cap_means", "ci_method", "alpha"],
        )
    if table in ("flow", "flow_raters"):
        return ("question and X-ray", counts, [*MISSING_KEYS, *SELECTION_KEYS])
    if table == "failed_extractions":
        return ("question presented to the model", counts, SELECTION_KEYS)
    if table == "raters":
        return ("rater", "who is in the analysis (kind, seniority); no statistics", [])
    if table == "responses":
        return (
            "answer (one row per question and rater, every question sampled)",
            "raw data; no statistics; `excluded` and `rejected` mark the questions left out",
            ["time_cap_ms", "time_cap_means"],
        )
    if table == "questions":
        return ("question", "raw data; no statistics", SELECTION_KEYS)
    if table == "methods":
        return ("study", "the Methods and participants text, generated from the data", [])
    return ("see the table", "see the column names", [])
