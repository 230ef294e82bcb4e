"""The two-arm study as the design-aware analysis reads it: checks and the reader x X-ray cube.

Input is the long frame the study design produces, one row per (reader, arm, question):

    reader, arm ("unaided"/"aided"), case_id (the X-ray), question_id, task, answer,
    first_answer (second-read: the answer given before the AI was shown), ai_answer,
    correct_answer, session, reader_group, case_group ("anchor" for anchor X-rays), time_ms

Every letter is the question's canonical letter (A-D): with shuffled options the screen order
differs per reader, so only canonical letters can be compared between readers, arms and the AI.
`check_canonical` refuses a frame in which any letter is not one of A-D (or empty for "no
answer"): an unmapped answer must stop the analysis, not turn silently into "wrong".

`modality_cube` turns the frame into the array the Obuchowski-Rockette analysis reads:
modalities x readers x X-rays sums of correct answers, and the questions counted in each
cell under the missing-answer policy, so a reader's accuracy is computed over questions and the
jackknife leaves out whole X-rays.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from analysis.stats.frame import ACCEPTED, LETTERS, AnalysisInputError, Missing, right

ARMS = ("unaided", "aided")
ANCHOR = "anchor"
DESIGN_COLUMNS = ("reader", "arm", "case_id", "question_id", "answer", "correct_answer")
LETTER_COLUMNS = ("answer", "first_answer", "ai_answer", "correct_answer")


def _blank(values: pd.Series) -> np.ndarray:
    return values.isna().to_numpy()


def check_canonical(frame: pd.DataFrame) -> None:
    """Refuse the frame unless every letter is a canonical A-D (or empty = no answer).

    Raises AnalysisInputError naming the count and the first rows that cannot be mapped; a
    correct answer must never be empty. No normalisation ("b", " C") is attempted: the letters
    come from the design's own mapping, so anything else means the mapping failed.
    """
    missing = [c for c in DESIGN_COLUMNS if c not in frame.columns]
    if missing:
        raise AnalysisInputError(f"missing column(s): {', '.join(missing)}")
    problems = []
    for column in LETTER_COLUMNS:
        if column not in frame.columns:
            continue
        values = frame[column]
        blank = _blank(values)
        bad = ~blank & ~values.isin(LETTERS).to_numpy()
        if column == "correct_answer":
            bad |= blank
        if bad.any():
            rows = frame.loc[bad]
            examples = "; ".join(
                f"{row.reader}/{row.arm}/question {row.question_id}: {row[column]!r}"
                for _, row in rows.head(3).iterrows()
            )
            problems.append(f"{int(bad.sum())} {column} value(s) not a canonical A-D ({examples})")
    arms = set(frame["arm"].dropna().unique())
    if arms - set(ARMS):
        problems.append(f"unknown arm(s) {sorted(arms - set(ARMS))}; expected {list(ARMS)}")
    keys = ["reader", "arm", "question_id"]
    duplicated = frame.duplicated(keys)
    if duplicated.any():
        first = frame.loc[duplicated, keys].iloc[0].tolist()
        problems.append(f"more than one row for reader/arm/question {first}")
    if frame["case_id"].isna().any():
        problems.append(f"{int(frame['case_id'].isna().sum())} row(s) without an X-ray (case_id)")
    if problems:
        raise AnalysisInputError(
            "the analysis is refused: answers must be canonical letters. " + "; ".join(problems)
        )


def is_second_read(frame: pd.DataFrame) -> bool:
    """A second-read study keeps the pre-AI answer of aided reads in `first_answer`."""
    return "first_answer" in frame.columns and frame["first_answer"].notna().any()


def is_split_plot(frame: pd.DataFrame) -> bool:
    """Split-plot: readers and X-rays carry group labels (anchor X-rays aside)."""
    if "reader_group" not in frame.columns or "case_group" not in frame.columns:
        return False
    groups = frame.loc[frame["case_group"] != ANCHOR, "case_group"].dropna().unique()
    return frame["reader_group"].notna().any() and len(groups) > 1


@dataclass(frozen=True)
class Modalities:
    """The two readings compared, with the column holding each one's answer."""

    names: tuple[str, str]  # (reference, test): the difference is test - reference
    labels: tuple[str, str]
    sentence: str

    @property
    def comparison(self) -> str:
        return f"{self.labels[1]} − {self.labels[0]}"


CROSSOVER = Modalities(
    ("unaided", "aided"),
    ("unaided", "aided"),
    "each reader read each X-ray once unaided and once aided",
)
SECOND_READ = Modalities(
    ("first", "final"),
    ("first answer (before the AI)", "final answer (after the AI)"),
    "second read: each reader's first answer (before seeing the AI) against their final answer "
    "(after seeing it), on the same aided reads",
)


def modality_answers(frame: pd.DataFrame) -> tuple[Modalities, pd.DataFrame]:
    """Long rows (reader, modality, case_id, question_id, task, answer, correct_answer, group).

    Crossover: the two arms. Second read: the aided arm's first and final answers.
    """
    columns = ["reader", "case_id", "question_id", "correct_answer"]
    extra = [c for c in ("task", "reader_group", "case_group", ACCEPTED) if c in frame.columns]
    if is_second_read(frame):
        aided = frame[frame["arm"] == "aided"]
        first = aided[columns + extra].assign(modality="first", answer=aided["first_answer"])
        final = aided[columns + extra].assign(modality="final", answer=aided["answer"])
        return SECOND_READ, pd.concat([first, final], ignore_index=True)
    rows = frame[columns + extra].assign(modality=frame["arm"], answer=frame["answer"])
    return CROSSOVER, rows


@dataclass(frozen=True)
class Cube:
    """Modalities x readers x X-rays: correct answers and questions counted, per cell.

    `groups[j]` is reader j's split-plot group (all 0 in a factorial design); X-ray k belongs
    to `case_groups[k]`. A cell of a reader outside the X-ray's group is empty (counted 0).
    """

    modalities: Modalities
    readers: list[str]
    case_ids: np.ndarray
    correct: np.ndarray
    counted: np.ndarray
    groups: np.ndarray
    case_groups: np.ndarray
    group_names: list[str]
    n_questions: int
    dropped_questions: int
    left_out_readers: tuple[str, ...] = ()

    @property
    def split_plot(self) -> bool:
        return len(self.group_names) > 1

    @property
    def fom(self) -> np.ndarray:
        """Modalities x readers: correct / counted over every X-ray the reader read."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return self.correct.sum(axis=2) / self.counted.sum(axis=2)


def comparison_rows(
    frame: pd.DataFrame, missing: Missing = "wrong"
) -> tuple[Modalities, pd.DataFrame, int, list[str]]:
    """The rows the comparison uses, with `right` and `counted` per row, the number of
    questions left out and the readers left out (checked with `check_canonical` first).

    A reader without a single answer in one modality (say, whose second session has not
    opened) has not read it yet: their rows would all count as wrong under missing="wrong",
    so they are left out of the comparison and named.

    Only questions every reader of the X-ray's group has a row for in both modalities enter
    (a paired design; mid-study, the questions not yet read by everyone are left out and
    counted). Anchor X-rays of a split-plot design are left out of the comparison (they are
    read by everyone and feed agreement instead). Under missing="wrong" an empty answer counts
    as a wrong answer; under "exclude" it is not counted. Group labels: "" when factorial.
    """
    if missing not in ("wrong", "exclude"):
        raise AnalysisInputError("missing must be 'wrong' or 'exclude'")
    check_canonical(frame)
    modalities, rows = modality_answers(frame)
    split = is_split_plot(frame)
    rows = rows.assign(reader=rows["reader"].astype(str))
    answered = rows[rows["answer"].notna()].groupby("reader")["modality"].nunique()
    started = set(answered.index[answered == len(modalities.names)])
    left_out = sorted(set(rows["reader"]) - started)
    rows = rows[rows["reader"].isin(started)]
    if split:
        rows = rows[rows["case_group"] != ANCHOR]
        rows = rows.assign(
            reader_group=rows["reader_group"].astype(str), case_group=rows["case_group"].astype(str)
        )
        unread = set(rows["case_group"]) - set(rows["reader_group"])
        if unread:
            raise AnalysisInputError(f"X-ray group(s) {sorted(unread)} have no readers")
    else:
        rows = rows.assign(reader_group="", case_group="")
    readers_in = rows.groupby("reader_group")["reader"].nunique()
    total_questions = rows["question_id"].nunique()
    present = rows.groupby(["question_id", "modality"])["reader"].nunique().unstack(fill_value=0)
    needed = rows.drop_duplicates("question_id").set_index("question_id")["case_group"]
    needed = needed.map(readers_in).reindex(present.index)
    complete = np.ones(len(present), dtype=bool)
    for name in modalities.names:
        have = present[name] if name in present.columns else 0
        complete &= (have == needed).to_numpy()
    rows = rows[rows["question_id"].isin(present.index[complete])]
    if rows.empty:
        raise AnalysisInputError("no question has been read by every reader in both modalities")
    answered = rows["answer"].notna()
    rows = rows.assign(
        right=right(rows),
        counted=answered if missing == "exclude" else True,
    )
    return modalities, rows, total_questions - int(complete.sum()), left_out


def cube_from_rows(
    modalities: Modalities, rows: pd.DataFrame, dropped: int = 0, left_out: list[str] | None = None
) -> Cube:
    """Sum rows (reader, modality, case_id, question_id, right, counted, reader_group,
    case_group) into the cube; the MRMC-package files are read back through this too."""
    readers = sorted(pd.unique(rows["reader"]))
    case_ids = np.asarray(sorted(pd.unique(rows["case_id"]), key=str), dtype=object)
    reader_group = rows.groupby("reader")["reader_group"].first()
    case_group = rows.groupby("case_id")["case_group"].first()
    names = sorted(map(str, pd.unique(reader_group.to_numpy())))
    case_index = {c: k for k, c in enumerate(case_ids)}
    reader_index = {r: j for j, r in enumerate(readers)}
    m = rows["modality"].map({n: i for i, n in enumerate(modalities.names)}).to_numpy()
    j = rows["reader"].map(reader_index).to_numpy()
    k = rows["case_id"].map(case_index).to_numpy()
    shape = (2, len(readers), len(case_ids))
    correct = np.zeros(shape)
    counted = np.zeros(shape)
    np.add.at(correct, (m, j, k), rows["right"].to_numpy(dtype=float))
    np.add.at(counted, (m, j, k), rows["counted"].to_numpy(dtype=float))
    groups = np.array([names.index(str(reader_group[r])) for r in readers])
    case_groups = np.array([names.index(str(case_group[c])) for c in case_ids], dtype=int)
    return Cube(
        modalities,
        list(readers),
        case_ids,
        correct,
        counted,
        groups,
        case_groups,
        names,
        int(rows["question_id"].nunique()),
        dropped,
        tuple(left_out or ()),
    )


def modality_cube(frame: pd.DataFrame, missing: Missing = "wrong") -> Cube:
    """The OR input from the design frame: `comparison_rows` summed by `cube_from_rows`."""
    modalities, rows, dropped, left_out = comparison_rows(frame, missing)
    return cube_from_rows(modalities, rows, dropped, left_out)


@dataclass(frozen=True)
class DesignTable:
    """A table with what its numbers rest on."""

    data: pd.DataFrame
    unit: str
    method: str
    policy: str

    def header_lines(self) -> list[str]:
        return [f"unit: {self.unit}", f"method: {self.method}", f"policy: {self.policy}"]
