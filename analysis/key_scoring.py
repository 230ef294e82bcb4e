"""What the analysis scores each answer against (readerstudy.keys, under the policy's `key`),
as columns of its frames, and the study's key history as plain data for the outputs.

The one bridge from versioned keys to the pure analysis: the responses frame
(analysis.selectors.study_responses) and the design frame (analysis.design_frame) take their
key columns from `KeyColumns`, so no table compares an answer with the key as imported.

Per row (a rater and a question):

- `shown_version`: the version whose words the rater saw: a reader's answer records it; an AI
  model's predictions are taken as shown the words current when they were imported
  (`KeyBook.shown_at`); None without an answer.
- `key_version`: the version the row is scored against under the policy (a row without an
  answer: the question's own key).
- `accepted`: the letters counted correct under the policy ("B"; "BC": several valid).
- `original_accepted`, `adjudicated_accepted`: the same under each policy, so one analysis
  can state every rater's accuracy under both (analysis.key_version).
- `earlier_words`: under adjudicated keys, an answer given to words a later version changed
  is scored against the key of the words its reader saw; True for those answers.

`correct_answer` (a question's column) is the question's key under the policy: its current
version's under adjudicated keys, version 1's under the original ones.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime

import numpy as np

from readerstudy.keys import KeyBook, ScoringKey
from readerstudy.models import ReaderStudy
from readerstudy.question_versions import QuestionVersion
from readerstudy.vocabulary import (
    DEFAULT_KEY_POLICY,
    ErrorType,
    KeyPolicy,
    VersionChange,
    labelled,
)

ROW_COLUMNS = (
    "shown_version",
    "key_version",
    "accepted",
    "original_accepted",
    "adjudicated_accepted",
    "earlier_words",
)


def _letters(key: ScoringKey) -> str:
    return "".join(sorted(key.accepted))


class KeyColumns:
    """The key columns of many rows of some questions under one policy, from one KeyBook
    (two queries, whatever the number of answers)."""

    def __init__(self, question_pks: Iterable[int], policy: str = DEFAULT_KEY_POLICY):
        if policy not in KeyPolicy.values:
            raise ValueError(f"unknown key policy {policy!r}")
        self.policy = str(policy)
        self.book = KeyBook.of(list(question_pks), keys_only=True)
        self._cache: dict[tuple[int, int | None], tuple] = {}

    def question_key(self, pk: int) -> str:
        """The question's key under the policy (its `correct_answer`)."""
        return self.book.key(pk, policy=self.policy).key

    def shown_by_version_id(self, version_id: int | None) -> int | None:
        """An answer's recorded `question_version_id` as the version's number."""
        return None if version_id is None else self.book.by_pk(version_id).number

    def shown_at(self, pk: int, when: datetime | None) -> int:
        """The version a rater without a record (an AI model) is taken to have been shown."""
        if when is None:
            return self.book.current(pk).number
        return self.book.shown_at(pk, when)

    def _row(self, pk: int, shown: int | None) -> tuple:
        found = self._cache.get((pk, shown))
        if found is None:
            original = self.book.key(pk, policy=KeyPolicy.ORIGINAL, shown=shown)
            adjudicated = self.book.key(pk, policy=KeyPolicy.ADJUDICATED, shown=shown)
            chosen = original if self.policy == KeyPolicy.ORIGINAL else adjudicated
            current = self.book.current(pk)
            earlier = (
                shown is not None
                and self.policy == KeyPolicy.ADJUDICATED
                and self.book.version(pk, shown).wording != current.wording
            )
            found = (
                chosen.version,
                _letters(chosen),
                _letters(original),
                _letters(adjudicated),
                bool(earlier),
            )
            self._cache[(pk, shown)] = found
        return found

    def rows(self, pks: Sequence[int], shown: Sequence[int | None]) -> dict[str, np.ndarray]:
        """ROW_COLUMNS for rows of questions `pks`, each shown version `shown` (None: no
        answer), as object arrays in the rows' order."""
        out = {name: np.empty(len(pks), dtype=object) for name in ROW_COLUMNS}
        for row, (pk, version) in enumerate(zip(pks, shown, strict=True)):
            key_version, accepted, original, adjudicated, earlier = self._row(pk, version)
            out["shown_version"][row] = version
            out["key_version"][row] = key_version
            out["accepted"][row] = accepted
            out["original_accepted"][row] = original
            out["adjudicated_accepted"][row] = adjudicated
            out["earlier_words"][row] = earlier if version is not None else False
        return out


ERROR_LABELS = labelled(ErrorType)
CHANGE_LABELS = labelled(VersionChange)


def study_key_facts(study: ReaderStudy) -> dict:
    """The key history of the study's questions, as plain data (analysis.key_version turns it
    into the key-changes table and the statement every output makes): one row per version
    after the first, in the order they were made; `adjudicated_on` the date of the newest.
    Another study's decision on a shared question is a version of it too, and says so."""
    versions = list(
        QuestionVersion.objects.filter(question__study_items__study=study, number__gt=1)
        .select_related("question", "decided_by", "study", "reverses")
        .order_by("created_at", "question_id", "number")
        .distinct()
    )
    earlier = {
        (v.question_id, v.number): v
        for v in QuestionVersion.objects.filter(
            question_id__in={v.question_id for v in versions}
        ).only("question_id", "number", "correct", "accepted", "wording")
    }
    changes = []
    for version in versions:
        before = earlier.get((version.question_id, version.number - 1))
        changes.append(
            {
                "question_id": version.question.source_id,
                "version": version.number,
                "change": CHANGE_LABELS.get(version.change, version.change),
                "old_key": before.correct if before else "",
                "old_accepted": ", ".join(before.accepted) if before else "",
                "new_key": version.correct,
                "new_accepted": ", ".join(version.accepted),
                "error_type": version.error_type,
                "error_label": ERROR_LABELS.get(version.error_type, ""),
                "reverses": version.reverses.number if version.reverses else None,
                "decided_by": version.decided_by.get_username() if version.decided_by else "",
                "rule": version.rule,
                "decided_in": (
                    "this study"
                    if version.study_id == study.pk
                    else (version.study.slug if version.study else "")
                ),
                "decided_at": version.created_at.isoformat(timespec="minutes"),
                "words_changed": version.wording == version.number,
            }
        )
    book = KeyBook.of(study.items.values_list("question_id", flat=True))
    rekeyed = several = reworded = 0
    for pk in book.question_ids():
        first, current = book.versions(pk)[0], book.current(pk)
        rekeyed += current.correct != first.correct
        several += len(current.accepted) > 1
        reworded += current.wording != first.wording
    return {
        "changes": changes,
        "adjudicated_on": versions[-1].created_at.date().isoformat() if versions else None,
        "rekeyed": rekeyed,
        "several_valid": several,
        "reworded": reworded,
    }
