"""The key of a question as the learning pages show it (the debrief, practice feedback,
"my misses", progress): one function, so that when keys are versioned (issue 35: adjudicated
corrections) they all change in one place.

Until versioned keys exist the key is the one imported with the question, and every page says
so through `KEY_VERSION`. Issue 35 (branch keys35, not yet merged) brings
`readerstudy.keys.question_key(question) -> ScoringKey` (`.key`, `.accepted`, `.correct(choice)`,
several valid answers): at the merge these two functions ask it, and KEY_VERSION says the key
version the pages rest on.
"""

from __future__ import annotations

from readerstudy.models import Question

# What the key rests on, said beside every number and key the learning pages show.
KEY_VERSION = "keys as imported (no adjudicated corrections)"


def question_key(question: Question) -> str:
    """The letter that is right for `question` now (canonical A-D)."""
    return question.correct


def is_right(question: Question, choice: str) -> bool:
    """Whether `choice` (canonical letter) is right for `question` under `question_key`."""
    return bool(choice) and choice == question_key(question)
