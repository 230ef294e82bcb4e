"""Answer extraction: each documented rule, their order, and failures."""

import time

import pytest

from readerstudy.predictions.extraction import extract_letter

OPTIONS = ["Pleural effusion", "Pneumothorax", "Cardiomegaly", "No acute finding"]


@pytest.mark.parametrize(
    ("text", "letter", "rule"),
    [
        ("B", "B", "bare_letter"),
        (" (c) ", "C", "bare_letter"),
        ("D.", "D", "bare_letter"),
        ("I think <answer>C</answer> is right", "C", "answer_tag"),
        ("so the result is \\boxed{A}", "A", "boxed"),
        ("Reasoning... Final answer: (D) No acute finding", "D", "final_answer"),
        ("The final answer is B", "B", "final_answer"),
        ("Answer: C", "C", "answer"),
        ("ANSWER IS B", "B", "answer"),
        ("<ANSWER>d</ANSWER>", "D", "answer_tag"),
        ("\\BOXED{c}", "C", "boxed"),
        # The long s (U+017F) matches "s" case-insensitively: a rule skipped when its keyword
        # is absent must see it too.
        ("the an\u017fwer is b", "B", "answer"),
        ("the answer is (a).", "A", "answer"),
        ("I would pick option B here", "B", "option"),
        ("choice (d)", "D", "option"),
        ("pneumothorax", "B", "option_text"),
        ("C. Cardiomegaly", "C", "option_text"),
        ("Considering the film, B seems more likely than D, so B", "B", "last_standalone"),
    ],
)
def test_rules(text, letter, rule):
    result = extract_letter(text, OPTIONS)
    assert (result.letter, result.rule) == (letter, rule)


def test_rules_apply_in_order():
    # An answer tag wins over a later "option" mention and the last standalone letter.
    result = extract_letter("<answer>A</answer> not option C, not D", OPTIONS)
    assert (result.letter, result.rule) == ("A", "answer_tag")


@pytest.mark.parametrize(
    "text",
    [
        "",
        None,
        "   ",
        "I cannot determine this from the image.",
        "Effusion maybe",
        "Ambiguous; E or F",
    ],
)
def test_failed_extraction(text):
    result = extract_letter(text, OPTIONS)
    assert result.failed and result.letter == "" and result.rule == "failed"


def test_lowercase_words_are_not_letters():
    assert extract_letter("a big heart, could be anything", OPTIONS).failed


@pytest.mark.parametrize(
    ("prefix", "tail"),
    [
        ("final answer", "x"),
        ("Final Answer is", "x"),
        ("answer is", "x"),
        ("answer:", "x"),
        ("option", "x"),
        ("<answer>", "x"),
        ("\\boxed{", "x"),
        ("(", "x"),
    ],
)
def test_whitespace_runs_do_not_backtrack_catastrophically(prefix, tail):
    """The red-team upload: "final answer" + 400 spaces + "x" took 29 s and held a worker.

    A bound a thousand times above the linear cost, in CPU time, so a busy machine cannot fail it.
    """
    for spaces in (400, 5_000):
        text = prefix + " " * spaces + tail
        started = time.process_time()
        result = extract_letter(text, OPTIONS)
        assert time.process_time() - started < 1.0, (prefix, spaces)
        assert result.failed


def test_long_responses_are_judged_by_their_start_and_end():
    reasoning = "Consider the lungs and the heart in turn. " * 2_000  # ~84 KB
    assert extract_letter(reasoning + "Final answer: C", OPTIONS).letter == "C"
    assert extract_letter("Answer: D. " + reasoning, OPTIONS).letter == "D"
