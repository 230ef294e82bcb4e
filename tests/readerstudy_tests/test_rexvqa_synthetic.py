"""A made-up ReXVQA file imports as a released one does: its options, key, task, images (linked
to one PNG), views and patient fields arrive, and a file written twice is the same file."""

import json
from io import StringIO

import pytest
from django.core.management import call_command

from readerstudy.models import Image, Question
from readerstudy.rexvqa_synthetic import instance_path, place_image, record, write_file, write_png

pytestmark = pytest.mark.django_db


def made_up(root):
    tiny = write_png(root / "tiny.png", shade=90)
    records = {}
    for c in range(2):
        paths = [
            instance_path(
                patient=f"p{c}",
                accession=f"a{c}",
                study_uid=f"1.5.{c}",
                series_uid=f"1.6.{c}",
                instance=f"{i}.png",
            )
            for i in range(2)
        ]
        for path in paths:
            place_image(tiny, root / path)
        records[f"q{c}"] = record(
            question=f"Where is finding {c}?",
            options=["Left", "Right", "Both", "Neither"],
            correct="C",
            task="Location and Distribution Assessment",
            study_id=f"case-{c}",
            images=paths,
            views=["PA", "LATERAL"],
            PatientAge="061Y",
        )
    return write_file(root, records, name="made-up")


def test_a_made_up_file_imports_as_written(tmp_path):
    path = made_up(tmp_path)
    assert path == tmp_path / "metadata" / "made-up.json"
    out = StringIO()
    call_command("import_rexvqa", str(path), "--json", "--dataset", "Made up", stdout=out)
    summary = json.loads(out.getvalue())
    assert (summary["questions_created"], summary["cases_created"]) == (2, 2)
    question = Question.objects.get(source_id="q1")
    assert question.correct == "C"
    assert question.task == "location"
    assert [text for _, text in question.labelled_options] == ["Left", "Right", "Both", "Neither"]
    assert question.case.patient_age == 61
    images = Image.objects.filter(case=question.case).order_by("position")
    assert [(i.view_position, i.modality) for i in images] == [("PA", "CR"), ("LATERAL", "CR")]


def test_a_made_up_file_is_the_same_file_when_written_again(tmp_path):
    first = made_up(tmp_path / "one").read_bytes()
    assert made_up(tmp_path / "two").read_bytes() == first
