"""The analysis pipeline of a study: one policy (`AnalysisSettings`, declared in
analysis.policy) applied to the long responses frame gives every table the page, the API and
the exports show (`analyse`).

The policy is written into every output (policy.json, README.txt beside the CSVs, the XLSX
settings and about sheets, the API's `policy` object); each figure's footnote states the part
of it that applies to that figure (`AnalysisSettings.note`).

No Django here: a notebook can run the same pipeline on `responses.csv`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import pandas as pd

from analysis import key_version, stats
from analysis.confidence_analysis import (
    CONFIDENCE_TABLES,
    confidence_results,
    model_rows,
    single_arm_frame,
)
from analysis.policy import AnalysisSettings
from analysis.reporting import CONFIDENCE_FAST_LINE, methods_table, table_description
from analysis.stats import (
    PANEL_COLUMNS,
    AnalysisInputError,
    RatingScale,
    ai_vs_readers_table,
    analysed_rows,
    design_results,
    drop_fast,
    reader_arms_table,
    reader_panel_accuracy,
)
from annotation.fast_answers import too_fast

# Kappa is computed on every scale the policy's `scale` switch offers (the ZIP holds both).
SCALES: tuple[str, ...] = tuple(choice.value for choice in AnalysisSettings.switch("scale").choices)


# The design-aware tables (aided vs unaided), in the order the page shows them.
DESIGN_TABLES: tuple[str, ...] = (
    "arm_accuracy",
    "mrmc_difference",
    "reader_arms",
    "mrmc_variance_components",
    "non_inferiority",
    "arm_by_session",
    "reliance_agreement",
    "second_read_switches",
)

# The analysis tables, once, in the order the exports write them: file names (and the keys of
# the API and the page's context). `kappa_pairs` is one file per scale (kappa_pairs_<scale>);
# the kappa matrices are `AnalysisResult.matrices()`.
TABLES: tuple[str, ...] = (
    "flow",
    "flow_raters",
    "raters",
    "accuracy",
    "accuracy_by_category",
    # Versioned keys (analysis.key_version): what changed, and every rater under both keys.
    "key_changes",
    "accuracy_by_key",
    "ai_vs_readers",
    "reader_panel",
    "mcnemar",
    "fleiss",
    "kappa_pairs",
    "reading_time",
    "accuracy_by_time",
    "failed_extractions",
    # A study with an aided arm only (analysis.stats.design; `AnalysisResult.design`):
    *DESIGN_TABLES,
    # A study with a confidence scale only (analysis.confidence_analysis;
    # `AnalysisResult.confidence`): ROC and AUC of the binary questions, calibration.
    *CONFIDENCE_TABLES,
    "methods",
)
TABLE_ATTRIBUTES = {"failed_extractions": "failed"}  # file name -> AnalysisResult field


def records(frame: pd.DataFrame) -> list[dict]:
    """A table as rows of plain Python values for templates and JSON: numpy scalars become
    Python ones, and an undefined statistic (NaN, infinity) becomes None."""
    return [{k: clean(v) for k, v in row.items()} for row in frame.to_dict("records")]


def clean(value):
    """One cell as `records` gives it (JSON has no NaN or infinity)."""
    if value is pd.NA:  # an empty cell of a column of whole numbers
        return None
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


@dataclass
class AnalysisResult:
    settings: AnalysisSettings
    responses: pd.DataFrame
    analysed: pd.DataFrame
    raters: pd.DataFrame = field(default_factory=pd.DataFrame)
    accuracy: pd.DataFrame = field(default_factory=pd.DataFrame)
    accuracy_by_category: pd.DataFrame = field(default_factory=pd.DataFrame)
    kappa_by_scale: dict[str, dict[str, pd.DataFrame]] = field(default_factory=dict)
    kappa_pairs: dict[str, pd.DataFrame] = field(default_factory=dict)
    fleiss: pd.DataFrame = field(default_factory=pd.DataFrame)
    ai_vs_readers: pd.DataFrame = field(default_factory=pd.DataFrame)
    reader_panel: dict | None = None
    mcnemar: pd.DataFrame = field(default_factory=pd.DataFrame)
    reading_time: pd.DataFrame = field(default_factory=pd.DataFrame)
    accuracy_by_time: pd.DataFrame = field(default_factory=pd.DataFrame)
    flow: pd.DataFrame = field(default_factory=pd.DataFrame)
    flow_raters: pd.DataFrame = field(default_factory=pd.DataFrame)
    failed: pd.DataFrame = field(default_factory=pd.DataFrame)
    key_changes: pd.DataFrame = field(default_factory=pd.DataFrame)
    accuracy_by_key: pd.DataFrame = field(default_factory=pd.DataFrame)
    # A study with an aided arm: design_results() of its design frame (None otherwise), the
    # frame itself (the MRMC-package files are written from it), or why it cannot be analysed.
    design: dict | None = None
    design_frame: pd.DataFrame | None = None
    design_error: str = ""
    # Every reader's answer in every arm with its session (the design frame before the
    # policy's question selection): the responses export's rows beyond the counted arm.
    arm_answers: pd.DataFrame | None = None
    facts: dict = field(default_factory=dict)  # the study beyond its responses (Methods)
    # The study's sampled questions (one row each), when known: before anyone has read,
    # the responses hold none, and the flow still counts what was sampled.
    questions: pd.DataFrame | None = None
    # A study with a confidence scale: confidence_results() of its readers' answers (None
    # otherwise), or why they cannot be analysed.
    confidence: dict | None = None
    confidence_error: str = ""

    def sampled(self) -> pd.DataFrame:
        """One row per sampled question: `questions` when given, else the responses'."""
        if self.questions is not None:
            return self.questions
        return self.responses.drop_duplicates("question_id")

    def left_out(self) -> tuple[int, int]:
        """(questions a PI excluded, further questions an expert rejected) among those
        sampled: what the flow table counts, whatever the policy does with them."""
        questions = self.sampled()
        if questions.empty:
            return 0, 0
        excluded = questions.get("excluded", pd.Series(False, index=questions.index))
        excluded = excluded.fillna(False).astype(bool)
        rejected = questions.get("rejected", pd.Series(False, index=questions.index))
        rejected = rejected.fillna(False).astype(bool)
        return int(excluded.sum()), int((rejected & ~excluded).sum())

    def selection_note(self) -> str:
        """The questions left out (or kept) under the policy, with their counts, in words."""
        return self.settings.selection_note(*self.left_out())

    @property
    def key_version(self) -> str:
        """The key version the numbers rest on, in words (every output states it)."""
        return key_version.key_statement(
            self.settings.key_policy,
            self.facts.get("keys", {}),
            key_version.earlier_words_count(self.analysed),
        )

    def policy(self) -> dict:
        """The policy with the key version it met (policy.json, the XLSX settings sheet, the
        API's `policy`)."""
        return {**self.settings.policy(), "key_version": self.key_version}

    def header_lines(self, table: str) -> list[str]:
        """What table `table`'s numbers rest on: its unit, its method and the policy's lines
        that apply to it (and only those), with the key version when its numbers rest on the
        keys (README.txt, the XLSX about sheet)."""
        policy = self.settings.policy()
        unit, method, keys = table_description(self.settings, table)
        lines = [f"unit: {unit}", f"method: {method}", *(f"{key}: {policy[key]}" for key in keys)]
        if "key" in keys:
            lines.append(f"key_version: {self.key_version}")
        return lines

    @property
    def kappas(self) -> dict[str, pd.DataFrame]:
        """The matrices on the policy's scale (what the page's heatmaps show)."""
        return self.kappa_by_scale.get(self.settings.scale, {})

    def _of_kind(self, kind: str) -> list[str]:
        if self.raters.empty:
            return []
        return list(self.raters.loc[self.raters["kind"] == kind, "rater"])

    @property
    def humans(self) -> list[str]:
        return self._of_kind("human")

    @property
    def models(self) -> list[str]:
        return self._of_kind("model")

    def tables(self) -> dict[str, pd.DataFrame]:
        """Every table by its file name (without .csv): what the ZIP, XLSX and downloads hold,
        in `TABLES` order, with the kappa pairs of every scale."""
        out = {}
        for name in self._present():
            if name == "kappa_pairs":
                for scale, pairs in self.kappa_pairs.items():
                    out[f"kappa_pairs_{scale}"] = pairs
            elif name == "reader_panel":  # no row yet (fewer than two readers): its header
                rows = [self.reader_panel] if self.reader_panel else []
                out[name] = pd.DataFrame(rows, columns=PANEL_COLUMNS)
            else:
                out[name] = self.table(name)
        return out

    def shown_tables(self) -> dict[str, pd.DataFrame]:
        """The tables the page and the API show, by name: the kappa pairs on the policy's scale
        only; the reader panel (one row) is shown as a dict, not here."""
        out = {}
        for name in self._present():
            if name == "kappa_pairs":
                out[name] = self.kappa_pairs.get(self.settings.scale, pd.DataFrame())
            elif name != "reader_panel":
                out[name] = self.table(name)
        return out

    def _present(self) -> list[str]:
        """`TABLES` less the design tables this study has not got (a single-arm study has
        none; a crossover has no switch table, a second read no order check)."""
        given = {
            **(self.design["tables"] if self.design else {}),
            **(self.confidence["tables"] if self.confidence else {}),
        }
        optional = (*DESIGN_TABLES, *CONFIDENCE_TABLES)
        return [name for name in TABLES if name not in optional or name in given]

    def confidence_fast_line(self) -> str:
        """Whether the confidence, ROC and calibration tables left too-fast answers out, as
        README.txt, the XLSX about sheet and the page say it: a study with an aided arm reads
        every arm's answers (kept); a single-arm study its analysed answers (the policy's)."""
        if self.design_frame is not None:
            return CONFIDENCE_FAST_LINE
        return f"fast_answers: {self.settings.policy()['fast_answers']}"

    def design_table(self, name: str):
        """The DesignTable `name` (data with its unit, method and policy), or None: the
        aided-vs-unaided tables and those of a study with a confidence scale."""
        if name in CONFIDENCE_TABLES:
            return self.confidence["tables"].get(name) if self.confidence else None
        return self.design["tables"].get(name) if self.design else None

    def table(self, name: str) -> pd.DataFrame:
        if name in DESIGN_TABLES or name in CONFIDENCE_TABLES:
            table = self.design_table(name)
            return table.data if table is not None else pd.DataFrame()
        if name == "methods":  # generated from the other tables, the facts and the policy
            return methods_table(self)
        return getattr(self, TABLE_ATTRIBUTES.get(name, name))

    def matrices(self) -> dict[str, pd.DataFrame]:
        """Kappa matrices by file name: kappa_<scale>_<task slug>."""
        return {
            f"kappa_{scale}_{task_slug(name)}": matrix
            for scale, matrices in self.kappa_by_scale.items()
            for name, matrix in matrices.items()
        }


def fast_mask(responses: pd.DataFrame, fast_ms: int | None) -> pd.Series:
    """The humans' answers in the analysis' frame that are too fast to be a reading, by the
    reading rule (annotation.fast_answers) under the policy's `fast_answer_ms`: models have no
    reading time, and a frame without a `time_ms` column has nothing fast."""
    if "time_ms" not in responses:
        return pd.Series(False, index=responses.index)
    human = (
        responses["rater_kind"].eq("human")
        if "rater_kind" in responses
        else pd.Series(True, index=responses.index)
    )
    time = pd.to_numeric(responses["time_ms"], errors="coerce")
    return human & responses["answer"].notna() & too_fast(time, fast_ms)


def task_slug(name: str) -> str:
    return "-".join("".join(c if c.isalnum() else " " for c in name.lower()).split())


def attach_design(result: AnalysisResult, frame: pd.DataFrame) -> AnalysisResult:
    """Add the design-aware results of a study with an aided arm (its design frame: one row
    per reader, arm and question, canonical letters) under the result's own policy. A letter
    that cannot be mapped to the canonical ones refuses the analysis, with the reason."""
    # The same questions as every other table: those a PI excluded (unless included) and those
    # an expert rejected (when the policy leaves them out) go from every reader and arm alike.
    kept = analysed_rows(
        result.responses,
        include_excluded=result.settings.include_excluded,
        exclude_rejected=result.settings.exclude_rejected,
    )["question_id"]
    frame = frame[frame["question_id"].isin(set(kept))].reset_index(drop=True)
    result.design_frame = frame
    if frame.empty:
        return result
    policy = result.settings.design_policy()
    try:
        result.design = design_results(frame, policy)
    except AnalysisInputError as error:
        result.design_error = str(error)
        return result
    # Each reader's two arms with the difference's CI: what the aided-vs-unaided figure draws.
    readers = reader_arms_table(result.design, policy.alpha, policy.describe())
    if readers is not None:
        result.design["tables"]["reader_arms"] = readers
    return result


def attach_confidence(
    result: AnalysisResult,
    scale: RatingScale,
    present: dict[str, str],
    probabilities: pd.DataFrame | None = None,
) -> AnalysisResult:
    """Add the tables of a study with a confidence scale (analysis.confidence_analysis) under
    the result's own policy: on the design frame's rows of every arm when the study has an
    aided arm (the questions every other table keeps), else on the analysed readers' rows of
    its one arm. `present`: each binary question's option saying the finding is present
    (question_id -> letter); `probabilities`: the models' (model, question_id, probability,
    present_probability). A frame the rating rule refuses (a confidence off the scale)
    refuses these tables, with the reason."""
    if result.design_frame is not None:
        frame = result.design_frame
    else:
        arm = (result.facts.get("design") or {}).get("counted_arm") or "unaided"
        frame = single_arm_frame(result.analysed, arm) if not result.analysed.empty else None
    if frame is None or frame.empty or "confidence" not in frame.columns:
        return result
    frame = frame.assign(present_option=frame["question_id"].map(present))
    analysed = result.analysed.assign(present_option=result.analysed["question_id"].map(present))
    models = model_rows(analysed, probabilities) if not analysed.empty else None
    try:
        result.confidence = confidence_results(
            frame, scale, models=models, policy=result.settings.confidence_policy()
        )
    except AnalysisInputError as error:
        result.confidence_error = str(error)
    return result


def analyse(
    responses: pd.DataFrame,
    settings: AnalysisSettings,
    facts: dict | None = None,
    questions: pd.DataFrame | None = None,
) -> AnalysisResult:
    """Every table under one policy. `facts` (readers' seniority, models' provenance,
    reading conditions, reviews; `selectors.study_facts`) feed the Methods section;
    `questions` (selectors.study_questions) lets the flow count what was sampled before
    anyone has answered."""
    selection = {
        "include_excluded": settings.include_excluded,
        "exclude_rejected": settings.exclude_rejected,
    }
    fast = fast_mask(responses, settings.fast_answer_ms)
    flow = stats.flow_tables(
        responses,
        **selection,
        fast=fast,
        fast_ms=settings.fast_answer_ms,
        exclude_fast=settings.exclude_fast,
        questions=questions,
    )
    analysed = analysed_rows(responses, **selection)
    if settings.exclude_fast:
        analysed = drop_fast(analysed, fast.loc[analysed.index])
    result = AnalysisResult(
        settings, responses, analysed, flow=flow.stages, facts=facts or {}, questions=questions
    )
    result.flow_raters = flow.raters
    result.key_changes = key_version.key_changes_table(result.facts.get("keys", {}))
    if analysed.empty:
        return result
    prepared = stats.prepare(analysed)
    kinds = responses.drop_duplicates("rater").set_index("rater")
    raters = [r for r in prepared.raters if r in kinds.index]
    readers = {r["name"]: r for r in result.facts.get("readers", [])}
    # The display name every table uses, mapped to the person (username) behind it.
    result.raters = pd.DataFrame(
        {
            "rater": raters,
            "kind": [kinds.at[r, "rater_kind"] for r in raters],
            "rater_id": [kinds.at[r, "rater_id"] if "rater_id" in kinds else r for r in raters],
            "username": [readers.get(r, {}).get("username", "") for r in raters],
            "seniority": [readers.get(r, {}).get("seniority", "") for r in raters],
        }
    )
    humans, models = result.humans, result.models
    missing, alpha, boot = settings.missing, settings.alpha, settings.n_boot
    result.accuracy = stats.accuracy_table(prepared, missing, settings.ci_method, alpha)
    result.accuracy_by_category = stats.accuracy_table(
        prepared, missing, settings.ci_method, alpha, by="category"
    )
    for scale in SCALES:
        result.kappa_by_scale[scale] = stats.kappa_matrices(prepared, scale)
        result.kappa_pairs[scale] = pd.concat(
            [
                stats.kappa_pairs(
                    prepared,
                    task,
                    scale,
                    alpha=alpha,
                    n_boot=boot,
                    seed=settings.seed,
                    min_xrays=settings.kappa_min_xrays,
                ).assign(task=stats.ALL if task is None else task)
                for task in [None, *prepared.tasks()]
            ],
            ignore_index=True,
        )[["task", *stats.KAPPA_PAIR_COLUMNS]]
    result.fleiss = stats.fleiss_table(
        prepared,
        humans,
        alpha=alpha,
        n_boot=boot,
        seed=settings.seed,
        min_xrays=settings.kappa_min_xrays,
    )
    few = settings.min_readers
    result.ai_vs_readers = ai_vs_readers_table(prepared, humans, models, missing, alpha, few)
    result.reader_panel = reader_panel_accuracy(prepared, humans, missing, alpha, few)
    kinds = dict(zip(result.raters["rater"], result.raters["kind"], strict=True))
    result.mcnemar = stats.mcnemar_pairs(
        prepared, raters, missing, alpha=alpha, family=settings.holm_family, kinds=kinds
    )
    if "time_ms" in analysed.columns:
        result.reading_time = stats.reading_time_table(analysed, humans)
        result.accuracy_by_time = stats.accuracy_by_time(
            analysed, humans, alpha=alpha, method=settings.ci_method
        )
    result.accuracy_by_key = key_version.accuracy_by_key(analysed, kinds, missing)
    failed = stats.failed_extractions(prepared)
    result.failed = failed[failed["rater"].isin(models)].reset_index(drop=True)
    return result
