"""A predictions file whose probabilities are under a name the import does not read (a column
`Probability` or `probability_E`, a JSON option `a` or `E`, a column given twice) is refused
in words naming it: read as "no probabilities", the model's calibration and ROC would go
missing from the analysis without a word, or take one of two columns at random."""

import json

import pytest

from readerstudy.predictions.files import PredictionImportError
from readerstudy.predictions.models import AIModel, Prediction
from readerstudy.predictions.services import predictions_import
from tests.factories import DatasetFactory, QuestionFactory

pytestmark = pytest.mark.django_db

OPTIONS = "probability_A,probability_B,probability_C,probability_D"


@pytest.fixture
def dataset():
    ds = DatasetFactory(name="bank")
    for i in range(2):
        QuestionFactory(dataset=ds, source_id=f"q{i}")
    return ds


def refusal(dataset, content: str) -> str:
    with pytest.raises(PredictionImportError) as refused:
        predictions_import(dataset=dataset, model_name="m", content=content.encode())
    assert not Prediction.objects.exists() and not AIModel.objects.exists()
    return str(refused.value)


@pytest.mark.parametrize(
    ("header", "cells", "named"),
    [
        ("question_id,prediction,Probability", "0.7", "'Probability'"),
        ("question_id,prediction,probability_a", "0.7", "'probability_a'"),
        (
            f"question_id,prediction,{OPTIONS},probability_E",
            "0.7,0.1,0.1,0.1,0.2",
            "'probability_E'",
        ),
        ("question_id,prediction,probability,probability", "0.7,0.2", "'probability'"),
    ],
)
def test_a_probability_column_the_import_does_not_read_is_refused_by_name(
    dataset, header, cells, named
):
    words = refusal(dataset, f"{header}\nq0,A,{cells}\nq1,B,{cells}\n")
    assert named in words and "column" in words


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"a": 0.7, "b": 0.1, "c": 0.1, "d": 0.1}, "a, b, c, d"),
        ({"A": 0.5, "B": 0.5, "C": 0, "D": 0, "E": 0.2}, "E"),
    ],
)
def test_a_json_probability_for_an_option_that_does_not_exist_is_refused(dataset, options, named):
    records = {
        "q0": {"model_prediction": "A", "probabilities": options},
        "q1": {"model_prediction": "B", "probability": 0.6},
    }
    words = refusal(dataset, json.dumps(records))
    assert f"q0 (record 1, no option {named}: the options are A-D)" in words


def test_a_json_record_with_a_probability_key_the_import_does_not_read_is_refused(dataset):
    records = {
        "q0": {"model_prediction": "A", "probability_A": 0.9},
        "q1": {"model_prediction": "B", "probability": 0.6},
    }
    words = refusal(dataset, json.dumps(records))
    assert "q0 (record 1, key 'probability_A' is not read" in words
