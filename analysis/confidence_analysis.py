"""The analyses of a study with a confidence scale, as tables with what each rests on: ROC
curves and AUCs of the binary questions per reader and arm, OR/Hillis on AUC (aided against
unaided; readers against AI models), power from this study as an AUC pilot, calibration of
the readers' and the models' probabilities, and accuracy by confidence level.

`confidence_results(frame, scale, ...)` is the one call the pipeline makes (`attach_confidence`)
with the readers' rows of every arm (the design frame's columns, or the single arm's) and the
models' probabilities; nothing here reads the database. A study without a scale has none of
these tables; a study with a scale but no binary question has the confidence tables only.

Every table is a `DesignTable` (data, unit, method, policy) so the page, README.txt and the
XLSX about sheet say what its numbers rest on; the rating rule (`RatingScale.rule`) is in
every ROC table's method.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from analysis.stats import (
    ANCHOR,
    AUC_COVARIANCE_WORDS,
    AUC_UNIT,
    DISCRIMINATION_METHOD,
    FIXED_CASES,
    FIXED_READERS,
    LEVEL_METHOD,
    PRESENT_OPTION,
    RANDOM,
    AnalysisInputError,
    AucMrmc,
    Binning,
    DesignTable,
    RatingScale,
    accuracy_by_confidence,
    auc_mrmc,
    auc_panel,
    auc_pilot,
    auc_power_method,
    auc_sample_size_table,
    auc_vs_models_method,
    auc_vs_models_table,
    calibration,
    calibration_method,
    confidence_answers,
    confidence_discrimination,
    describe_scale,
    difference_note,
    few_readers_warning,
    operating_points,
    ratings_cube,
    reader_probabilities,
    roc_curves,
    roc_ratings,
)

# The tables, in the order the exports write them and the page shows them.
CONFIDENCE_TABLES: tuple[str, ...] = (
    "roc_counts",
    "auc",
    "auc_difference",
    "auc_variance_components",
    "auc_vs_models",
    "auc_power",
    "roc_points",
    "roc_operating_points",
    "calibration",
    "calibration_bins",
    "accuracy_by_confidence",
    "confidence_discrimination",
)
FIRST_READ = "aided (first answer)"  # a second read's answer before the AI (design tables' name)
# The readings in the order the tables list them; a comparison is the second minus the first.
ARMS = ("unaided", FIRST_READ, "aided")
PANEL = "mean of readers"
POOLED = "readers pooled"  # accuracy per confidence level: every reader's answers of an arm
MODELS = "model"  # the models' rows' modality in the ROC tables (every arm's questions)
# A model's rows: whether its answer is right, its probability of that (calibration), its
# probability that a binary question's finding is present (its ROC rating) and whether its
# answer was the 'present' option (its operating point); NaN where not given.
MODEL_COLUMNS = (
    "model",
    "case_id",
    "question_id",
    "correct",
    "probability",
    "present_probability",
    "answer_present",
)
CALIBRATION_EVENT = "the chosen answer is correct"


@dataclass(frozen=True)
class ConfidencePolicy:
    """The part of the analysis policy these tables rest on."""

    alpha: float = 0.05
    n_boot: int = 1000
    seed: int = 0
    min_readers: int = 4
    power_effect: float = 0.05  # AUC difference the power table plans for
    power_target: float = 0.8

    @property
    def level(self) -> str:
        return f"{(1 - self.alpha) * 100:g}%"

    def describe(self) -> str:
        return (
            f"{self.level} two-sided CIs; a question a reader did not rate (no answer, or no "
            "confidence) is left out of that reader's AUC whatever the missing-answer policy; "
            f"bootstrap {self.n_boot} replicates by X-ray, seed {self.seed}"
        )


def _empty(why: str) -> pd.DataFrame:
    return pd.DataFrame({"note": [why]})


def _arm_order(arms) -> list[str]:
    present = [str(a) for a in pd.unique(pd.Series(arms, dtype=object))]
    return [a for a in ARMS if a in present] + sorted(a for a in present if a not in ARMS)


def with_first_reads(frame: pd.DataFrame) -> pd.DataFrame:
    """A second read's rows with its first answers (before the AI: `first_answer`,
    `first_confidence`) as a reading of their own, FIRST_READ; other frames as they are."""
    if "first_answer" not in frame.columns or not frame["first_answer"].notna().any():
        return frame
    aided = frame[frame["arm"] == "aided"]
    first = aided.assign(
        arm=FIRST_READ,
        answer=aided["first_answer"],
        confidence=aided.get("first_confidence", pd.Series(None, index=aided.index)),
    )
    return pd.concat([first, frame], ignore_index=True)


def split_plot(ratings: pd.DataFrame, frame: pd.DataFrame) -> tuple[pd.DataFrame, dict]:
    """A split-plot study's ratings without its anchor X-rays (read by every group, they
    would tie the groups together) and each reader's group; other studies' as they are, {}."""
    if "case_group" not in frame.columns or not frame["case_group"].notna().any():
        return ratings, {}
    anchors = set(frame.loc[frame["case_group"] == ANCHOR, "case_id"])
    ratings = ratings[~ratings["case_id"].isin(anchors)].reset_index(drop=True)
    by_reader = frame.dropna(subset=["reader_group"]).drop_duplicates("reader")
    groups = {
        str(r): str(g)
        for r, g in zip(by_reader["reader"], by_reader["reader_group"], strict=True)
        if str(r) in set(ratings["reader"])
    }
    return ratings, groups


def comparison_ratings(ratings: pd.DataFrame, frame: pd.DataFrame) -> tuple[pd.DataFrame, dict]:
    """The ratings the aided-vs-unaided AUC comparison reads, and each reader's split-plot
    group ({} without groups): readers who rated in both arms; in a split-plot study the
    anchor X-rays left out (as the accuracy comparison leaves them out)."""
    both = ratings.groupby("reader")["modality"].nunique()
    ratings = ratings[ratings["reader"].isin(both.index[both == ratings["modality"].nunique()])]
    return split_plot(ratings.reset_index(drop=True), frame)


def _difference_rows(mrmc: AucMrmc, method: str, min_readers: int) -> list[dict]:
    result = mrmc.result
    rows = []
    warning = few_readers_warning(len(result.readers), min_readers)
    for analysis in result.analyses:
        test = analysis.global_test
        for d in analysis.differences:
            rows.append(
                {
                    "comparison": d.comparison,
                    "covariance": method,
                    "analysis": analysis.name,
                    "reference_mean": result.fom[1].mean(),
                    "test_mean": result.fom[0].mean(),
                    "difference": d.estimate,
                    "se": d.se,
                    "df": d.df,
                    "ci_low": d.ci_low,
                    "ci_high": d.ci_high,
                    "statistic": d.statistic,
                    "p_value": d.p_value,
                    "test": test.statistic_name,
                    "test_value": test.statistic,
                    "test_df2": test.df2,
                    "readers": len(result.readers),
                    "x_rays": len(mrmc.cube.case_ids),
                    "questions": len(mrmc.cube.question_ids),
                    "warning": warning if analysis.name == RANDOM else "",
                    "note": difference_note(d.ci_low, d.ci_high),
                }
            )
    return rows


def _components(mrmc: AucMrmc, method: str) -> pd.DataFrame:
    from analysis.stats import components_frame

    return components_frame(mrmc.result.components).assign(covariance=method)


def _comparison(ratings, frame, arms, policy, rule) -> tuple[dict, AucMrmc | None, dict]:
    """auc_difference, auc_variance_components and auc_power of a two-arm study, the
    jackknife analysis, and what it read: {"ratings", "groups", "delong": the DeLong analysis
    or None} (the package files' rows)."""
    unit = AUC_UNIT
    tables: dict[str, DesignTable] = {}
    said = policy.describe()
    compared, groups = comparison_ratings(ratings, frame)
    if compared.empty:  # mid-study: each reader has read one arm so far
        why = "not estimable yet: no reader has rated binary questions in both arms"
        tables["auc_difference"] = DesignTable(_empty(why), unit, "OR/Hillis on AUC", said)
        return tables, None, {}
    order = [arms[1], arms[0]]  # test first: differences are test − reference
    made: dict[str, AucMrmc] = {}
    rows, components = [], []
    for method in ("jackknife", "DeLong"):
        try:
            mrmc = auc_mrmc(compared, cov=method, modalities=order, reader_groups=groups or None)
        except AnalysisInputError as error:
            if method == "jackknife":
                why = f"not estimable: {error}"
                tables["auc_difference"] = DesignTable(_empty(why), unit, "OR/Hillis on AUC", said)
                return tables, None, {}
            continue  # DeLong where its design allows it only (method words say when)
        made[method] = mrmc
        rows += _difference_rows(mrmc, method, policy.min_readers)
        components.append(_components(mrmc, method))
    jackknife = made["jackknife"]
    method_words = (
        f"{jackknife.method}; beside the jackknife, DeLong's covariance where every X-ray holds "
        "one binary question and every reader rated every question in both arms ("
        + ("given" if "DeLong" in made else "not given here")
        + "); fixed readers: normal reference (chi-square test); fixed cases: the readers' "
        f"ANOVA; {rule}"
    )
    tables["auc_difference"] = DesignTable(pd.DataFrame(rows), unit, method_words, said)
    tables["auc_variance_components"] = DesignTable(
        pd.concat(components, ignore_index=True), unit, method_words, said
    )
    tables["auc_power"] = _power(jackknife, policy)
    read = {"ratings": compared, "groups": groups, "delong": made.get("DeLong")}
    return tables, jackknife, read


def _power(pilot: AucMrmc, policy: ConfidencePolicy) -> DesignTable:
    unit = "X-ray (planned X-rays carry the pilot's binary questions per X-ray)"
    effect, target = policy.power_effect, policy.power_target
    try:
        planned = auc_pilot(pilot)
        data = auc_sample_size_table(planned, effect, target, policy.alpha)
    except (AnalysisInputError, ZeroDivisionError, ValueError, FloatingPointError) as error:
        return DesignTable(
            _empty(f"no pilot estimate: {error}"), unit, "Hillis–Obuchowski–Berbaum (2011)", ""
        )
    return DesignTable(
        data,
        unit,
        auc_power_method(planned, effect, policy.power_target, policy.alpha),
        f"effect {effect:g} (AUC), power {target:g}, alpha {policy.alpha:g}",
    )


LEFT_OUT = "left out of the mean of readers, the comparisons and the curves"


def estimable(ratings: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The ratings of every reader (per arm) and model whose AUC has a jackknife interval, and
    a row for each one left out with why. Mid-study a reader may have rated no positive or no
    negative yet, or all of them on one X-ray: that reader is left out of every AUC table and
    curve, so the rest of the panel keeps its AUCs, its mean and its comparisons."""
    kept, left_out = [], []
    for (modality, reader), own in ratings.groupby(["modality", "reader"], sort=False):
        try:
            auc_panel(own)  # the reader's own AUC and its jackknife by X-ray
        except AnalysisInputError as error:
            truth = own.loc[own["rating"].notna(), "truth"].astype(bool)
            left_out.append(
                {
                    "modality": modality,
                    "reader": reader,
                    "positives": int(truth.sum()),
                    "negatives": int((~truth).sum()),
                    "note": f"not estimable: {error}; {LEFT_OUT}",
                }
            )
        else:
            kept.append(own)
    columns = ["modality", "reader", "positives", "negatives", "note"]
    return (
        pd.concat(kept, ignore_index=True) if kept else ratings.iloc[:0],
        pd.DataFrame(left_out, columns=columns),
    )


def stacked(parts: list[pd.DataFrame]) -> pd.DataFrame:
    """The parts one under the other, a column of whole numbers in every part that has it
    kept whole (a part without it, such as a note row, leaves it empty, not 6.0)."""
    out = pd.concat(parts, ignore_index=True)
    for column in out.columns:
        kinds = [part[column].dtype for part in parts if column in part.columns and len(part)]
        if kinds and all(pd.api.types.is_integer_dtype(kind) for kind in kinds):
            out[column] = out[column].astype("Int64")
    return out


def _auc_table(
    ratings: pd.DataFrame, left_out: pd.DataFrame, arms: list[str], policy: ConfidencePolicy
) -> pd.DataFrame:
    """Per arm: each reader's AUC with a normal interval (jackknife by X-ray), then the mean
    of readers (random readers with Hillis df; fixed readers), then a row for each reader
    left out (`estimable`), its `note` saying why."""
    parts = []
    for arm in arms:
        own = ratings[ratings["modality"] == arm]
        if not own.empty:
            try:
                table = auc_panel(own, alpha=policy.alpha)
            except AnalysisInputError as error:  # the panel's design, not one reader's ratings
                table = pd.DataFrame({"modality": [arm], "note": [f"not estimable: {error}"]})
            if arm == MODELS:  # each model alone: no panel of models
                table = table[table["reader"] != PANEL] if "reader" in table else table
            parts.append(table)
        parts.append(left_out[left_out["modality"] == arm])
    parts = [part for part in parts if len(part)]
    return stacked(parts) if parts else _empty("no binary question rated")


def _models_vs_readers(ratings, frame, models, arms, policy) -> pd.DataFrame:
    rated = models.dropna(subset=["present_probability"]) if models is not None else None
    if rated is None or rated.empty:
        return _empty("no AI model gave a probability for a binary question")
    table_models = rated.rename(columns={"present_probability": "rating"})[
        ["model", "question_id", "rating"]
    ]
    parts = []
    for arm in arms:
        own, groups = split_plot(ratings[ratings["modality"] == arm], frame)
        try:
            parts.append(
                auc_vs_models_table(
                    own,
                    table_models,
                    alpha=policy.alpha,
                    min_readers=policy.min_readers,
                    reader_groups=groups or None,
                )
            )
        except AnalysisInputError as error:
            parts.append(pd.DataFrame({"modality": [arm], "note": [f"not estimable: {error}"]}))
    return stacked(parts)


def model_ratings(ratings: pd.DataFrame, models: pd.DataFrame | None) -> pd.DataFrame:
    """The models' ratings of the readers' binary questions, as a ratings frame (modality
    "model", the question's truth as the readers' rows have it)."""
    if models is None:
        return pd.DataFrame(columns=ratings.columns)
    rated = models.dropna(subset=["present_probability"])
    truth = ratings.drop_duplicates("question_id").set_index("question_id")["truth"]
    rated = rated[rated["question_id"].isin(truth.index)]
    return pd.DataFrame(
        {
            "reader": rated["model"].astype(str),
            "modality": MODELS,
            "case_id": rated["case_id"],
            "question_id": rated["question_id"],
            "truth": rated["question_id"].map(truth),
            "rating": rated["present_probability"].astype(float),
            "present": rated["answer_present"].astype(float),
        }
    )


def _curves(ratings: pd.DataFrame) -> pd.DataFrame:
    """Every rater's empirical operating points per modality (arm, or "model")."""
    parts = []
    for _, own in ratings.groupby("modality", sort=False):
        try:
            parts.append(roc_curves(ratings_cube(own)))
        except AnalysisInputError:
            continue
    columns = ["modality", "reader", "threshold", "fpr", "tpr"]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=columns)


def _per_arm(events: pd.DataFrame, compute) -> pd.DataFrame:
    """`compute(rows)` for each arm's rows (models: arm "model"), with an `arm` column first."""
    parts = [
        compute(rows.drop(columns="arm")).assign(arm=arm)
        for arm, rows in events.groupby("arm", sort=False)
    ]
    return _arm_first(pd.concat(parts, ignore_index=True))


def _arm_first(table: pd.DataFrame) -> pd.DataFrame:
    return table[["arm", *[c for c in table.columns if c != "arm"]]]


def _calibration(frame, scale, models, policy) -> tuple[DesignTable, DesignTable] | None:
    """Readers (percent scales) per arm and models with probabilities, event: the chosen
    answer is correct; None when no one gave a probability."""
    events = [reader_probabilities(frame, scale)]
    if models is not None:
        given = models.dropna(subset=["probability"])
        events.append(
            pd.DataFrame(
                {
                    "rater": given["model"].astype(str),
                    "arm": MODELS,
                    "case_id": given["case_id"],
                    "question_id": given["question_id"],
                    "probability": given["probability"].astype(float),
                    "outcome": given["correct"].astype(int),
                }
            )
        )
    events = [e for e in events if not e.empty]
    if not events:
        return None
    data = pd.concat(events, ignore_index=True)
    binning = Binning()
    summaries, bins = [], []
    for arm, rows in data.groupby("arm", sort=False):
        summary, arm_bins = calibration(
            rows.drop(columns="arm"),
            binning,
            n_boot=policy.n_boot,
            seed=policy.seed,
            alpha=policy.alpha,
        )
        summaries.append(summary.assign(arm=arm))
        bins.append(arm_bins.assign(arm=arm))
    summary, bins = (_arm_first(pd.concat(parts, ignore_index=True)) for parts in (summaries, bins))
    method = calibration_method(binning, policy.n_boot, policy.alpha, CALIBRATION_EVENT)
    unit = "answer with a probability (question); X-ray resampled (all of its questions together)"
    said = policy.describe()
    return DesignTable(summary, unit, method, said), DesignTable(bins, unit, method, said)


def confidence_results(
    frame: pd.DataFrame,
    scale: RatingScale,
    *,
    models: pd.DataFrame | None = None,
    policy: ConfidencePolicy | None = None,
) -> dict:
    """Every table of a study with a confidence scale (module docstring).

    `frame`: the readers' rows, one per (reader, arm, question): reader, arm, case_id,
    question_id, answer, correct_answer (+ accepted), present_option, confidence, and in a
    split-plot study reader_group and case_group. `models`: per model and question, whether
    its answer is correct and its probabilities: `probability` (of its chosen answer being
    right), `present_probability` (that a binary question's finding is present) and
    `answer_present` (its answer was the 'present' option), NaN where not given.

    Returns {"scale", "rule", "arms", "tables": {name: DesignTable}, "mrmc": the aided-vs-
    unaided AucMrmc (or None), "compared": what it read ({"ratings", "groups", "delong": the
    DeLong AucMrmc or None}; {}
    without it), "ratings": every binary question's ratings}.
    """
    policy = policy or ConfidencePolicy()
    said = policy.describe()
    rule = scale.rule
    frame = with_first_reads(frame)
    ratings, counts = roc_ratings(frame, scale)
    arms = _arm_order(frame["arm"])
    tables: dict[str, DesignTable] = {}
    mrmc, compared = None, {}
    if not ratings.empty:
        roc_unit = AUC_UNIT
        tables["roc_counts"] = DesignTable(
            counts,
            "binary question, per reader and arm",
            "counts of the binary questions each reader rated (positives: the key is the "
            "'present' option), answered without a confidence, or left unanswered, and "
            "(no_truth) those whose key accepts both the 'present' option and an 'absent' one "
            "(several valid answers: no truth, left out of the ROC); no statistics",
            said,
        )
        everyone = pd.concat([ratings, model_ratings(ratings, models)], ignore_index=True)
        analysed, left_out = estimable(everyone)
        readers = analysed[analysed["modality"] != MODELS]
        tables["auc"] = DesignTable(
            _auc_table(analysed, left_out, [*arms, MODELS], policy),
            roc_unit,
            "empirical (trapezoidal, ties 1/2) AUC per reader with a normal interval from its "
            f"variance over X-rays ({AUC_COVARIANCE_WORDS['jackknife']}); the mean of readers: "
            f"{RANDOM} (OR/Hillis, Hillis df) and {FIXED_READERS} (normal), as MRMCaov's "
            "per-modality means; AI models (modality 'model'): each model's AUC over the binary "
            "questions the readers rated, its probability that the finding is present as its "
            f"rating; intervals not clipped to [0, 1]; a reader whose AUC has no jackknife "
            f"interval yet (no positive or no negative rated, or all on one X-ray) is {LEFT_OUT} "
            f"(note); {rule}",
            said,
        )
        if len(arms) == 2 and readers["modality"].nunique() == 2:
            made, mrmc, compared = _comparison(readers, frame, arms, policy, rule)
            tables.update(made)
        tables["auc_vs_models"] = DesignTable(
            _models_vs_readers(readers, frame, models, arms, policy),
            roc_unit,
            auc_vs_models_method("jackknife")
            + f"; per arm; split-plot: by the study's groups, anchor X-rays left out (as the "
            f"accuracy analysis); {FIXED_CASES}: not shown; {rule}",
            said,
        )
        tables["roc_points"] = DesignTable(
            _curves(analysed),
            "operating point of a reader (per arm) or a model",
            "empirical ROC points, one per distinct rating t ('present' when rating ≥ t), "
            "from (0, 0) to (1, 1), as MRMCaov's empirical curve; a model's rating is its "
            f"probability that the finding is present; {rule}",
            said,
        )
        tables["roc_operating_points"] = DesignTable(
            operating_points(everyone.dropna(subset=["present"])),
            "binary question rated, per reader and arm (models: arm 'model')",
            "the operating point of the answers themselves ('present' answered): sensitivity "
            "(tpr) over the positives rated, 1 − specificity (fpr) over the negatives rated; "
            "no interval",
            said,
        )
    calibrated = _calibration(frame, scale, models, policy)
    if calibrated is not None:
        tables["calibration"], tables["calibration_bins"] = calibrated
    answers = confidence_answers(frame, scale)
    if not answers.empty:
        unit = "answer with a confidence (every question, binary or not); X-ray as the cluster"
        tables["accuracy_by_confidence"] = DesignTable(
            _per_arm(answers, lambda rows: accuracy_by_confidence(rows, policy.alpha, POOLED)),
            unit,
            f"proportion correct per confidence level ({describe_scale(scale)}) with a "
            f"{policy.level} {LEVEL_METHOD}; per arm, '{POOLED}' pooling the arm's answers of "
            "every reader",
            said,
        )
        tables["confidence_discrimination"] = DesignTable(
            _per_arm(answers, lambda rows: confidence_discrimination(rows, policy.alpha)),
            unit,
            DISCRIMINATION_METHOD,
            said,
        )
    return {
        "scale": scale,
        "rule": rule,
        "arms": arms,
        "tables": {name: tables[name] for name in CONFIDENCE_TABLES if name in tables},
        "mrmc": mrmc,
        "compared": compared,
        "ratings": ratings,
    }


def model_rows(responses: pd.DataFrame, probabilities: pd.DataFrame | None) -> pd.DataFrame | None:
    """The models' rows `confidence_results` reads, from the responses frame (a model's
    answer, whether it is correct and whether it was a binary question's present option) and
    its probabilities (model, question_id, probability, present_probability:
    selectors.model_probabilities); None when no model gave a probability."""
    if probabilities is None or probabilities.empty:
        return None
    from analysis.stats import right

    answered = responses[(responses["rater_kind"] == "model") & responses["answer"].notna()]
    positive = answered.get(PRESENT_OPTION, pd.Series(None, index=answered.index))
    binary = positive.notna() & (positive.astype(str) != "")
    scored = answered.assign(
        correct=right(answered).astype(int),
        answer_present=(answered["answer"] == positive).astype(float).where(binary),
    ).rename(columns={"rater": "model"})[
        ["model", "case_id", "question_id", "correct", "answer_present"]
    ]
    merged = scored.merge(probabilities, on=["model", "question_id"], how="inner")
    if merged.empty:
        return None
    return merged[list(MODEL_COLUMNS)]


def single_arm_frame(responses: pd.DataFrame, arm: str) -> pd.DataFrame:
    """The readers' rows of a study read in one arm, as `confidence_results` reads them."""
    humans = responses[responses["rater_kind"] == "human"]
    return humans.rename(columns={"rater": "reader"}).assign(arm=arm)


def methods_words(results: dict) -> str:
    """The Methods paragraph on confidence, ROC and calibration (methods.md), from the tables
    this study has."""
    scale: RatingScale = results["scale"]
    tables = results["tables"]
    parts = [f"Readers gave a confidence with every answer on a scale of {describe_scale(scale)}."]
    ratings = results["ratings"]
    if "auc" in tables:
        questions = ratings.drop_duplicates("question_id")
        parts.append(
            f"{len(questions)} binary questions ({int(questions['truth'].sum())} with the "
            "finding present by the key) were analysed as ROC tasks: the option saying the "
            "finding is present declared per question; truth = 1 when the question's key is "
            f"that option. {results['rule'][0].upper()}{results['rule'][1:]}. A question a "
            "reader did not answer, or answered without a confidence, is left out of that "
            "reader's AUC (roc_counts.csv). Each reader's empirical (trapezoidal) AUC per arm, "
            "ties counted 1/2 (MRMCaov's empirical_auc), with a normal interval from its "
            f"variance over X-rays ({AUC_COVARIANCE_WORDS['jackknife']}); the X-ray is the case, a "
            "binary question the ROC unit."
        )
    if results.get("mrmc") is not None:
        parts.append(
            f"Aided against unaided on AUC: {results['mrmc'].method}; random readers and "
            "X-rays, fixed readers (normal reference) and fixed X-rays, with DeLong's "
            "covariance beside the jackknife where the design allows it (auc_difference.csv)."
        )
        if "auc_power" in tables and "note" not in tables["auc_power"].data.columns:
            parts.append(f"Power for a future study on AUC: {tables['auc_power'].method}.")
    vs = tables.get("auc_vs_models")
    if vs is not None and "model" in vs.data.columns:
        parts.append(f"Readers against AI models on AUC: {vs.method}.")
    if "calibration" in tables:
        parts.append(
            f"Calibration ({', '.join(map(str, tables['calibration'].data['rater']))}): "
            f"{tables['calibration'].method}."
        )
    if "accuracy_by_confidence" in tables:
        parts.append(
            "Do readers know when they are right: accuracy per confidence level, "
            f"{tables['accuracy_by_confidence'].method}; and {DISCRIMINATION_METHOD}."
        )
    return " ".join(parts)


def confidence_json(results: dict) -> dict:
    """The API's `confidence` object: the scale and the rating rule in words, and what each
    table (its rows: the response's key of the same name) rests on."""
    return {
        "scale": describe_scale(results["scale"]),
        "rule": results["rule"],
        "arms": list(results["arms"]),
        "tables": {
            name: {"unit": table.unit, "method": table.method, "policy": table.policy}
            for name, table in results["tables"].items()
        },
    }
