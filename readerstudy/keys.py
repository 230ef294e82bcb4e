"""The key of a question under a key policy, and the version an answer is scored against:
the one place every output asks (the analysis, a reader's debrief, the exports).

Versions belong to the bank question (readerstudy.question_versions). Scoring, per answer:

- `KeyPolicy.ORIGINAL`: version 1's key, the key as imported, for every answer.
- `KeyPolicy.ADJUDICATED` with `WordingRule.AS_SHOWN` (the default): the latest version with
  the words the answer's reader was shown. A version that changes only the key or the
  accepted answers keeps its predecessor's words, so it re-scores every answer given to them;
  one that changes the words leaves answers given to the earlier words scored against the
  latest key of those words. A reversal is a version too, so it restores earlier scores
  exactly.
- `KeyPolicy.ADJUDICATED` with `WordingRule.LATEST`: the latest version, for every answer.

An answer is correct when its letter is one of the version's accepted answers (the key among
them: "several valid answers"). `as_of` leaves out versions made after that moment ("keys as
adjudicated on DATE"). Whose decision a version rests on is on the version itself (`study`,
`decided_by`, `rule`, `created_at`): a study holding a question another study corrected
scores by that correction too, and says whose it is.

Blinding is not decided here: a page that would show a key to a person asks
readerstudy.blinding.may_see_answers first.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from readerstudy.models import Question
from readerstudy.question_versions import QuestionVersion
from readerstudy.services.versions import first_version
from readerstudy.vocabulary import DEFAULT_KEY_POLICY, KeyPolicy, WordingRule

# What scoring reads of a version (KeyBook.of(keys_only=True)).
SCORING_FIELDS = ("id", "question_id", "number", "correct", "accepted", "wording", "created_at")
# Ids per query: SQLite allows 32,766 variables in one statement, ReXVQA's test split has
# 40,826 questions.
CHUNK = 10_000


def _chunks(ids: list[int]) -> list[list[int]]:
    return [ids[start : start + CHUNK] for start in range(0, len(ids), CHUNK)] or [[]]


@dataclass(frozen=True)
class ScoringKey:
    """The key an answer (or a question) is scored against, and where it comes from."""

    question_id: int
    version: int  # the version whose key this is
    key: str
    accepted: frozenset[str]  # every letter counted correct, the key among them
    policy: str
    shown: int | None = None  # the version whose words the answer's reader saw

    def correct(self, letter: str | None) -> bool | None:
        """Is `letter` a right answer? None for no answer (missing, failed extraction)."""
        if not letter:
            return None
        return letter in self.accepted


class KeyBook:
    """Every version of some questions, read once (one query), so that the keys of many
    answers need no query each. Build it with `KeyBook.of(...)`."""

    def __init__(self, versions: Iterable[QuestionVersion], *, as_of: datetime | None = None):
        self.as_of = as_of
        self._all: dict[int, dict[int, QuestionVersion]] = {}
        self._by_pk: dict[int, QuestionVersion] = {}
        for version in versions:
            self._all.setdefault(version.question_id, {})[version.number] = version
            self._by_pk[version.pk] = version

    @classmethod
    def of(
        cls,
        questions: Iterable[int | Question],
        *,
        as_of: datetime | None = None,
        keys_only: bool = False,
    ) -> KeyBook:
        """The versions of `questions` (ids or Question rows; a question with no version row
        yet counts as its version 1, from the Question row). `keys_only`: read no words
        (scoring a whole dataset's answers needs the keys, not 40,000 questions' texts)."""
        rows = list(questions)
        ids = [q.pk if isinstance(q, Question) else int(q) for q in rows]
        versions = QuestionVersion.objects.all()
        if keys_only:
            versions = versions.only(*SCORING_FIELDS)
        book = cls(
            (v for chunk in _chunks(ids) for v in versions.filter(question_id__in=chunk)),
            as_of=as_of,
        )
        missing = [pk for pk in ids if pk not in book._all]
        if missing:
            by_id = {q.pk: q for q in rows if isinstance(q, Question)}
            lacking = [by_id.get(pk) for pk in missing]
            if any(q is None for q in lacking):
                lacking = [
                    q for chunk in _chunks(missing) for q in Question.objects.filter(pk__in=chunk)
                ]
            for question in lacking:
                book._all[question.pk] = {1: first_version(question)}
        return book

    def question_ids(self) -> list[int]:
        """The questions this book holds."""
        return list(self._all)

    def versions(self, question_id: int) -> list[QuestionVersion]:
        """The question's versions in order, those made after `as_of` left out."""
        every = self._all[question_id]
        return [
            every[n]
            for n in sorted(every)
            if n == 1 or self.as_of is None or every[n].created_at <= self.as_of
        ]

    def current(self, question_id: int) -> QuestionVersion:
        """The question as it is now (or as of `as_of`)."""
        return self.versions(question_id)[-1]

    def version(self, question_id: int, number: int) -> QuestionVersion:
        return self._all[question_id][number]

    def by_pk(self, version_id: int) -> QuestionVersion:
        """A version by its row id (an answer's `question_version_id`)."""
        return self._by_pk[version_id]

    def shown_at(self, question_id: int, when: datetime) -> int:
        """The version whose words were current at `when` (for raters with no record of what
        they were shown, such as an AI model's predictions: the moment they were imported)."""
        earlier = [v for v in self.versions(question_id) if v.number == 1 or v.created_at <= when]
        return earlier[-1].number

    def key(
        self,
        question_id: int,
        *,
        policy: str = DEFAULT_KEY_POLICY,
        shown: int | None = None,
        wording: str = WordingRule.AS_SHOWN,
    ) -> ScoringKey:
        """The key of question `question_id` under `policy`: for an answer whose reader was
        shown version `shown`, the key it is scored against; with `shown` None, the key of the
        question itself (its current version under adjudicated keys)."""
        versions = self.versions(question_id)
        if policy == KeyPolicy.ORIGINAL:
            chosen = versions[0]
        elif policy == KeyPolicy.ADJUDICATED:
            chosen = versions[-1]
            if shown is not None and wording == WordingRule.AS_SHOWN:
                words = self.version(question_id, shown).wording
                chosen = next(
                    (v for v in reversed(versions) if v.wording == words),
                    self.version(question_id, shown),
                )
        else:
            raise ValueError(f"unknown key policy {policy!r}")
        return ScoringKey(
            question_id=question_id,
            version=chosen.number,
            key=chosen.correct,
            accepted=chosen.accepted_set,
            policy=str(policy),
            shown=shown,
        )


def question_key(
    question: Question,
    *,
    policy: str = DEFAULT_KEY_POLICY,
    as_of: datetime | None = None,
) -> ScoringKey:
    """The key (and accepted answers) of one question under `policy`: "the key as
    adjudicated" of an item, for a page showing one question."""
    return KeyBook.of([question], as_of=as_of).key(question.pk, policy=policy)


def answer_key(
    answer,
    *,
    policy: str = DEFAULT_KEY_POLICY,
    wording: str = WordingRule.AS_SHOWN,
    as_of: datetime | None = None,
    book: KeyBook | None = None,
) -> ScoringKey:
    """The key `answer` (annotation's Answer, or anything with `question_version`) is scored
    against under `policy`: `.version` is the version, `.correct(answer.choice)` the score.
    Pass a `book` covering the answers' questions to score many without a query each."""
    if book is None:
        shown = answer.question_version
        book = KeyBook.of([shown.question_id], as_of=as_of)
    else:
        shown = book.by_pk(answer.question_version_id)
    return book.key(shown.question_id, policy=policy, shown=shown.number, wording=wording)


def current_versions(question_ids: Iterable[int]) -> dict[int, QuestionVersion]:
    """question id -> its current version (the words readers see now), one query."""
    book = KeyBook.of(question_ids)
    return {pk: book.current(pk) for pk in book.question_ids()}


def key_words(key: ScoringKey) -> str:
    """What one answer's key rests on, in words (beside a key a page shows one reader)."""
    if key.policy == KeyPolicy.ORIGINAL:
        return "the key as imported"
    if key.version == 1:
        return "the key as imported (no correction accepted for this question)"
    return f"the key as adjudicated (version {key.version} of the question)"
