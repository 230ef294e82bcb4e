"""Turn a model's free-text response into an option letter, by ordered, documented rules.

The first rule that matches wins; no match is a failed extraction (the paper's "Failed
Extractions" column), kept with the raw text and scored as wrong by default.

1. bare letter:        "B", "(B)", "B.", "B)"  (the whole response)
2. answer tag:         "<answer>B</answer>"
3. boxed:              "\\boxed{B}"
4. final answer:       "final answer: B", "Final Answer is (B)"
5. answer:             "answer: B", "the answer is B"
6. option:             "option B", "choice (B)"
7. option text:        the response equals one option's text (case- and punctuation-insensitive),
                       with or without its "B." prefix
8. last standalone:    the last standalone capital A-D in the text ("... so B")
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

LETTER = r"\(?\s*([A-Da-d])\s*\)?"
RULES: list[tuple[str, re.Pattern[str]]] = [
    ("bare_letter", re.compile(rf"^\s*{LETTER}\s*[.:)]?\s*$")),
    ("answer_tag", re.compile(r"<answer>\s*\(?\s*([A-Da-d])\b[^<]*</answer>", re.I)),
    ("boxed", re.compile(r"\\boxed\{\s*(?:\\text\{)?\s*\(?([A-Da-d])\b", re.I)),
    (
        "final_answer",
        re.compile(rf"final\s+answer\s*(?:is|:)?\s*[:\-]?\s*{LETTER}(?![A-Za-z])", re.I),
    ),
    ("answer", re.compile(rf"\banswer\s*(?:is|:)\s*[:\-]?\s*{LETTER}(?![A-Za-z])", re.I)),
    ("option", re.compile(rf"\b(?:option|choice)\s*{LETTER}(?![A-Za-z])", re.I)),
]
_LAST_STANDALONE = re.compile(r"(?<![A-Za-z])([A-D])(?![A-Za-z])")
_NORMALISE = re.compile(r"[^a-z0-9]+")


@dataclass(frozen=True)
class Extraction:
    letter: str  # "" when no rule matched
    rule: str  # name of the rule that matched, or "failed"

    @property
    def failed(self) -> bool:
        return not self.letter


def _norm(text: str) -> str:
    return _NORMALISE.sub(" ", text.lower()).strip()


def extract_letter(response: object, options: Sequence[str] = ()) -> Extraction:
    """Apply the rules in order; `options` are the four option texts without prefixes."""
    if response is None:
        return Extraction("", "failed")
    text = str(response)
    if not text.strip():
        return Extraction("", "failed")
    for name, pattern in RULES:
        match = pattern.search(text)
        if match:
            return Extraction(match.group(1).upper(), name)
    if options:
        wanted = _norm(re.sub(r"^\s*\(?[A-Da-d]\s*[.):]\s*", "", text))
        for letter, option in zip("ABCD", options, strict=False):
            if wanted and wanted == _norm(option):
                return Extraction(letter, "option_text")
    matches = _LAST_STANDALONE.findall(text)
    if matches:
        return Extraction(matches[-1], "last_standalone")
    return Extraction("", "failed")
