"""The design-aware long frame: one row per (reader, arm, question) a reader was to read.

The companion analysis (analysis/stats, two-modality MRMC) takes this frame; it is the one
bridge from a designed study's rows to it. Every letter is canonical (the question's own
A-D), whatever order a reader saw the options in.
"""

from __future__ import annotations

import pandas as pd

from analysis.key_scoring import KeyColumns
from analysis.rater_names import display_names, joined_readers, reader_key, study_labels
from analysis.selectors import RATING_COLUMNS
from annotation.models import Answer
from readerstudy.models import ItemAid, ReaderAssignment, ReaderStudy, Task
from readerstudy.vocabulary import DEFAULT_KEY_POLICY

DESIGN_COLUMNS = [
    "reader",
    "arm",
    "case_id",
    "question_id",
    "task",
    "answer",
    "first_answer",
    "ai_answer",
    "correct_answer",
    "session",
    "reader_group",
    "case_group",
    "time_ms",
    *RATING_COLUMNS,
    "first_confidence",  # a second read's: the confidence of its first answer
    "rater_id",
    # What each answer (and its first answer) is scored against (analysis.key_scoring).
    "accepted",
    "key_version",
]
TASK_LABELS = dict(Task.choices)


def design_frame(
    study: ReaderStudy, *, include_excluded: bool = False, key: str = DEFAULT_KEY_POLICY
) -> pd.DataFrame:
    """Readers who answered at least one question, each with a row for every question of
    their group (all questions without groups) in every arm; answer None where they have not
    (yet) given one. Questions excluded from analysis are left out. `session` is the session
    in which the reader read that arm (1 for a single-arm study); `case_group` is "anchor"
    for the anchor set and None without groups; `first_answer` is the unaided first answer
    of a second read (else None); `ai_answer` the AI's answer shown in the aided arm (None:
    no usable answer, or no aided arm); the reader's ratings with that answer
    (selectors.RATING_COLUMNS) and a second read's `first_confidence`; `rater_id` the reader's
    key in the other tables.
    `include_excluded`: the policy's, keep the questions a PI excluded. `correct_answer` is
    the question's key under the key policy `key`, `accepted` what the row's answers are
    scored against (the version their reader was shown)."""
    items = study.items.all() if include_excluded else study.items.filter(excluded=False)
    items = list(
        items.order_by("position").values_list(
            "id",
            "question__source_id",
            "question__task",
            "question_id",
            "question__case__study_id",
            "case_group",
            "anchor",
        )
    )
    aid = dict(
        ItemAid.objects.filter(item__study=study, usable=True).values_list("item_id", "letter")
    )
    keys = KeyColumns([row[3] for row in items], key)
    given = {
        (reader_id, session, item_id): (choice or None, first or None, *rest)
        for reader_id, session, item_id, choice, first, *rest in Answer.objects.filter(
            item__study=study
        ).values_list(
            "reader_id",
            "session",
            "item_id",
            "choice",
            "first_choice",
            "time_ms",
            "question_version_id",
            *RATING_COLUMNS,
            "first_confidence",
        )
    }
    readers = dict(
        Answer.objects.filter(item__study=study)
        .values_list("reader_id", "reader__username")
        .distinct()
    )
    assignments = {
        a.reader_id: a
        for a in ReaderAssignment.objects.filter(study=study, reader_id__in=readers).select_related(
            "study"
        )
    }
    rows = []
    # Readers by the names the rest of the analysis gives them ("Reader 1", or the PI's
    # labels): a design table beside the accuracy table never names a reader by username.
    names = {
        r.rater_id: r.name
        for r in display_names(set(readers.items()), (), study_labels(study), joined_readers(study))
    }
    for reader_id in sorted(readers):  # the order of their names' numbers
        assignment = assignments.get(reader_id)
        group = assignment.reader_group if assignment else None
        for session, arm in enumerate(
            [assignment.arm_of(s) for s in range(1, len(study.arm_list) + 1)]
            if assignment
            else list(study.arm_list),
            start=1,
        ):
            for item_id, qid, task, pk, case, case_group, anchor in items:
                if group is not None and not anchor and case_group != group:
                    continue
                choice, first, time_ms, version, *ratings = given.get(
                    (reader_id, session, item_id), (None,) * (5 + len(RATING_COLUMNS))
                )
                scored = keys.rows([pk], [keys.shown_by_version_id(version)])
                rows.append(
                    (
                        names[reader_key(reader_id)],
                        str(arm),
                        str(case),
                        qid,
                        TASK_LABELS.get(task, task),
                        choice,
                        first,
                        aid.get(item_id),
                        keys.question_key(pk),
                        session,
                        str(group) if group is not None else None,
                        "anchor" if anchor else (str(case_group) if case_group else None),
                        time_ms,
                        *ratings,
                        reader_key(reader_id),
                        scored["accepted"][0],
                        scored["key_version"][0],
                    )
                )
    frame = pd.DataFrame(rows, columns=DESIGN_COLUMNS)
    for column in ("answer", "first_answer", "ai_answer", "reader_group", "case_group"):
        frame[column] = frame[column].astype(object).where(frame[column].notna(), None)
    return frame
