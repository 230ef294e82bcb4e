"""import_predictions: CSV and JSON, extraction, unknown ids and duplicates (atomic)."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from readerstudy.predictions.models import AIModel, Prediction
from tests.factories import DatasetFactory, QuestionFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def dataset():
    ds = DatasetFactory(name="bank")
    for i in range(4):
        QuestionFactory(dataset=ds, source_id=f"q{i}", option_b="Pneumothorax")
    return ds


def run(tmp_path, content, *extra, name="preds.csv", model="gpt"):
    path = tmp_path / name
    path.write_text(content)
    out = StringIO()
    call_command(
        "import_predictions",
        str(path),
        "--dataset",
        "bank",
        "--model",
        model,
        "--json",
        *extra,
        stdout=out,
    )
    return json.loads(out.getvalue())


def test_csv_with_letters_and_free_text(tmp_path, dataset):
    csv = (
        "question_id,prediction,raw_response\n"
        "q0,A,\nq1,<answer>B</answer>,full text 1\nq2,pneumothorax,\nq3,no idea,no idea\n"
    )
    summary = run(tmp_path, csv)
    assert summary["predictions"] == 4 and summary["failed_extractions"] == 1
    letters = dict(Prediction.objects.values_list("question__source_id", "letter"))
    assert letters == {"q0": "A", "q1": "B", "q2": "B", "q3": ""}
    assert Prediction.objects.get(question__source_id="q1").raw_response == "full text 1"
    assert summary["rules"]["answer_tag"] == 1


def test_rexvqa_inference_json(tmp_path, dataset):
    data = {
        "q0": {"question": "...", "model_prediction": "C"},
        "q1": {"question": "...", "model_response": "Final answer: D"},
        "q2": {"model_response": "unclear"},
    }
    summary = run(tmp_path, json.dumps(data), name="preds.json")
    assert summary["predictions"] == 3 and summary["failed_extractions"] == 1
    assert Prediction.objects.get(question__source_id="q1").letter == "D"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("question_id,prediction\nq0,A\nq9,B\nq8,C\n", "2 question id.*not in dataset.*q9"),
        ("question_id,prediction\nq0,A\nq1,B\nq0,C\n", "duplicate rows.*q0"),
        ("id,answer\nq0,A\n", "needs a header"),
        ("", "empty"),
        ('{"q0": "A"}', "expected an object"),
        ('{"q0": {"other": 1}}', "model_prediction"),
        ("{ not json", "not valid JSON"),
    ],
)
def test_errors_write_nothing(tmp_path, dataset, content, message):
    with pytest.raises(CommandError, match=message):
        run(tmp_path, content)
    assert not AIModel.objects.exists() and not Prediction.objects.exists()


def test_reimport_needs_replace(tmp_path, dataset):
    run(tmp_path, "question_id,prediction\nq0,A\nq1,B\n")
    with pytest.raises(CommandError, match="already has predictions"):
        run(tmp_path, "question_id,prediction\nq0,C\n")
    assert Prediction.objects.get(question__source_id="q0").letter == "A"
    summary = run(tmp_path, "question_id,prediction\nq0,C\n", "--replace")
    assert summary["replaced"] == 2
    assert list(Prediction.objects.values_list("letter", flat=True)) == ["C"]
