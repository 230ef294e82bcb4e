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

A response longer than MAX_CHARS is judged by its first and last MAX_CHARS // 2 characters:
models state their answer at the start or at the end, and the middle of a long reasoning chain
is not worth an upload worker's time. Every rule runs in time linear in what it reads.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

# Linear time by construction: a whitespace run (\s*) is only ever followed by a mandatory
# token that cannot be whitespace, so no two quantifiers compete for the same characters and a
# failed match backtracks over each run once. (The earlier `\s*(?:is|:)?\s*[:\-]?\s*\(?\s*`
# let four runs split the same spaces between them: "final answer" + 400 spaces took 29 s.)
# A letter counts when no other letter follows it directly ("B)" and "B." do, "Both" does not).
LETTER = r"(?:\(\s*)?([A-Da-d])(?![A-Za-z])"
RULES: list[tuple[str, re.Pattern[str]]] = [
    ("bare_letter", re.compile(r"^\s*(?:\(\s*)?([A-Da-d])\s*(?:\)\s*)?(?:[.:)]\s*)?$")),
    ("answer_tag", re.compile(r"<answer>\s*(?:\(\s*)?([A-Da-d])\b[^<]*</answer>", re.I)),
    ("boxed", re.compile(r"\\boxed\{\s*(?:\\text\{\s*)?\(?([A-Da-d])\b", re.I)),
    (
        "final_answer",
        re.compile(rf"final\s+answer\s*(?:(?:is|:)\s*)?(?:[:\-]\s*)?{LETTER}", re.I),
    ),
    ("answer", re.compile(rf"\banswer\s*(?:is|:)\s*(?:[:\-]\s*)?{LETTER}", re.I)),
    ("option", re.compile(rf"\b(?:option|choice)\s*{LETTER}", re.I)),
]
# The text each rule cannot match without, case-folded (re.I lets the long s, U+017F, match
# "s", and casefold() turns it into "s"), so a search that cannot succeed is skipped.
_KEYWORD = {
    "answer_tag": "<answer>",
    "boxed": "\\boxed{",
    "final_answer": "answer",
    "answer": "answer",
}
RULES_NEEDING = [(name, pattern, _KEYWORD.get(name, "")) for name, pattern in RULES]
_OPTION_PREFIX = re.compile(r"^\s*\(?[A-Da-d]\s*[.):]\s*")
MAX_CHARS = 16_000
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


def _bounded(text: str) -> str:
    if len(text) <= MAX_CHARS:
        return text
    half = MAX_CHARS // 2
    return f"{text[:half]}\n\n{text[-half:]}"


def extract_letter(response: object, options: Sequence[str] = ()) -> Extraction:
    """Apply the rules in order; `options` are the four option texts without prefixes."""
    if response is None:
        return Extraction("", "failed")
    text = _bounded(str(response))
    if not text.strip():
        return Extraction("", "failed")
    folded = text.casefold()
    for name, pattern, needs in RULES_NEEDING:
        # A rule whose keyword is not in the text cannot match: skip its search (most
        # responses match rule 1 or 5; tens of thousands of rows per upload).
        if needs and needs not in folded:
            continue
        match = pattern.search(text)
        if match:
            return Extraction(match.group(1).upper(), name)
    if options:
        wanted = _norm(_OPTION_PREFIX.sub("", text))
        for letter, option in zip("ABCD", options, strict=False):
            if wanted and wanted == _norm(option):
                return Extraction(letter, "option_text")
    matches = _LAST_STANDALONE.findall(text)
    if matches:
        return Extraction(matches[-1], "last_standalone")
    return Extraction("", "failed")
