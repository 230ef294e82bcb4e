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

from analysis.confidence_analysis import methods_words
from analysis.stats import CLUSTER_CI_METHOD, LOGIT_METHOD, PAIRED_METHOD

if TYPE_CHECKING:
    from analysis.policy import AnalysisSettings

MISSING_KEYS = ["missing", "missing_means", "not_predicted"]
SELECTION_KEYS = [
    "excluded_questions",
    "exclude_rejected",
    "rejected_questions",
    "fast_answer_ms",
    "exclude_fast",
    "fast_answers",
]
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
    ci = settings.words("ci_method")
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
        shown = (
            f"; ci_low/ci_high and the fixed ones: {LOGIT_METHOD}"
            if table == "reader_panel"
            else ""
        )
        return (
            "X-ray (each question counted once; the jackknife leaves out an X-ray)",
            f"{what}, on the questions every reader (and the model) is counted on; "
            f"{settings.level} {OR_HILLIS}{shown}; `warning` below {settings.min_readers} "
            "readers; `note` where not estimable (with the reason) or where a difference's "
            "interval passes −1 or 1",
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
            f"Cohen's κ on {settings.words('scale', scale)}; {_kappa_bootstrap(settings)}; "
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
            f"Cohen's κ on {settings.words('scale', scale)}; no interval (CIs and n: "
            f"kappa_pairs_{scale})",
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
            "answer (one row per question, rater and arm: every question sampled in the arm "
            "the single-arm tables read; in a two-arm study also every question of the "
            "reader's group in the other arm, answer empty where not given yet)",
            "raw data; no statistics; `arm` (unaided / aided; empty for models) and `session` "
            "(the reader's session, 1 or 2, in which that arm was read) say which reading an "
            "answer is; `first_answer`, `first_confidence`: a second read's answer before the AI "
            "was shown and its rating; "
            "`ai_answer`: the AI's answer shown in the aided arm; `correct` is scored against "
            "`accepted` (the version `key_version`; `shown_version`: the words the rater saw; "
            "`original_accepted` / `adjudicated_accepted`: under each key policy); "
            "`excluded` and `rejected` mark the questions left out, `too_fast` the answers "
            "under fast_answer_ms",
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


# Which reading each output table covers, declared once: README.txt's and the XLSX about
# sheet's `arm:` line (exports.table_about), the page and the Methods read it. A study read in
# one unaided arm has nothing to tell apart (no line).
BOTH_ARMS_TABLES = ("arm_accuracy", "arm_by_session")
COMPARISON_TABLES = (
    "mrmc_difference",
    "mrmc_variance_components",
    "non_inferiority",
    "power",
    "auc_difference",
    "auc_variance_components",
    "auc_power",
)
# The confidence tables read per arm (analysis.confidence_analysis): each arm in its own rows.
CONFIDENCE_ARM_TABLES = (
    "roc_counts",
    "auc",
    "auc_vs_models",
    "roc_points",
    "roc_operating_points",
    "calibration",
    "calibration_bins",
    "accuracy_by_confidence",
    "confidence_discrimination",
)
AIDED_ARM_TABLES = ("reliance_agreement", "second_read_switches")
NO_ARM_TABLES = ("raters", "questions", "methods")
# The single-arm tables as the Methods name them (the others are listed by file name).
SINGLE_ARM_NAMES = (
    "accuracy (by task and category)",
    "reading time",
    "AI versus the reader panel",
    "paired comparisons (McNemar-type)",
    "κ agreement",
)


def _design(facts: dict | None) -> dict:
    return (facts or {}).get("design") or {}


def second_read(facts: dict | None) -> bool:
    return _design(facts).get("aid_mode") == "second-read"


def counted_arm(facts: dict | None) -> str | None:
    """The arm the single-arm tables and figures count: the design's `counted_arm`
    (selectors.study_facts), its first arm where a design leaves it out; None for facts with no
    design (a frame not from a study: nothing to say)."""
    design = _design(facts)
    arms = list(design.get("arms") or [])
    return design.get("counted_arm") or (arms[0] if arms else None)


CONFIDENCE_FAST_LINE = (
    "too_fast_answers: kept (these tables read every arm's answers, as the aided-vs-unaided "
    "tables do; exclude_fast applies to the single-arm tables only)"
)


def table_arm(facts: dict | None, table: str) -> str:
    """Which arm (reading) table `table` covers, in words; empty for a study read in one
    unaided arm and for tables of no reading (raters, questions, methods)."""
    design = _design(facts)
    arms = list(design.get("arms") or [])
    if "aided" not in arms or table in NO_ARM_TABLES:
        return ""
    second = second_read(facts)
    if table == "responses":
        return "every arm (column `arm`; `session` the reader's session)"
    if table in CONFIDENCE_ARM_TABLES:
        if len(arms) > 1:
            return (
                f"each arm in its own rows ({' and '.join(arms)}: column `arm` or `modality`; "
                "a rater named 'reader (arm)' where the table names raters)"
            )
        return "aided arm only" + (" (final answers, after the AI)" if second_read(facts) else "")
    if table in BOTH_ARMS_TABLES:
        first = ", and the aided reads' first answers (before the AI)" if second else ""
        return f"each arm, side by side ({' and '.join(arms)}){first}"
    if table in COMPARISON_TABLES:
        if second:
            return "aided arm: final answers (after the AI) against first answers (before it)"
        return "aided against unaided: both arms, on the readers who have read both"
    if table in AIDED_ARM_TABLES:
        return "aided arm only"
    counted = counted_arm(facts)
    if counted == "aided":
        what = "final answers, after the AI was shown" if second else "readers saw the AI's answer"
        said = f"aided arm only ({what})"
    else:
        said = (
            f"{counted} arm only (readers alone; the aided answers enter the aided-vs-unaided "
            "tables)"
        )
    waiting = design.get("not_in_counted_arm") or []
    if waiting:
        said += f"; left out (no {counted} answer yet): {', '.join(waiting)}"
    return said


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
    "Hillis SL, Obuchowski NA, Berbaum KS. Power estimation for multireader ROC methods: an "
    "updated and unified approach. Acad Radiol 2011;18:129-142.",
    "Holm S. A simple sequentially rejective multiple test procedure. Scand J Stat 1979;6:65-70.",
    "Cohen J. A coefficient of agreement for nominal scales. Educ Psychol Meas "
    "1960;20:37-46. Fleiss JL. Measuring nominal scale agreement among many raters. "
    "Psychol Bull 1971;76:378-382.",
    "Byrt T, Bishop J, Carlin JB. Bias, prevalence and kappa. J Clin Epidemiol "
    "1993;46:423-429 (PABAK).",
    "Wilson EB. Probable inference... J Am Stat Assoc 1927;22:209-212. Clopper CJ, Pearson "
    "ES. Biometrika 1934;26:404-413.",
]


# A study with a confidence scale (ROC, AUC, calibration) adds these.
CONFIDENCE_REFERENCES = [
    "DeLong ER, DeLong DM, Clarke-Pearson DL. Comparing the areas under two or more "
    "correlated receiver operating characteristic curves: a nonparametric approach. "
    "Biometrics 1988;44:837-845.",
    "Naeini MP, Cooper GF, Hauskrecht M. Obtaining well calibrated probabilities using "
    "Bayesian binning. AAAI 2015 (expected calibration error). Brier GW. Verification of "
    "forecasts expressed in terms of probability. Mon Weather Rev 1950;78:1-3.",
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

    design = _design_paragraph(result)
    if design:
        out.append(("Design", design))

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

    ci = s.words("ci_method")
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
            f"(complete cases); {_kappa_bootstrap(s)}. The reader panel's mean accuracy: "
            f"{LOGIT_METHOD}. The X-ray is the unit of resampling throughout."
            + _two_arm_methods(result),
        )
    )
    if result.confidence:
        out.append(("Confidence, ROC and calibration", methods_words(result.confidence)))
    elif result.confidence_error:
        out.append(
            (
                "Confidence, ROC and calibration",
                f"The analysis of the readers' confidence was refused: {result.confidence_error}.",
            )
        )
    references = [*REFERENCES, *(CONFIDENCE_REFERENCES if result.confidence else [])]
    out.append(("References", " ".join(f"[{i + 1}] {r}" for i, r in enumerate(references))))
    return out


def _plural_verb(n: int, word: str) -> str:
    return f"{_plural(n, word)} {'has' if n == 1 else 'have'}"


def _design_paragraph(result) -> str:
    """The design in words: arms, crossover and washout, second read, split-plot groups, the
    AI aid and how it was shown, and the design the aided-vs-unaided analysis used."""
    design = _design(result.facts)
    arms = list(design.get("arms") or [])
    if "aided" not in arms:
        return ""
    parts = [f"{design['sentence']}." if design.get("sentence") else ""]
    usable, missing = design.get("aid_usable", 0), design.get("aid_missing", 0)
    parts.append(
        f"AI aid: {design.get('aid_model') or 'the AI model'}'s answer, "
        f"{design.get('aid_mode_label') or design.get('aid_mode')}: the reader saw its option "
        "(letter and text, with the model's own words where it gave any); "
        f"{_plural_verb(usable, 'question')} a usable answer"
        + (f", {missing} showed that the AI gave no usable answer" if missing else "")
        + "."
    )
    if len(arms) > 1:
        days = design.get("washout_days", 0)
        parts.append(
            "Crossover: each reader read every question of their set once in each arm, in two "
            "sessions, the order of the arms counterbalanced over readers; washout "
            f"{_plural(days, 'day')} between finishing the first session and opening the second."
        )
    if second_read(result.facts):
        parts.append(
            "Second read: in each aided read the reader first answered alone, then saw the "
            "AI's answer and gave a final answer; both answers are kept and compared."
        )
    groups = design.get("reader_groups", 0)
    if groups:
        anchor = design.get("anchor_size", 0)
        parts.append(
            f"Split-plot: readers and X-rays in {groups} groups, each reader reading the X-rays "
            "of their own group"
            + (
                f", plus {_plural(anchor, 'anchor question')} read by everyone (used for "
                "agreement, left out of the aided-vs-unaided comparison)"
                if anchor
                else "; without anchor questions no question is read by every reader, so "
                "the reader-panel tables have no value"
            )
            + "."
        )
    if result.design:
        parts.append(f"Analysed: {result.design['design']}")
    elif result.design_error:
        parts.append(f"The aided-versus-unaided analysis was refused: {result.design_error}.")
    return " ".join(p for p in parts if p)


def _two_arm_methods(result) -> str:
    """The Statistical methods of a study with an aided arm: the two-modality OR/Hillis, the
    NI margin, reliance and power when present, and which arm each table covers."""
    facts, s = result.facts, result.settings
    if not table_arm(facts, "accuracy"):
        return ""
    parts = []
    comparison = result.design_table("mrmc_difference") if result.design else None
    if comparison is not None and result.design.get("result") is not None:
        parts.append(
            f"Aided versus unaided: {comparison.method}; the X-ray is the case (a reader's "
            "accuracy is over questions; the jackknife leaves out whole X-rays); random "
            "readers and cases, and fixed readers. Non-inferiority at margin "
            f"{s.ni_margin:g} on the accuracy scale: shown when the lower bound of the "
            f"two-sided {s.level} CI of the difference is above −{s.ni_margin:g} (one-sided "
            f"alpha {s.alpha / 2:g}); superiority when it is above 0."
        )
        cube = result.design.get("cube")
        if cube is not None and not cube.split_plot:
            parts.append(
                "Power for a future study (power.csv, the page's power section): "
                "Hillis–Obuchowski–Berbaum (2011) with this study's variance components as "
                "the pilot."
            )
    elif result.design:
        parts.append(f"Aided versus unaided: {result.design['design']}")
    reliance = result.design_table("reliance_agreement") if result.design else None
    if reliance is not None:
        parts.append(f"Reliance on the AI: {reliance.method}.")
    single = table_arm(facts, "accuracy")
    arms = [
        f"{', '.join(SINGLE_ARM_NAMES)} and the flow tables cover the {single}",
        f"arm_accuracy and arm_by_session: {table_arm(facts, 'arm_accuracy')}",
        f"the MRMC, non-inferiority and power tables: {table_arm(facts, 'mrmc_difference')}",
        f"reliance tables: {table_arm(facts, 'reliance_agreement')}",
        f"responses.csv: {table_arm(facts, 'responses')}",
    ]
    parts.append("Arms: " + "; ".join(arms) + ".")
    return " " + " ".join(parts)


def methods_table(result) -> pd.DataFrame:
    return pd.DataFrame(methods_section(result), columns=["section", "text"])


def methods_markdown(result) -> str:
    parts = ["# Methods and participants", ""]
    for heading, text in methods_section(result):
        parts += [f"## {heading}", "", text, ""]
    return "\n".join(parts)
