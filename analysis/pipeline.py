"""The analysis pipeline of a study: one policy (`AnalysisSettings`) applied to the long
responses frame gives every table the page, the API and the exports show (`analyse`).

The policy is written into every output (policy.json, README.txt beside the CSVs, the XLSX
settings and about sheets, the API's `policy` object); each figure's footnote states the part
of it that applies to that figure (`AnalysisSettings.note`).

No Django here: a notebook can run the same pipeline on `responses.csv`.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

import pandas as pd

from analysis import key_version, stats
from analysis.reporting import methods_table, table_description
from analysis.stats.arm_readers import reader_arms_table
from analysis.stats.clustered import CLUSTER_CI_METHOD
from analysis.stats.comparisons import PANEL_COLUMNS, ai_vs_readers_table, reader_panel_accuracy
from analysis.stats.design import DesignPolicy, design_results
from analysis.stats.flow import analysed_rows, drop_fast
from analysis.stats.frame import AnalysisInputError

SCALES = ("answer", "correct")
SCALE_LABELS = {"answer": "A–D answers", "correct": "correct / incorrect"}
CI_LABELS = {"wilson": "Wilson", "clopper-pearson": "Clopper–Pearson"}
HOLM_FAMILY_LABELS = {
    "ai_vs_reader": "the AI-versus-reader pairs only",
    "all_pairs": "every pair (reader-reader and model-model included)",
}
DEFAULT_TIME_CAP_MS = 30 * 60 * 1000  # the platform's default MAX_CASE_TIME_MS
DEFAULT_FAST_ANSWER_MS = 2000  # the platform's default FAST_ANSWER_MS


@dataclass(frozen=True)
class AnalysisSettings:
    """The analysis policy: the one place every switch is defined (written into every
    output as policy.json, README.txt, the XLSX settings sheet and the API's `policy`)."""

    missing: stats.Missing = "wrong"
    scale: str = "answer"
    include_excluded: bool = False
    vrange: str = "-1,1"
    ci_method: str = "wilson"
    alpha: float = 0.05
    n_boot: int = 1000
    seed: int = 0
    case_unit: str = "X-ray (imaging study): resampled as a whole"
    ni_margin: float = 0.05  # aided vs unaided: non-inferiority margin, accuracy scale
    # Fewer readers than this: random-readers results carry a warning, fixed readers beside.
    min_readers: int = 4
    # Holm's adjustment runs over this family of paired comparisons.
    holm_family: str = "ai_vs_reader"
    # A kappa CI from fewer X-rays than this carries a caveat.
    kappa_min_xrays: int = 20
    # Questions an expert rejected are left out (counted in the flow table).
    exclude_rejected: bool = True
    # Reading time per answer is capped at this when stored (settings.MAX_CASE_TIME_MS).
    time_cap_ms: int = DEFAULT_TIME_CAP_MS
    # Human answers given in less visible time than this (settings.FAST_ANSWER_MS) are too
    # fast to be a reading: counted in the flow tables; left out of every n when exclude_fast.
    fast_answer_ms: int = DEFAULT_FAST_ANSWER_MS
    exclude_fast: bool = False
    # Which keys score the answers (key_version.KEY_POLICIES): the adjudicated ones by
    # default, which are the imported ones until a correction is accepted.
    key_policy: str = "adjudicated"  # the switch `key` of the page, the API and the export

    @property
    def level(self) -> str:
        return f"{(1 - self.alpha) * 100:g}%"

    def policy(self) -> dict:
        """The policy as a JSON-ready object, the same in every output."""
        return {
            "missing": self.missing,
            "missing_means": (
                "a missing answer or failed extraction counts as wrong"
                if self.missing == "wrong"
                else "missing answers and failed extractions are left out of n"
            ),
            "not_predicted": "questions a model has no prediction for are in none of its n",
            "kappa_scale": self.scale,
            "kappa_scale_means": SCALE_LABELS[self.scale],
            "kappa_missing": "pairwise deletion (each pair on the questions both answered)",
            "excluded_questions": "included" if self.include_excluded else "left out",
            "exclude_rejected": self.exclude_rejected,
            "rejected_questions": (
                "questions an expert rejected are left out"
                if self.exclude_rejected
                else "questions an expert rejected are included"
            ),
            "ci_method": self.ci_method,
            "accuracy_ci": CLUSTER_CI_METHOD.format(ci=CI_LABELS[self.ci_method]),
            "alpha": self.alpha,
            "ci_level": self.level,
            "case_unit": self.case_unit,
            "bootstrap": f"{self.n_boot} percentile replicates by X-ray, seed {self.seed}",
            "kappa_colour_scale": self.vrange,
            "ni_margin": self.ni_margin,
            "ni_margin_means": (
                f"aided is non-inferior to unaided when the lower CI bound of aided − unaided "
                f"accuracy is above −{self.ni_margin:g} (two-arm studies only)"
            ),
            "kappa_min_xrays": self.kappa_min_xrays,
            "min_readers": self.min_readers,
            "holm_family": self.holm_family,
            "holm_family_means": HOLM_FAMILY_LABELS[self.holm_family],
            "time_cap_ms": self.time_cap_ms,
            "time_cap_means": (
                f"a reading time above {self.time_cap_ms / 60000:g} min per answer is stored "
                "as the cap"
            ),
            "fast_answer_ms": self.fast_answer_ms,
            "exclude_fast": self.exclude_fast,
            "fast_answers": self.fast_means(),
            "key": self.key_policy,
            "key_means": key_version.KEY_POLICIES[self.key_policy],
        }

    def fast_means(self) -> str:
        """The too-fast policy in words (the page, policy.json, README.txt)."""
        what = (
            "left out of that reader's n (as not presented) and of the reading times"
            if self.exclude_fast
            else "kept in the analysis, counted in the flow tables (too_fast)"
        )
        return (
            f"a reader's answer given in under {self.fast_answer_ms:g} ms on screen is {what} "
            "(a time of 0 is not recorded, not fast)"
        )

    def design_policy(self) -> DesignPolicy:
        """The part of this policy the design-aware (aided vs unaided) results rest on."""
        return DesignPolicy(missing=self.missing, alpha=self.alpha, ni_margin=self.ni_margin)

    def header_lines(self, table: str | None = None) -> list[str]:
        """The header block of a CSV: for a named table, its unit, method and the policy
        keys that apply to it (and only those); without a name, the whole policy."""
        policy = self.policy()
        if table is None:
            return [f"{key}: {value}" for key, value in policy.items()]
        unit, method, keys = table_description(self, table)
        lines = [f"unit: {unit}", f"method: {method}"]
        return lines + [f"{key}: {policy[key]}" for key in keys]

    def key(self) -> str:
        return "|".join(f"{k}={v}" for k, v in sorted(asdict(self).items()))

    def describe(self) -> str:
        """One line for the page: the policy in force."""
        missing = (
            "missing answers count as wrong"
            if self.missing == "wrong"
            else "missing answers are excluded"
        )
        excluded = (
            "excluded questions included"
            if self.include_excluded
            else "excluded questions left out"
        )
        rejected = (
            "expert-rejected questions left out"
            if self.exclude_rejected
            else "expert-rejected questions included"
        )
        return (
            f"{missing}; {excluded}; {rejected}; "
            f"{CI_LABELS.get(self.ci_method, self.ci_method)} "
            f"{self.level} CIs on the effective sample size by X-ray; κ on "
            f"{SCALE_LABELS[self.scale]} (pairwise deletion); the X-ray is the case for "
            f"OR/Hillis, paired comparisons and bootstraps; Holm over "
            f"{HOLM_FAMILY_LABELS[self.holm_family]}; reading time capped at "
            f"{self.time_cap_ms / 60000:g} min per answer; answers under "
            f"{self.fast_answer_ms:g} ms {'left out' if self.exclude_fast else 'flagged, kept'}; "
            f"{key_version.KEY_POLICY_LABELS[self.key_policy]}"
        )

    def selection_note(self, excluded: int | None = None, rejected: int | None = None) -> str:
        """The questions the policy leaves out (or keeps), in words, with their counts when
        given: those a PI excluded, and those an expert rejected that a PI did not exclude
        (the flow table counts a question both excluded and rejected once, as excluded)."""

        def count(n: int | None, word: str) -> str:
            if n is None:
                return f"{word}s"
            return f"{n} {word}{'' if n == 1 else 's'}"

        pi = "included" if self.include_excluded else "left out"
        expert = "left out" if self.exclude_rejected else "included"
        further = "question" if excluded is None else "further question"
        return (
            f"{count(excluded, 'question')} a PI excluded {pi}; "
            f"{count(rejected, further)} an expert rejected {expert}"
        )

    def note(
        self, figure: str, scale: str | None = None, left_out: tuple[int, int] | None = None
    ) -> str:
        """The footnote of one figure: only what applies to it. `left_out`: the counts of
        questions a PI excluded and (further) an expert rejected (`AnalysisResult.left_out`)."""
        excluded = self.selection_note(*(left_out or (None, None)))
        if figure == "accuracy":
            missing = (
                "a missing answer or failed extraction counts as wrong"
                if self.missing == "wrong"
                else "missing answers are left out of n"
            )
            ci = CI_LABELS.get(self.ci_method, self.ci_method)
            return (
                f"Whiskers: {ci} {self.level} CI on the effective sample size (questions "
                f"clustered by X-ray). {missing.capitalize()}; {excluded}."
            )
        if figure == "kappa":
            colours = (
                "colour scale −1…1, centred on 0"
                if self.vrange == "-1,1"
                else "colour scale 0…1: κ < 0 clipped and drawn in the 'below 0' colour"
            )
            what = SCALE_LABELS[scale or self.scale]
            return (
                f"Cohen's κ on {what}; each pair on the questions both answered (pairwise "
                f"deletion); {excluded}; {colours}. CIs: kappa_pairs table."
            )
        if figure == "time":
            ci = CI_LABELS.get(self.ci_method, self.ci_method)
            return (
                "Time on screen per answered question, as recorded (0 = not recorded, left "
                f"out; capped at {self.time_cap_ms / 60000:g} min per answer). Right: each "
                f"reader's answers in quartiles of their own time, {ci} {self.level} CI by "
                f"X-ray; {excluded}."
            )
        raise ValueError(f"no figure {figure!r}")


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
    "methods",
)
TABLE_ATTRIBUTES = {"failed_extractions": "failed"}  # file name -> AnalysisResult field


def records(frame: pd.DataFrame) -> list[dict]:
    """A table as rows of plain Python values for templates and JSON: numpy scalars become
    Python ones, and an undefined statistic (NaN, infinity) becomes None."""
    return [{k: clean(v) for k, v in row.items()} for row in frame.to_dict("records")]


def clean(value):
    """One cell as `records` gives it (JSON has no NaN or infinity)."""
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
        """`AnalysisSettings.header_lines` of a table, with the key version when its numbers
        rest on the keys."""
        lines = self.settings.header_lines(table)
        if any(line.startswith("key: ") for line in lines):
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
        given = self.design["tables"] if self.design else {}
        return [name for name in TABLES if name not in DESIGN_TABLES or name in given]

    def design_table(self, name: str):
        """The DesignTable `name` (data with its unit, method and policy), or None."""
        return self.design["tables"].get(name) if self.design else None

    def table(self, name: str) -> pd.DataFrame:
        if name in DESIGN_TABLES:
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
    fast = {"fast_ms": settings.fast_answer_ms, "exclude_fast": settings.exclude_fast}
    flow = stats.flow_tables(responses, **selection, **fast, questions=questions)
    analysed = analysed_rows(responses, **selection)
    if settings.exclude_fast:
        analysed = drop_fast(analysed, settings.fast_answer_ms)
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
        )[["task", *stats.kappa.PAIR_COLUMNS]]
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
