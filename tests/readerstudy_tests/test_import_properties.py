"""Property tests: the ReXVQA parser never crashes; any input is imported or clearly rejected."""

import contextlib
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from readerstudy.rexvqa import RexvqaError, iter_parse, parse_age, parse_options
from readerstudy.services.importing import rexvqa_import
from tests.profiles import examples
from tests.readerstudy_tests import rexvqa_builder as rb

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=8), children, max_size=5)
    ),
    max_leaves=15,
)
FIELDS = list(rb.record(1).keys())


@given(field=st.sampled_from(FIELDS), value=json_values)
@settings(max_examples=examples(300), suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_any_field_value_parses_or_is_rejected_by_name(tmp_path, field, value):
    path = rb.write(tmp_path, {"q1": rb.record(1)})
    record = rb.record(1)
    record[field] = value
    try:
        list(iter_parse({"q1": record}, path.parent.parent))
    except RexvqaError as exc:
        assert "q1" in str(exc) or "question id" in str(exc)


@given(data=json_values)
@settings(max_examples=examples(300))
def test_any_json_document_parses_or_is_rejected(data, tmp_path_factory):
    root = tmp_path_factory.mktemp("any")
    try:
        if isinstance(data, dict):
            list(iter_parse(data, root))
    except RexvqaError:
        pass


@given(value=json_values)
@settings(max_examples=examples(300))
def test_options_and_age_parsers_total(value):
    for parser in (lambda v: parse_options(v, "q"), lambda v: parse_age(v, "q")):
        with contextlib.suppress(RexvqaError):
            parser(value)


@pytest.mark.django_db
@given(value=json_values)
@settings(max_examples=examples(60), suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_import_is_all_or_nothing_for_any_bad_value(tmp_path, value):
    from readerstudy.models import Question

    records = {"good": rb.record(1, "s1"), "maybe-bad": rb.record(2, "s2")}
    path = rb.write(tmp_path, records)
    records["maybe-bad"]["options"] = value
    path.write_text(json.dumps(records))
    before = Question.objects.count()
    try:
        summary = rexvqa_import(path=path, dataset_name=f"d{before}")
    except RexvqaError as exc:
        assert "'maybe-bad'" in str(exc)
        assert Question.objects.count() == before
    else:
        assert summary.questions_created + summary.questions_unchanged == 2
