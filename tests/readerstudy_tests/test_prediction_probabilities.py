"""A predictions file's probabilities: the chosen answer's or one per option, each 0-1; what
the analysis reads of them (calibration; a binary question's rating); refusals in words."""

import re

import pytest

from readerstudy.prediction_probabilities import Probabilities, check_chosen, parse


def test_per_option_probabilities_give_the_answers_and_the_present_options():
    p = parse("", {"A": "0.7", "B": "0.2", "C": "0.05", "D": "0.05"})
    assert p.of_answer("A") == 0.7 and p.of_answer("B") == 0.2
    assert p.present("B", present_option="A") == 0.7  # whatever it answered


def test_the_chosen_answers_probability_alone():
    p = parse("0.8", {})
    assert p.of_answer("C") == 0.8
    assert p.present("A", present_option="A") == 0.8
    assert p.present("B", present_option="A") == pytest.approx(0.2)
    assert not parse("", {}) and parse("0", {}).chosen == 0.0


@pytest.mark.parametrize(
    ("chosen", "options", "words"),
    [
        ("1.5", {}, "not a probability from 0 to 1"),
        ("80%", {}, "is not a number"),
        ("", {"A": "0.5", "B": "0.5"}, "need all four options (missing C, D)"),
        ("", {"A": "0.5", "B": "0.5", "C": "0.5", "D": "0"}, "sum to 1.5, not 1"),
        ("nan", {}, "not a probability"),
    ],
)
def test_what_is_not_a_probability_is_refused_in_words(chosen, options, words):
    with pytest.raises(ValueError, match=re.escape(words)):
        parse(chosen, options)


def test_a_chosen_probability_must_be_its_options():
    p = Probabilities(0.6, {"A": 0.7, "B": 0.1, "C": 0.1, "D": 0.1})
    assert check_chosen(p, "A") == "probability 0.6 is not probability_A 0.7"
    assert check_chosen(Probabilities(0.7, p.options), "A") == ""
