"""Property tests: answer extraction never crashes and only ever returns A-D or a failure."""

from hypothesis import given, settings
from hypothesis import strategies as st

from analysis.stats.extraction import extract_letter


@given(
    text=st.one_of(st.none(), st.text(), st.integers(), st.floats(), st.binary()),
    options=st.lists(st.text(max_size=30), max_size=4),
)
@settings(max_examples=1000, deadline=None)
def test_extraction_is_total(text, options):
    result = extract_letter(text, options)
    assert result.letter in {"", "A", "B", "C", "D"}
    assert result.failed == (result.letter == "")


@given(letter=st.sampled_from("ABCD"), prefix=st.text(alphabet=" \n\t", max_size=3))
def test_tagged_answers_are_found_whatever_the_surrounding_text(letter, prefix):
    assert extract_letter(f"{prefix}<answer>{letter}</answer>").letter == letter
    assert extract_letter(f"blah blah. Final answer: {letter}").letter == letter
