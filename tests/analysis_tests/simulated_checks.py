"""The checks of a simulated study's analysis (tests/analysis_tests/test_simulated_study.py):
every count counted again from the database's rows (answers, reviews, exclusions, the AI's
predictions) with plain loops, every interval against its range and its estimate, every
file of the ZIP opened.

Each check returns a list of problems in words (empty: fine), named by the defect it finds,
so a test can say exactly which output is wrong."""

from __future__ import annotations

import io
import math
import zipfile
from collections import defaultdict
from dataclasses import dataclass

import pandas as pd

from analysis.pipeline import AnalysisResult, AnalysisSettings
from analysis.stats import auc_note, difference_note
from annotation.models import Answer, ExpertReview
from readerstudy.models import ReaderAssignment, ReaderStudy
from readerstudy.predictions.models import Prediction
from readerstudy.vocabulary import Decision

ALL = "All"
SECOND_READ_FIRST = "aided (first answer)"  # a second read's unaided answers, as its arm
PANEL = "Panel (mean of readers)"


@dataclass
class Rows:
    """The study's rows as plain Python: what every expected count is made from."""

    items: dict[int, dict]  # item id -> source_id, correct, excluded, group, anchor, case
    rejected: set[int]
    answers: list[dict]  # username, arm, item, choice, first_choice, time_ms
    groups: dict[str, int | None]  # username -> split-plot group
    ai: dict[int, str]  # item -> the model's letter ("" a failed extraction)
    arms: list[str]

    @classmethod
    def of(cls, study: ReaderStudy) -> Rows:
        items = {
            pk: {
                "source_id": source_id,
                "correct": correct,
                "excluded": excluded,
                "group": group,
                "anchor": anchor,
                "case": case,
            }
            for pk, source_id, correct, excluded, group, anchor, case in study.items.values_list(
                "id",
                "question__source_id",
                "question__correct",
                "excluded",
                "case_group",
                "anchor",
                "question__case__study_id",
            )
        }
        rejected = set(
            ExpertReview.objects.filter(item__study=study, decision=Decision.REJECT).values_list(
                "item_id", flat=True
            )
        )
        answers = [
            {"reader": u, "arm": a, "item": i, "choice": c, "first": f, "time_ms": t}
            for u, a, i, c, f, t in Answer.objects.filter(item__study=study).values_list(
                "reader__username", "arm", "item_id", "choice", "first_choice", "time_ms"
            )
        ]
        groups = dict(
            ReaderAssignment.objects.filter(study=study).values_list(
                "reader__username", "reader_group"
            )
        )
        by_question = {v["source_id"]: k for k, v in items.items()}
        ai = {
            by_question[source_id]: letter
            for source_id, letter in Prediction.objects.filter(
                model__dataset=study.dataset, question__study_items__study=study
            ).values_list("question__source_id", "letter")
        }
        return cls(items, rejected, answers, groups, ai, list(study.arm_list))

    def analysed(self, policy: AnalysisSettings) -> set[int]:
        """The questions the policy analyses: less those a PI excluded (unless included)
        and those an expert rejected (unless kept)."""
        return {
            pk
            for pk, item in self.items.items()
            if (policy.include_excluded or not item["excluded"])
            and not (policy.exclude_rejected and pk in self.rejected)
        }

    def presented(self, reader: str) -> set[int]:
        """The questions a reader was to read: their group's and the anchor (split-plot)."""
        group = self.groups.get(reader)
        return {
            pk
            for pk, item in self.items.items()
            if group is None or item["anchor"] or item["group"] == group
        }

    def given(self, arm: str, *, first: bool = False) -> dict[str, dict[int, dict]]:
        """reader -> item -> answer, in one arm; `first`: a second read's first answers (the
        unaided arm of a second read)."""
        out: dict[str, dict[int, dict]] = defaultdict(dict)
        for answer in self.answers:
            if answer["arm"] != arm:
                continue
            letter = answer["first"] if first else answer["choice"]
            if letter:
                out[answer["reader"]][answer["item"]] = {**answer, "letter": letter}
        return out


def expected_accuracy(rows: Rows, policy: AnalysisSettings, names: dict[str, str]) -> dict:
    """{rater: (n, correct)} of the accuracy table's "All" rows: the counted arm (the first
    arm) for readers with at least one answer in it, and the AI model."""
    analysed = rows.analysed(policy)
    out = {}
    for reader, given in rows.given(rows.arms[0]).items():
        todo = rows.presented(reader) & analysed
        if policy.exclude_fast:
            fast = {
                i
                for i, a in given.items()
                if 0 < a["time_ms"] < policy.fast_answer_ms and i in todo
            }
            todo -= fast
        answered = {i for i in todo if i in given}
        n = len(todo) if policy.missing == "wrong" else len(answered)
        right = sum(given[i]["letter"] == rows.items[i]["correct"] for i in answered)
        out[names[reader]] = (n, right)
    if rows.ai:
        predicted = [i for i in analysed if i in rows.ai]
        usable = [i for i in predicted if rows.ai[i]]
        n = len(predicted) if policy.missing == "wrong" else len(usable)
        out["model"] = (n, sum(rows.ai[i] == rows.items[i]["correct"] for i in usable))
    return out


def expected_arms(rows: Rows, policy: AnalysisSettings, names: dict[str, str]) -> dict:
    """{(arm, reader name): (n, correct)} of arm_accuracy's "All" rows: per arm, the readers
    who have read in that arm (at least one answer), on the questions they were to read."""
    analysed = {
        pk
        for pk, item in rows.items.items()
        if (policy.include_excluded or not item["excluded"])
        and not (policy.exclude_rejected and pk in rows.rejected)
    }
    second_read = rows.arms == ["aided"]
    arms = (
        {SECOND_READ_FIRST: rows.given("aided", first=True), "aided": rows.given("aided")}
        if second_read
        else {arm: rows.given(arm) for arm in rows.arms}
    )
    out = {}
    for arm, by_reader in arms.items():
        for reader, given in by_reader.items():
            todo = rows.presented(reader) & analysed
            answered = {i for i in todo if i in given}
            n = len(todo) if policy.missing == "wrong" else len(answered)
            right = sum(given[i]["letter"] == rows.items[i]["correct"] for i in answered)
            out[arm, names[reader]] = (n, right)
    return out


def count_problems(result: AnalysisResult, rows: Rows, usernames: dict[str, str]) -> list[str]:
    """The accuracy table's n and correct against the counts from the answers."""
    problems = []
    names = {u: n for n, u in usernames.items()}
    expected = expected_accuracy(rows, result.settings, names)
    got = {}
    if not result.accuracy.empty:
        for row in result.accuracy[result.accuracy["task"] == ALL].itertuples():
            key = "model" if row.rater in result.models else row.rater
            got[key] = (int(row.n), int(row.correct))
    extra = sorted(set(got) - set(expected))
    if extra:
        problems.append(
            f"accuracy (the counted arm, {rows.arms[0]}) has readers who have not read it: "
            f"{[(k, got[k]) for k in extra]}"
        )
    if {k: v for k, v in got.items() if k in expected} != expected:
        problems.append(f"accuracy (n, correct) {got} != counted {expected}")
    return problems


def arm_problems(result: AnalysisResult, rows: Rows, usernames: dict[str, str]) -> list[str]:
    """arm_accuracy's reader rows and panel rows against the counts from the answers."""
    table = result.table("arm_accuracy")
    if table.empty:
        return []
    names = {u: n for n, u in usernames.items()}
    expected = expected_arms(rows, result.settings, names)
    all_rows = table[table["task"] == ALL]
    readers = all_rows[all_rows["reader"] != PANEL]
    got = {(r.arm, r.reader): (int(r.n), int(r.correct)) for r in readers.itertuples()}
    problems = []
    extra = sorted(set(got) - set(expected))
    if extra:
        problems.append(f"per-arm rows of readers who have not read that arm: {extra}")
    same = {k: got[k] for k in got if k in expected}
    if same != {k: v for k, v in expected.items() if k in got} or set(expected) - set(got):
        problems.append(f"arm_accuracy (n, correct) {got} != counted {expected}")
    for panel in all_rows[all_rows["reader"] == PANEL].itertuples():
        if any(arm == panel.arm for arm, _ in extra):
            problems.append(
                f"per-arm rows of readers who have not read that arm: panel {panel.arm} "
                f"averages them in (n {panel.n}, accuracy {panel.accuracy})"
            )
            continue
        mine = [v for (arm, _), v in expected.items() if arm == panel.arm]
        if not mine:
            continue
        mean = sum(k / n for n, k in mine if n) / len([1 for n, _ in mine if n])
        if int(panel.n) != sum(n for n, _ in mine) or not math.isclose(
            panel.accuracy, mean, abs_tol=1e-12
        ):
            problems.append(
                f"arm_accuracy panel {panel.arm}: n {panel.n}, accuracy {panel.accuracy} != "
                f"counted n {sum(n for n, _ in mine)}, mean of readers {mean}"
            )
    return problems


def flow_problems(result: AnalysisResult, rows: Rows) -> list[str]:
    """The flow table's analysed, excluded and rejected questions against the rows."""
    if result.flow.empty:
        return ["no flow table"]
    flow = result.flow.set_index("stage")["questions"]
    policy = result.settings
    problems = []
    analysed = len(rows.analysed(policy))
    if int(flow.get("Analysed", -1)) != analysed:
        problems.append(f"flow: {flow.get('Analysed')} analysed, counted {analysed}")
    if int(flow.get("Sampled", -1)) != len(rows.items):
        problems.append(f"flow: {flow.get('Sampled')} sampled, counted {len(rows.items)}")
    rejected = len(rows.rejected)
    if rejected and int(flow.get("Rejected by an expert", -1)) != rejected:
        problems.append(f"flow: {flow.get('Rejected by an expert')} rejected, counted {rejected}")
    return problems


# The estimate each interval is of, and the range both may take. A CI column pair is
# (<prefix>ci_low, <prefix>ci_high); the estimate is the named column.
PROPORTION = (0.0, 1.0)
DIFFERENCE = (-1.0, 1.0)
INTERVALS: dict[str, list[tuple[str, str, tuple[float, float]]]] = {
    "accuracy": [("", "accuracy", PROPORTION)],
    "accuracy_by_category": [("", "accuracy", PROPORTION)],
    "accuracy_by_time": [("", "accuracy", PROPORTION)],
    "reader_panel": [("", "mean", PROPORTION), ("_fixed", "mean", PROPORTION)],
    "ai_vs_readers": [("", "difference", DIFFERENCE), ("_fixed", "difference", DIFFERENCE)],
    "mcnemar": [("", "difference", DIFFERENCE)],
    "fleiss": [("", "kappa", DIFFERENCE)],
    "kappa_pairs_answer": [("", "kappa", DIFFERENCE)],
    "kappa_pairs_correct": [("", "kappa", DIFFERENCE)],
    "mrmc_difference": [("", "difference", DIFFERENCE)],
    "reader_arms": [("", "difference", DIFFERENCE)],
    "auc": [("", "auc", PROPORTION)],
    "confidence_discrimination": [("", "auc", PROPORTION)],
    "auc_difference": [("", "difference", DIFFERENCE)],
    "auc_vs_models": [("", "difference", DIFFERENCE), ("_fixed", "difference", DIFFERENCE)],
}


def _pairs(name: str, frame: pd.DataFrame) -> list[tuple[str, str, str, tuple]]:
    """(low column, high column, estimate column, range) of a table's intervals: the
    declared ones, and every other `<x>_ci_low` / `<x>_ci_high` with the estimate `<x>`
    (a proportion unless declared)."""
    out = []
    for suffix, estimate, bounds in INTERVALS.get(name, []):
        low, high = f"ci_low{suffix}", f"ci_high{suffix}"
        if {low, high, estimate} <= set(frame.columns):
            out.append((low, high, estimate, bounds))
    for column in frame.columns:
        if column.endswith("_ci_low") and column not in ("ci_low",):
            base = column[: -len("_ci_low")]
            if base in frame.columns and f"{base}_ci_high" in frame.columns:
                bounds = DIFFERENCE if base.endswith("_change") else PROPORTION
                out.append((column, f"{base}_ci_high", base, bounds))
    return out


# A difference's interval may pass -1 or 1, and an AUC's 0 or 1, where it is said, in the row's
# note, to be uninformative beyond (analysis.stats.bounded): the R packages' numbers, shown as
# computed. An accuracy's interval (logit-transformed) may not.
PASSES_WORDS = {DIFFERENCE: difference_note(-2.0, 2.0), PROPORTION: auc_note(-1.0, 2.0)}
MAY_PASS = {"auc", "confidence_discrimination"}


def interval_problems(tables: dict[str, pd.DataFrame]) -> list[str]:
    """Every interval inside its range, with its estimate inside it (exactly: a bound that
    leaves its range or its estimate by rounding is wrong on the page and breaks a figure)."""
    problems = []
    for name, frame in tables.items():
        if frame is None or frame.empty:
            continue
        for low, high, estimate, (lo, hi) in _pairs(name, frame):
            for index, row in frame.iterrows():
                a, b, e = row[low], row[high], row[estimate]
                values = [v for v in (a, b, e) if v is not None and not pd.isna(v)]
                if len(values) < 3:
                    continue
                a, b, e = float(a), float(b), float(e)
                said = PASSES_WORDS[(lo, hi)] in str(row.get("note", ""))
                may_pass = (lo, hi) == DIFFERENCE or name in MAY_PASS
                floor, ceiling = (-math.inf, math.inf) if may_pass and said else (lo, hi)
                if not (floor <= a <= e <= b <= ceiling):
                    problems.append(
                        f"{name} row {index}: {estimate} {e!r} with CI [{a!r}, {b!r}] "
                        f"outside [{lo}, {hi}] or not around its estimate"
                    )
    return problems


def zip_problems(body: bytes, result: AnalysisResult, figures: list[str]) -> list[str]:
    """Every table, figure and package file in the ZIP, every CSV read by pandas."""
    from analysis.figure_formats import FORMATS

    archive = zipfile.ZipFile(io.BytesIO(body))
    names = set(archive.namelist())
    problems = []
    for table in result.tables():
        if f"{table}.csv" not in names:
            problems.append(f"ZIP: no {table}.csv")
    for figure in figures:
        for fmt in FORMATS:
            if f"{figure}.{fmt}" not in names:
                problems.append(f"ZIP: no {figure}.{fmt}")
    for required in ("README.txt", "policy.json", "methods.md", "responses.csv", "report.xlsx"):
        if required not in names:
            problems.append(f"ZIP: no {required}")
    for name in sorted(n for n in names if n.endswith(".csv")):
        try:
            pd.read_csv(io.BytesIO(archive.read(name)))
        except pd.errors.EmptyDataError:
            continue  # a header-less empty table is an empty table
        except Exception as exc:  # any failure to read is the finding
            problems.append(f"ZIP: {name} does not open in pandas: {exc}")
    try:
        pd.read_excel(io.BytesIO(archive.read("report.xlsx")), sheet_name=None)
    except Exception as exc:
        problems.append(f"ZIP: report.xlsx does not open in pandas: {exc}")
    return problems


def responses_problems(body: bytes, rows: Rows) -> list[str]:
    """responses.csv holds every answer given, in every arm (an arm column)."""
    archive = zipfile.ZipFile(io.BytesIO(body))
    frame = pd.read_csv(io.BytesIO(archive.read("responses.csv")))
    arms = {a["arm"] for a in rows.answers if a["choice"]}
    if len(arms) < 2:
        return []
    if "arm" not in frame.columns:
        return [f"responses.csv has no arm column; the study has answers in {sorted(arms)}"]
    missing = arms - set(frame["arm"].dropna())
    return [f"responses.csv has no answers of arm(s) {sorted(missing)}"] if missing else []


def by_rounding(problem: str) -> bool:
    """An interval problem that is a bound past its estimate by less than 1e-12 (a Wilson
    bound at 0/n or n/n computed as 1e-17 or 0.9999999999999999)."""
    import re

    numbers = [float(x) for x in re.findall(r"-?\d+\.\d+(?:e-?\d+)?", problem.split(":", 1)[1])]
    if len(numbers) < 3:
        return False
    estimate, low, high = numbers[:3]
    return (0 < low - estimate < 1e-12) or (0 < estimate - high < 1e-12)
