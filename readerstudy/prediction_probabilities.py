"""A model's probabilities in a predictions file: the `probability` of its chosen answer, or
one per option (`probability_A` ... `probability_D`), each a number from 0 to 1.

Read by the prediction import (every problem of a file is said at once, with its rows: a cell
that is not such a number, per-option probabilities that do not sum to 1, a chosen answer's
probability that is not its option's). The analysis reads them as the model's calibration
(the chosen answer's probability of being right) and, on a binary question, its ROC rating
(its probability that the finding is present: the present option's probability; with the
chosen answer's only, that probability after 'present' and 1 minus it after 'absent').
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

LETTERS = ("A", "B", "C", "D")
CHOSEN = "probability"
PER_OPTION = {letter: f"probability_{letter}" for letter in LETTERS}
COLUMNS = (CHOSEN, *PER_OPTION.values())
JSON_KEYS = (CHOSEN, "probabilities")  # a JSON record's: a number, or {"A": p, ...}
SUM_TOLERANCE = 0.01  # per-option probabilities must sum to 1 within this (rounding)


@dataclass(frozen=True)
class Probabilities:
    """What a row says of the model's probabilities (empty: nothing)."""

    chosen: float | None = None
    options: dict[str, float] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return self.chosen is not None or bool(self.options)

    def of_answer(self, letter: str) -> float | None:
        """The probability that the answer `letter` is right (None: not given)."""
        if self.options:
            return self.options.get(letter)
        return self.chosen

    def present(self, letter: str, present_option: str) -> float | None:
        """On a binary question, the probability that the finding is present."""
        if self.options:
            return self.options.get(present_option)
        if self.chosen is None or not letter:
            return None
        return self.chosen if letter == present_option else 1.0 - self.chosen


def _number(value) -> float | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    try:
        number = float(str(value).strip())
    except ValueError as error:
        raise ValueError(f"{value!r} is not a number") from error
    if not math.isfinite(number) or not 0.0 <= number <= 1.0:
        raise ValueError(f"{value!r} is not a probability from 0 to 1")
    return number


def unread_names(names, *, known=COLUMNS) -> list[str]:
    """The names among `names` (a CSV header's columns, a JSON record's keys) that look like a
    probability but are not one of `known`, or repeat one: read as "no probabilities", the
    model's calibration and ROC would be missing from the analysis without a word."""
    seen: set[str] = set()
    unread = []
    for name in names:
        if name.strip().lower().startswith(CHOSEN) and (name not in known or name in seen):
            unread.append(name)
        seen.add(name)
    return unread


def parse(chosen, options: dict) -> Probabilities:
    """The probabilities of one row from its cells (`options`: letter -> cell); ValueError
    with the reason in words when they are not probabilities."""
    if strange := [str(letter) for letter in options if letter not in LETTERS]:
        raise ValueError(f"no option {', '.join(strange)}: the options are A-D")
    given = {letter: p for letter, cell in options.items() if (p := _number(cell)) is not None}
    if given and len(given) != len(LETTERS):
        missing = ", ".join(letter for letter in LETTERS if letter not in given)
        raise ValueError(f"per-option probabilities need all four options (missing {missing})")
    if given and abs(sum(given.values()) - 1.0) > SUM_TOLERANCE:
        raise ValueError(f"per-option probabilities sum to {sum(given.values()):.3g}, not 1")
    return Probabilities(_number(chosen), given)


def check_chosen(probabilities: Probabilities, letter: str) -> str:
    """Why the chosen answer's probability contradicts the per-option ones ("" if it does not)."""
    if probabilities.chosen is None or not probabilities.options or not letter:
        return ""
    own = probabilities.options.get(letter)
    if own is not None and abs(own - probabilities.chosen) > 1e-9:
        return f"probability {probabilities.chosen:g} is not probability_{letter} {own:g}"
    return ""
