"""What each output table rests on (unit, method, the policy that applies to it), stated once.

Every table's entry in README.txt (and the XLSX "about" sheet) comes from
`table_description`, so an entry can only claim what is true of its table: a table that is
not resampled does not say "resampled by X-ray", a table on complete cases does not say
"pairwise deletion". Pure (no Django).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from analysis.stats.clustered import CLUSTER_CI_METHOD, PAIRED_METHOD

if TYPE_CHECKING:
    from analysis.pipeline import AnalysisSettings

CI_NAMES = {"wilson": "Wilson", "clopper-pearson": "Clopper–Pearson"}
MISSING_KEYS = ["missing", "missing_means", "not_predicted"]
SELECTION_KEYS = [
    "excluded_questions",
    "exclude_rejected",
    "rejected_questions",
    "fast_answer_ms",
    "exclude_fast",
    "fast_answers",
]
SCALE_NAMES = {"answer": "A–D answers", "correct": "correct / incorrect"}
# A table whose numbers rest on which answers are right names the key policy (and, through
# AnalysisResult.header_lines, the key version).
KEY_KEYS = ["key", "key_means"]

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
            [*MISSING_KEYS, *SELECTION_KEYS, "ci_method", "alpha", *KEY_KEYS],
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
            [*MISSING_KEYS, *SELECTION_KEYS, "min_readers", "alpha", *KEY_KEYS],
        )
    if table == "mcnemar":
        return (
            "question (n, the 2x2 counts); X-ray as the cluster (x_rays)",
            f"difference A − B with a {settings.level} CI and p from one method: {PAIRED_METHOD}; "
            f"p_holm: Holm over {settings.holm_family} (in_holm_family), empty outside it",
            [
                *MISSING_KEYS,
                *SELECTION_KEYS,
                "holm_family",
                "holm_family_means",
                "alpha",
                *KEY_KEYS,
            ],
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
            [
                *SELECTION_KEYS,
                "kappa_min_xrays",
                "alpha",
                *(KEY_KEYS if scale == "correct" else []),
            ],
        )
    if table.startswith(("kappa_answer_", "kappa_correct_")):
        scale = "answer" if table.startswith("kappa_answer_") else "correct"
        return (
            "question both raters answered (pairwise deletion)",
            f"Cohen's κ on {SCALE_NAMES[scale]}; no interval (CIs and n: kappa_pairs_{scale})",
            [*SELECTION_KEYS, *(KEY_KEYS if scale == "correct" else [])],
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
            [*SELECTION_KEYS, "time_cap_ms", "time_cap_means", "ci_method", "alpha", *KEY_KEYS],
        )
    if table in ("flow", "flow_raters"):
        return ("question and X-ray", counts, [*MISSING_KEYS, *SELECTION_KEYS])
    if table == "failed_extractions":
        return ("question presented to the model", counts, SELECTION_KEYS)
    if table == "key_changes":
        return (
            "version of a study question after the imported one (a correction or a reversal "
            "accepted, in this study or another holding the question)",
            "old key -> new key and accepted answers, error type, who decided under which "
            "rule, where and when; `words_changed`: the words shown to readers changed "
            "(earlier answers keep the key of the words they were given); no statistics",
            KEY_KEYS,
        )
    if table == "accuracy_by_key":
        return (
            "question (n), per rater (readers and AI models) and task",
            "correct / n under the original keys (as imported) and under the adjudicated "
            "keys, difference = adjudicated − original, answers_rescored = answers whose "
            "score differs; the same questions and answers as the accuracy table; no interval",
            [*MISSING_KEYS, *SELECTION_KEYS, *KEY_KEYS],
        )
    if table == "raters":
        return (
            "rater",
            "who is in the analysis: the display name every table uses (rater), the internal "
            "key (rater_id), the reader's username, kind and seniority; no statistics",
            [],
        )
    if table == "responses":
        return (
            "answer (one row per question and rater, every question sampled)",
            "raw data; no statistics; `excluded` and `rejected` mark the questions left out, "
            "`too_fast` the answers under fast_answer_ms; `correct` is scored against "
            "`accepted` (the version `key_version`; `shown_version`: the words the rater "
            "saw; `original_accepted` / `adjudicated_accepted`: under each key policy)",
            [
                "time_cap_ms",
                "time_cap_means",
                "fast_answer_ms",
                "exclude_fast",
                "fast_answers",
                *KEY_KEYS,
            ],
        )
    if table == "questions":
        return (
            "question",
            "raw data; no statistics; `correct_answer` is the key under the key policy",
            [*SELECTION_KEYS, *KEY_KEYS],
        )
    if table == "methods":
        return ("study", "the Methods and participants text, generated from the data", [])
    return ("see the table", "see the column names", [])


REFERENCES = [
    "Rao JNK, Scott AJ. A simple method for the analysis of clustered binary data. "
    "Biometrics 1992;48:577-585.",
    "Korn EL, Graubard BI. Confidence intervals for proportions with small expected number "
    "of positive counts estimated from survey data. Survey Methodology 1998;24:193-201.",
    "Obuchowski NA. On the comparison of correlated proportions for clustered data. "
    "Stat Med 1998;17:1495-1507.",
    "Obuchowski NA, Rockette HE. Hypothesis testing of diagnostic accuracy for multiple "
    "readers and multiple tests. Commun Stat Simul Comput 1995;24:285-308.",
    "Hillis SL. A comparison of denominator degrees of freedom methods for multiple "
    "observer ROC analysis. Stat Med 2007;26:596-619.",
    "Holm S. A simple sequentially rejective multiple test procedure. Scand J Stat 1979;6:65-70.",
    "Cohen J. A coefficient of agreement for nominal scales. Educ Psychol Meas "
    "1960;20:37-46. Fleiss JL. Measuring nominal scale agreement among many raters. "
    "Psychol Bull 1971;76:378-382.",
    "Byrt T, Bishop J, Carlin JB. Bias, prevalence and kappa. J Clin Epidemiol "
    "1993;46:423-429 (PABAK).",
    "Wilson EB. Probable inference... J Am Stat Assoc 1927;22:209-212. Clopper CJ, Pearson "
    "ES. Biometrika 1934;26:404-413.",
]


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def methods_section(result) -> list[tuple[str, str]]:
    """The "Methods and participants" text, as (heading, paragraph) pairs, generated from
    the analysed data, the study's facts (`result.facts`) and the policy (STARD 2015 /
    CLAIM items: participants, test methods, reference standard, analysis)."""
    s = result.settings
    facts = result.facts or {}
    out: list[tuple[str, str]] = []

    readers = facts.get("readers") or [{"name": r, "seniority": ""} for r in result.humans]
    described = ", ".join(
        f"{r['name']} ({r['seniority']})" if r.get("seniority") else r["name"] for r in readers
    )
    roles = facts.get("roles", {})
    out.append(
        (
            "Readers",
            f"{_plural(len(readers), 'reader')} with at least one answer, analysed: "
            f"{described or 'none'}. "
            + (
                "Study members: " + ", ".join(f"{n} {role}" for role, n in roles.items()) + ". "
                if roles
                else ""
            )
            + "Training year / seniority as entered by the PI (blank: not given).",
        )
    )

    analysed = result.analysed.drop_duplicates("question_id")
    per_task = analysed.groupby("task").size() if "task" in analysed else pd.Series(dtype=int)
    x_rays = int(analysed["case_id"].nunique()) if "case_id" in analysed else len(analysed)
    ages = np.asarray(facts.get("ages", []), dtype=float)
    age = (
        f"patient age median {np.median(ages):g} (IQR {np.quantile(ages, 0.25):g}–"
        f"{np.quantile(ages, 0.75):g}; {len(ages)} with an age)"
        if len(ages)
        else "patient age not recorded"
    )
    sexes = ", ".join(f"{k}: {v}" for k, v in facts.get("sexes", {}).items()) or "not recorded"
    out.append(
        (
            "Cases",
            f"{_plural(len(analysed), 'question')} on {_plural(x_rays, 'X-ray')} analysed ("
            + ", ".join(f"{task}: {n}" for task, n in per_task.items())
            + f"); {age}; sex of the sampled X-rays' patients: {sexes}.",
        )
    )

    models = facts.get("models", [])
    if models:
        lines = []
        for m in models:
            rules = ", ".join(f"{rule} {n}" for rule, n in m["rules"].items())
            lines.append(
                f"{m['name']} (file {m['source_file'] or 'not recorded'}, imported "
                f"{m['imported_at']}; answer extraction rules: {rules})"
            )
        out.append(
            (
                "AI models",
                "; ".join(lines)
                + ". Model version and prompt were not recorded at upload: state them here.",
            )
        )

    reviews = facts.get("reviews", {})
    excluded = rejected = 0
    if not result.flow.empty:
        stages = result.flow.drop_duplicates("stage").set_index("stage")["questions"]
        excluded = int(stages.get("Excluded by the PI", 0))
        rejected = int(stages.get("Rejected by an expert", 0))
    decisions = ", ".join(f"{k} {v}" for k, v in reviews.get("decisions", {}).items())
    out.append(
        (
            "Reference standard (answer key)",
            "The key is the dataset's correct option, versioned by the experts' "
            f"corrections; answers were scored against the {result.key_version}"
            + (
                " (key_changes.csv; every rater under both keys: accuracy_by_key.csv)"
                if facts.get("keys", {}).get("changes")
                else ""
            )
            + ". "
            f"{_plural(reviews.get('reviews', 0), 'expert review')} by "
            f"{_plural(reviews.get('experts', 0), 'expert')} covered "
            f"{_plural(reviews.get('questions_reviewed', 0), 'question')}"
            + (f" (decisions: {decisions})" if decisions else "")
            + f". {_plural(excluded, 'question')} excluded by the PI "
            + ("(kept: policy)" if s.include_excluded else "(left out)")
            + f"; {_plural(rejected, 'further question')} rejected by an expert "
            + ("(left out: policy exclude_rejected)." if s.exclude_rejected else "(kept)."),
        )
    )

    c = facts.get("conditions", {})
    if c:
        order = "a random order per reader" if c["random_order"] else "study order"
        revision = (
            "could be revised (each revision kept)" if c["allow_revision"] else "final once given"
        )
        locked = "; locked when the reader finished" if c["lock_on_finish"] else ""
        out.append(
            (
                "Reading conditions",
                f"Clinical indication {'shown' if c['show_indication'] else 'not shown'}; "
                f"questions in {order}; answers {revision}{locked}; reading time per answer "
                f"capped at {s.time_cap_ms / 60000:g} min when stored.",
            )
        )

    ci = CI_NAMES[s.ci_method]
    missing = (
        "a missing answer counts as wrong"
        if s.missing == "wrong"
        else "missing answers are left out"
    )
    out.append(
        (
            "Statistical methods",
            f"Accuracy per rater with a {s.level} {CLUSTER_CI_METHOD.format(ci=ci)}; "
            f"{missing}. "
            f"Pairs of raters: {PAIRED_METHOD}; Holm's adjustment over "
            f"{'the AI-versus-reader pairs' if s.holm_family == 'ai_vs_reader' else 'every pair'}. "
            f"AI versus the reader panel: {OR_HILLIS}; with fewer than {s.min_readers} "
            "readers the random-readers result is flagged as unreliable. Agreement: Cohen's κ "
            f"(pairwise deletion) with raw agreement and PABAK, Fleiss' κ of the readers "
            f"(complete cases); {_kappa_bootstrap(s)}. The X-ray is the unit of resampling "
            "throughout.",
        )
    )
    out.append(("References", " ".join(f"[{i + 1}] {r}" for i, r in enumerate(REFERENCES))))
    return out


def methods_table(result) -> pd.DataFrame:
    return pd.DataFrame(methods_section(result), columns=["section", "text"])


def methods_markdown(result) -> str:
    parts = ["# Methods and participants", ""]
    for heading, text in methods_section(result):
        parts += [f"## {heading}", "", text, ""]
    return "\n".join(parts)
