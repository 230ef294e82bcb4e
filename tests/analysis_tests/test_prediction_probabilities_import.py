"""A predictions file's probabilities through the import: the chosen answer's or one per
option, stored with the prediction; what is not a probability, or contradicts itself, refuses
the file in words naming its rows; a file without them imports as before."""

import json

import pytest

from readerstudy.predictions.files import PredictionImportError
from readerstudy.predictions.models import Prediction
from readerstudy.predictions.services import predictions_import
from tests.factories import DatasetFactory, QuestionFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def dataset():
    ds = DatasetFactory(name="bank")
    for i in range(3):
        QuestionFactory(dataset=ds, source_id=f"q{i}")
    return ds


def upload(dataset, content: str):
    return predictions_import(
        dataset=dataset, model_name="m", content=content.encode(), replace=True
    )


def stored() -> dict:
    return {
        p.question.source_id: (p.letter, p.probability, p.option_probabilities)
        for p in Prediction.objects.select_related("question")
    }


def test_per_option_probabilities_are_stored_with_the_answers(dataset):
    upload(
        dataset,
        "question_id,prediction,probability_A,probability_B,probability_C,probability_D\n"
        "q0,B,0.1,0.7,0.1,0.1\nq1,A,0.55,0.15,0.15,0.15\nq2,unclear,0.25,0.25,0.25,0.25\n",
    )
    rows = stored()
    assert rows["q0"] == ("B", 0.7, {"A": 0.1, "B": 0.7, "C": 0.1, "D": 0.1})
    assert rows["q1"][1] == 0.55
    assert rows["q2"][:2] == ("", None)  # no letter found: no answer to be right


def test_the_chosen_answers_probability_and_json_records(dataset):
    upload(dataset, "question_id,prediction,probability\nq0,B,0.9\nq1,C,\nq2,A,0.6\n")
    assert [stored()[q][1] for q in ("q0", "q1", "q2")] == [0.9, None, 0.6]
    records = {
        "q0": {"model_prediction": "A", "probabilities": {"A": 0.6, "B": 0.2, "C": 0.1, "D": 0.1}},
        "q1": {"model_prediction": "D", "probability": "0.35"},
    }
    upload(dataset, json.dumps(records))
    assert stored()["q0"][1] == 0.6 and stored()["q1"][1] == 0.35


def test_what_is_not_a_probability_refuses_the_file_naming_its_rows(dataset):
    with pytest.raises(PredictionImportError) as refused:
        upload(dataset, "question_id,prediction,probability\nq0,B,1.2\nq1,A,high\nq2,A,0.5\n")
    words = str(refused.value)
    assert "probabilities that are not probabilities" in words
    assert "q0 (line 2, '1.2' is not a probability from 0 to 1)" in words
    assert "q1 (line 3, 'high' is not a number)" in words
    assert not Prediction.objects.exists()


def test_a_chosen_probability_that_is_not_its_options_refuses_the_file(dataset):
    content = (
        "question_id,prediction,probability,probability_A,probability_B,probability_C,"
        "probability_D\nq0,B,0.9,0.1,0.7,0.1,0.1\n"
    )
    with pytest.raises(PredictionImportError, match=r"probability 0\.9 is not probability_B 0\.7"):
        upload(dataset, content)


def test_a_file_without_probabilities_imports_as_before(dataset):
    upload(dataset, "question_id,prediction\nq0,B\n")
    assert stored()["q0"] == ("B", None, {})
