"""Expert triage: the study's item analysis, and the expert queue ranked by evidence.

Experts exist to find bad questions. Readers' and models' answers point at them before anyone
complains: a question most raters answer with the same wrong option probably has a wrong key,
one that readers say does not fit the image probably has the wrong image. The queue puts the
strongest evidence first and says why (`QueueRow.reasons`).

Ranking (`evidence`, highest first; ties: questions this expert has not reviewed yet, then the
study's order):

    evidence = 3 x key_suspicion + 2 x complaints + 1 x negative readers' discrimination

- key_suspicion (0-1): see analysis.stats.items (the posterior probability that a wrong
  option is more popular than the key, which grows with the number of raters, or a
  negative pooled discrimination whose CI excludes 0);
- complaints (0-1): per reader who answered, "does not fit" counts 1, "partly" 1/2 and a
  comment 1/2; summed, divided by the readers who answered, capped at 1;
- negative readers' discrimination (0-1): -discrimination_readers when its 95% CI (Fisher's
  z) lies below 0; a negative value from a handful of readers is noise and counts 0.

Every reason shown is one the data support at their n: no discrimination reason unless its
CI excludes 0. The queue shows who chose what (`QueueRow.choices`).

The weights put the kinds of evidence in the order the experts asked for (a wrong key first,
then readers' complaints, then discrimination), while strong evidence of a later kind can
still outrank weak evidence of an earlier one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from django.db.models import Count, Q
from django.urls import reverse

from analysis.rater_names import reader_key
from analysis.selectors import study_questions, study_responses
from analysis.stats import LETTERS, fisher_interval, item_analysis
from annotation.models import ExpertReview
from annotation.sessions import counted_answers, counted_scope
from readerstudy.models import Image, ReaderStudy, StudyQuestion
from readerstudy.vocabulary import Alignment, Arm, Difficulty

WEIGHTS = {"key_suspicion": 3.0, "complaints": 2.0, "discrimination_readers": 1.0}

# Columns of the item-analysis page, CSV, XLSX and API, in order: short heading, description.
ITEM_COLUMNS: dict[str, tuple[str, str]] = {
    "question_id": ("Question", "Question id"),
    "task": ("Task", "ReXVQA task"),
    "key": ("Key", "The correct option as adjudicated (the imported key until a correction)"),
    "key_suspicion": ("Key susp.", "Key suspicion, 0-1 (see above)"),
    "n": ("n", "Raters who answered (readers and models)"),
    "p_readers": ("Readers ✓", "Proportion correct among readers"),
    "p_models": ("Models ✓", "Proportion correct among AI models"),
    "discrimination": ("Discr.", "Corrected point-biserial, readers and models pooled"),
    "discrimination_readers": ("Discr. readers", "Corrected point-biserial, readers only"),
    "share_A": ("A", "Share choosing A"),
    "share_B": ("B", "Share choosing B"),
    "share_C": ("C", "Share choosing C"),
    "share_D": ("D", "Share choosing D"),
    "modal_wrong": ("Wrong", "Most chosen wrong option"),
    "modal_wrong_share": ("Wrong %", "Share choosing the most chosen wrong option"),
    **{
        f"difficulty_{value}": (label, f"Readers rating it {label.lower()}")
        for value, label in Difficulty.choices
    },
    **{
        f"fit_{value}": (f"Fit {label.lower()}", f"Readers: question fits the image: {label}")
        for value, label in Alignment.choices
    },
    "comments": ("Comments", "Readers' comments"),
    "excluded": ("Excl.", "Excluded from the analysis by a PI"),
}


def readers_scope(study: ReaderStudy) -> str:
    """Which of the readers' answers the item analysis and the queue count, in words; empty
    for a study read without the AI. Each reader counts once per question: in a two-arm study
    their unaided session (the question as readers meet it alone: the aided answers lean on
    the model's and would count one reader twice); the arms are compared on the analysis page."""
    arms = study.arm_list
    if len(arms) > 1:
        return (
            f"{counted_scope(study)}, and the aided answers lean on the AI's. The arms are "
            "compared under Aided against unaided on the analysis page."
        )
    if Arm.AIDED in arms:
        return (
            "Readers answered with the AI's answer shown (aided arm): where they agree with "
            "the models it may be the AI speaking, so agreement on a wrong option is weaker "
            "evidence against the key than in a study read alone."
        )
    return ""


def responses_with_comments(study: ReaderStudy) -> pd.DataFrame:
    """The analysis' long frame plus each reader's comment (item analysis counts them), from
    the same arm as the frame's answers (`readers_scope`), matched by reader, not by name."""
    frame = study_responses(study)
    comments = {
        (source_id, reader_key(reader_id)): comment
        for source_id, reader_id, comment in counted_answers(study)
        .exclude(comment="")
        .values_list("item__question__source_id", "reader_id", "comment")
    }
    keys = zip(frame["question_id"], frame["rater_id"], frame["rater_kind"], strict=True)
    frame["comment"] = [comments.get((q, r), "") if kind == "human" else "" for q, r, kind in keys]
    return frame


def study_item_analysis(study: ReaderStudy, frame: pd.DataFrame | None = None) -> pd.DataFrame:
    """`item_analysis` of every question of the study (excluded ones too, marked)."""
    questions = study_questions(study)
    frame = responses_with_comments(study) if frame is None else frame
    levels = {
        "difficulty_levels": tuple(Difficulty.values),
        "fit_levels": tuple(Alignment.values),
    }
    if frame.empty:  # nobody has answered and no model predicted: counts are zero
        frame = pd.DataFrame(
            {
                "question_id": questions["question_id"],
                "rater": "-",
                "rater_kind": "human",
                "answer": None,
                "correct_answer": questions["correct_answer"],
            }
        )
    stats = item_analysis(frame, **levels)
    meta = questions[["item_id", "question_id", "task", "excluded"]]
    return meta.merge(stats, on="question_id", how="left")


def complaints_score(row) -> float:
    readers = row["n_readers"]
    if not readers:
        return 0.0
    raw = row["fit_no"] + 0.5 * row["fit_partly"] + 0.5 * row["comments"]
    return min(1.0, raw / readers)


def _number(value) -> float | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value


@dataclass(frozen=True)
class QueueRow:
    item: StudyQuestion
    thumbnail_url: str | None
    key: str
    modal_wrong: str | None
    modal_wrong_share: float
    modal_wrong_count: int
    key_count: int
    answered: int
    key_suspicion: float
    complaints: float
    discrimination: float | None
    discrimination_readers: float | None
    fit_no: int
    fit_partly: int
    comments: int
    evidence: float
    reasons: list[str]
    reviews: int
    reviewed_by_me: bool
    choices: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (letter, raters who chose it)
    counts: tuple[tuple[str, int], ...] = ()  # (letter, raters choosing it), every option
    most_chosen: tuple[str, ...] = ()  # every option at the top count: more than one is a tie
    wrong_tied: tuple[str, ...] = ()  # every wrong option at the top wrong count
    my_review: ExpertReview | None = None  # this expert's saved review: decision and flags
    rank: int = 0  # 1-based place in the queue

    @property
    def top_count(self) -> int:
        return max((n for _, n in self.counts), default=0)

    @property
    def tie(self) -> bool:
        return len(self.most_chosen) > 1

    def options(self) -> list[dict]:
        """The evidence panel's rows: per option, its text, raters choosing it (count, share,
        names), whether it is the key, and whether it is (one of) the most chosen."""
        names = dict(self.choices)
        texts = dict(self.item.question.labelled_options)
        return [
            {
                "letter": letter,
                "text": texts.get(letter, ""),
                "count": count,
                "percent": round(100 * count / self.answered) if self.answered else 0,
                "names": names.get(letter, ()),
                "is_key": letter == self.key,
                "is_top": letter in self.most_chosen,
            }
            for letter, count in self.counts
        ]


def option_counts(row) -> tuple[tuple[str, int], ...]:
    """(letter, raters choosing it) for A-D, from the item analysis' shares of n."""
    n = int(row["n"])
    return tuple(
        (letter, round((_number(row[f"share_{letter}"]) or 0.0) * n)) for letter in LETTERS
    )


def tied_top(counts, exclude: str | None = None) -> tuple[str, ...]:
    """Every letter at the highest count above 0 (leaving `exclude`, the key, out): a tie is
    shown as a tie, never as the earlier letter."""
    pool = [(letter, n) for letter, n in counts if letter != exclude]
    top = max((n for _, n in pool), default=0)
    return tuple(letter for letter, n in pool if top and n == top)


def choices_by_question(frame: pd.DataFrame) -> dict[str, tuple]:
    """question id -> ((letter, (rater names...)), ...) for the letters someone chose: the
    evidence behind a key suspicion, shown to the experts (names as the analysis shows them)."""
    answered = frame[frame["answer"].isin(LETTERS)]
    out: dict[str, tuple] = {}
    for question, part in answered.groupby("question_id", sort=False):
        by_letter = part.groupby("answer")["rater"].apply(lambda r: tuple(sorted(r)))
        out[question] = tuple(by_letter.items())
    return out


def reasons_for(row) -> list[str]:
    """Why a question ranks where it does, in words an expert reads at a glance."""
    reasons = []
    n = int(row["n"])
    if row["wrong_consensus"] > 0:
        chosen = round(row["modal_wrong_share"] * n)
        key_votes = round(row[f"share_{row['key']}"] * n)
        tied = tied_top(option_counts(row), exclude=row["key"])
        if len(tied) > 1:
            picked = f"each chose {', '.join(tied)} (tie)"
        else:
            picked = f"chose {row['modal_wrong']}"
        reasons.append(f"{chosen} of {n} raters {picked}, {key_votes} the key {row['key']}")
    discrimination = _number(row["discrimination"])
    high = _number(row.get("discrimination_high"))
    if discrimination is not None and high is not None and high < 0:
        low = _number(row.get("discrimination_low"))
        reasons.append(
            f"Negative discrimination {discrimination:.2f} (95% CI {low:.2f} to {high:.2f}): "
            "stronger raters miss it"
        )
    readers = int(row["n_readers"])
    if row["fit_no"]:
        reasons.append(f"{int(row['fit_no'])} of {readers} readers: question does not fit")
    if row["fit_partly"]:
        reasons.append(f"{int(row['fit_partly'])} of {readers} readers: fits only partly")
    if row["comments"]:
        count = int(row["comments"])
        reasons.append(f"{count} reader comment{'s' if count != 1 else ''}")
    readers_disc = _number(row["discrimination_readers"])
    low, high = fisher_interval(readers_disc if readers_disc is not None else np.nan, readers)
    if readers_disc is not None and high < 0:
        reasons.append(
            f"Readers' discrimination {readers_disc:.2f} (95% CI {low:.2f} to {high:.2f})"
        )
    return reasons


def evidence_of(row) -> tuple[float, float]:
    """(evidence score, complaints) for one row of the study's item analysis."""
    complaints = complaints_score(row)
    readers_disc = _number(row["discrimination_readers"])
    _, high = fisher_interval(
        readers_disc if readers_disc is not None else np.nan, int(row["n_readers"])
    )
    negative = -readers_disc if readers_disc is not None and high < 0 else 0.0
    score = (
        WEIGHTS["key_suspicion"] * float(row["key_suspicion"])
        + WEIGHTS["complaints"] * complaints
        + WEIGHTS["discrimination_readers"] * negative
    )
    return round(score, 9), complaints


def _thumbnails(study: ReaderStudy) -> dict[int, str]:
    """case id -> URL of the first view's thumbnail."""
    out: dict[int, str] = {}
    images = (
        Image.objects.filter(case__questions__study_items__study=study)
        .exclude(thumbnail="")
        .order_by("case_id", "position")
        .values_list("case_id", "thumbnail")
    )
    for case_id, thumbnail in images:
        out.setdefault(case_id, reverse("media-image", args=[thumbnail]))
    return out


def triage_queue(study: ReaderStudy, expert) -> list[QueueRow]:
    """Every question of the study, strongest evidence of a problem first (module docstring)."""
    frame = responses_with_comments(study)
    analysis = study_item_analysis(study, frame).set_index("item_id")
    chosen = choices_by_question(frame) if not frame.empty else {}
    items = (
        StudyQuestion.objects.filter(study=study)
        .select_related("question")
        .annotate(
            n_reviews=Count("reviews", distinct=True),
            n_mine=Count("reviews", filter=Q(reviews__expert=expert), distinct=True),
        )
    )
    thumbnails = _thumbnails(study)
    mine = {
        review.item_id: review
        for review in ExpertReview.objects.filter(item__study=study, expert=expert)
    }
    rows = []
    for item in items:
        row = analysis.loc[item.id]
        evidence, complaints = evidence_of(row)
        counts = option_counts(row)
        key = row["key"]  # the key the item analysis scored by (readerstudy.keys, as adjudicated)
        rows.append(
            QueueRow(
                item=item,
                thumbnail_url=thumbnails.get(item.question.case_id),
                key=key,
                modal_wrong=row["modal_wrong"] if isinstance(row["modal_wrong"], str) else None,
                modal_wrong_share=float(row["modal_wrong_share"]),
                modal_wrong_count=round(float(row["modal_wrong_share"]) * int(row["n"])),
                key_count=round((_number(row[f"share_{key}"]) or 0) * int(row["n"])),
                answered=int(row["n"]),
                key_suspicion=float(row["key_suspicion"]),
                complaints=complaints,
                discrimination=_number(row["discrimination"]),
                discrimination_readers=_number(row["discrimination_readers"]),
                fit_no=int(row["fit_no"]),
                fit_partly=int(row["fit_partly"]),
                comments=int(row["comments"]),
                evidence=evidence,
                reasons=reasons_for(row),
                reviews=item.n_reviews,
                reviewed_by_me=item.n_mine > 0,
                choices=chosen.get(item.question.source_id, ()),
                counts=counts,
                most_chosen=tied_top(counts),
                wrong_tied=tied_top(counts, exclude=key),
                my_review=mine.get(item.id),
            )
        )
    rows.sort(key=lambda r: (-r.evidence, r.reviewed_by_me, r.item.position))
    return [replace(row, rank=rank) for rank, row in enumerate(rows, start=1)]


def question_evidence(study: ReaderStudy, expert, item_id: int) -> QueueRow | None:
    """One question's row of the queue (its rank among all, which needs them all): the
    evidence panel of the review page."""
    return next((row for row in triage_queue(study, expert) if row.item.id == item_id), None)


def next_to_review(study: ReaderStudy, expert, skip: int | None = None) -> StudyQuestion | None:
    """The highest-ranked question this expert has not reviewed yet (`skip`: counting that
    question as reviewed, as it will be once the review being written is saved)."""
    reviewed = set(
        ExpertReview.objects.filter(item__study=study, expert=expert).values_list(
            "item_id", flat=True
        )
    )
    if skip is not None:
        reviewed.add(skip)
    for row in triage_queue(study, expert):
        if row.item.id not in reviewed:
            return row.item
    return None
