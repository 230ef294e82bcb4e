"""Property tests: answer extraction never crashes, only ever returns A-D or a failure, keeps
the documented rules' meaning and reads any response in linear time."""

import re
import time

from hypothesis import given, settings
from hypothesis import strategies as st

from readerstudy.predictions.extraction import extract_letter
from tests.profiles import examples


@given(
    text=st.one_of(st.none(), st.text(), st.integers(), st.floats(), st.binary()),
    options=st.lists(st.text(max_size=30), max_size=4),
)
@settings(max_examples=examples(1000))
def test_extraction_is_total(text, options):
    result = extract_letter(text, options)
    assert result.letter in {"", "A", "B", "C", "D"}
    assert result.failed == (result.letter == "")


@given(letter=st.sampled_from("ABCD"), prefix=st.text(alphabet=" \n\t", max_size=3))
def test_tagged_answers_are_found_whatever_the_surrounding_text(letter, prefix):
    assert extract_letter(f"{prefix}<answer>{letter}</answer>").letter == letter
    assert extract_letter(f"blah blah. Final answer: {letter}").letter == letter


# The pieces the rules are made of, and the runs that made the first rules backtrack.
FRAGMENTS = [
    "final",
    "Final Answer",
    "answer",
    "ANSWER",
    "is",
    ":",
    "-",
    "(",
    ")",
    ".",
    "A",
    "b",
    "C",
    "d",
    "x",
    "Both",
    "option",
    "choice",
    "<answer>",
    "</answer>",
    "\\boxed{",
    "\\text{",
    "}",
    "<",
]
KEYWORDS = ["final answer", "Final  Answer", "answer", "option", "choice", "<answer>"]
KEYWORDS += ["\\boxed{", "\\boxed{\\text{", ""]
WHITESPACE = st.sampled_from([" ", "  ", "\n", "\t", " \n "])


def _responses(run_length):
    runs = st.builds(lambda ch, n: ch * n, st.sampled_from(" \n\t"), run_length)
    piece = st.one_of(st.sampled_from(FRAGMENTS), WHITESPACE, runs, st.text(max_size=5))
    soup = st.lists(piece, max_size=40).map("".join)
    # Near-misses and hits of one rule: a keyword, then connectives, a letter and what follows.
    shaped = st.builds(
        lambda before, keyword, middle, letter, after: before + keyword + middle + letter + after,
        soup,
        st.sampled_from(KEYWORDS),
        st.lists(
            st.one_of(st.sampled_from(["is", ":", "-", "(", "Is"]), WHITESPACE, runs), max_size=6
        ).map("".join),
        st.sampled_from(["A", "b", "C", "d", "E", "x", ""]),
        st.lists(
            st.one_of(st.sampled_from([")", ".", "</answer>", "oth", "x", "}"]), WHITESPACE),
            max_size=4,
        ).map("".join),
    )
    return st.one_of(soup, shaped)


# The rules as first written (superlinear on whitespace, fine on short runs): the reference for
# what each rule means.
_L = r"\(?\s*([A-Da-d])\s*\)?"
REFERENCE = [
    ("bare_letter", re.compile(rf"^\s*{_L}\s*[.:)]?\s*$")),
    ("answer_tag", re.compile(r"<answer>\s*\(?\s*([A-Da-d])\b[^<]*</answer>", re.I)),
    ("boxed", re.compile(r"\\boxed\{\s*(?:\\text\{)?\s*\(?([A-Da-d])\b", re.I)),
    ("final_answer", re.compile(rf"final\s+answer\s*(?:is|:)?\s*[:\-]?\s*{_L}(?![A-Za-z])", re.I)),
    ("answer", re.compile(rf"\banswer\s*(?:is|:)\s*[:\-]?\s*{_L}(?![A-Za-z])", re.I)),
    ("option", re.compile(rf"\b(?:option|choice)\s*{_L}(?![A-Za-z])", re.I)),
]


@given(text=_responses(st.integers(0, 6)))
@settings(max_examples=examples(2000))
def test_the_linear_rules_mean_what_the_first_rules_meant(text):
    expected = next(
        ((m.group(1).upper(), name) for name, p in REFERENCE if (m := p.search(text))), None
    )
    result = extract_letter(text)
    if expected is not None:
        assert (result.letter, result.rule) == expected
    else:
        assert result.rule in {"last_standalone", "failed"}


@given(text=_responses(st.integers(0, 20_000)), run=st.integers(0, 100_000))
@settings(max_examples=examples(200))
def test_any_response_up_to_100_kb_is_read_in_under_50_ms(text, run):
    """CPU time of this process (a busy machine does not count against it), the best of three;
    the bounded text costs a few milliseconds, and the first rules took seconds to hours. Each
    drawn response is repeated to 100 KB with one long whitespace run spliced in, the shapes
    that made the first rules backtrack."""
    text = text or " "
    text = (text * (100_000 // len(text) + 1))[:100_000]
    at = len(text) // 2
    text = (text[:at] + " " * run + text[at:])[:100_000]
    best = min(_cpu_seconds(text) for _ in range(3))
    assert best < 0.050, (text[:80], best)


def _cpu_seconds(text: str) -> float:
    started = time.process_time()
    extract_letter(text, ["Pleural effusion", "Pneumothorax", "Cardiomegaly", "No finding"])
    return time.process_time() - started
