"""import_rexvqa: what it accepts, what it rejects (writing nothing), and re-import."""

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from readerstudy.models import Case, Dataset, Image, Question, Task
from tests.readerstudy_tests import rexvqa_builder as rb

pytestmark = pytest.mark.django_db


def run(path, *args):
    out = StringIO()
    call_command("import_rexvqa", str(path), "--json", *args, stdout=out)
    return json.loads(out.getvalue())


def assert_nothing_written():
    assert Question.objects.count() == 0
    assert Case.objects.count() == 0
    assert Image.objects.count() == 0
    assert Dataset.objects.count() == 0


def test_imports_questions_cases_and_images(tmp_path):
    records = {
        "q1": rb.record(1, "s1"),
        "q2": rb.record(2, "s1", task_name="Differential Diagnosis"),
        "q3": rb.record(3, "s2", task_name="Negation Assessment"),
    }
    path = rb.write(tmp_path, records)
    summary = run(path, "--dataset", "ReXVQA test")
    assert summary["questions_created"] == 3
    assert summary["cases_created"] == 2
    assert summary["images_created"] == 2
    assert summary["per_task"] == {
        "Differential Diagnosis": 1,
        "Negation Assessment": 1,
        "Presence Assessment": 1,
    }
    q = Question.objects.get(source_id="q2")
    assert q.options == ["Yes", "No", "Maybe", "Not assessable"]
    assert q.correct == "A" and q.task == Task.DIFFERENTIAL and q.klass == "detection"
    case = Case.objects.get(study_id="s1")
    assert case.patient_age == 58 and case.patient_sex == "F"
    assert case.findings == "SENTINEL-FINDINGS"
    image = case.images.get()
    assert image.view_position == "PA" and image.modality == "CR"
    assert image.source_path == str((tmp_path / rb.image_rel("s1")).resolve())


def test_reimport_creates_nothing_new(tmp_path):
    path = rb.write(tmp_path, {"q1": rb.record(1), "q2": rb.record(2, "s2")})
    run(path, "--dataset", "d")
    again = run(path, "--dataset", "d")
    assert again["questions_created"] == 0 and again["questions_unchanged"] == 2
    assert again["cases_created"] == 0 and again["images_created"] == 0
    assert Question.objects.count() == 2 and Image.objects.count() == 2


def test_dataset_defaults_to_file_stem_and_images_root_to_parent(tmp_path):
    path = rb.write(tmp_path, {"q1": rb.record(1)})
    run(path)
    assert Dataset.objects.get().name == "test"


def test_explicit_images_root(tmp_path):
    path = rb.write(tmp_path / "meta", {"q1": rb.record(1)}, images=False)
    images_root = tmp_path / "elsewhere"
    rb.write(images_root, {"q1": rb.record(1)})  # puts the images under images_root
    run(path, "--images-root", str(images_root))
    assert Image.objects.get().source_path.startswith(str(images_root.resolve()))


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        ({"options": "['A) Yes', 'B) No', 'C) Maybe', 'D) Unsure']"}, ["Yes", "No", "Maybe"]),
        ({"options": '["A. Yes", "B. No", "C. Maybe", "D. Unsure"]'}, ["Yes", "No", "Maybe"]),
        ({"PatientAge": "58Y"}, None),
        ({"PatientAge": "58"}, None),
        ({"PatientAge": 58}, None),
        ({"ImagePath": f"['../{rb.image_rel('s1')}']"}, None),
        ({"ImageViewPosition": "['PA']", "correct_answer": "a"}, None),
    ],
)
def test_accepts_variants_of_the_real_release(tmp_path, overrides, expected):
    path = rb.write(tmp_path, {"q1": rb.record(1)})
    path.write_text(json.dumps({"q1": rb.record(1, **overrides)}))
    run(path)
    q = Question.objects.get()
    if expected:
        assert q.options[:3] == expected
    assert q.case.patient_age == 58
    assert q.case.images.get().view_position == "PA"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("this is { not json", "not valid JSON"),
        ("[1, 2, 3]", "top level must be an object"),
        ("{}", "holds no questions"),
    ],
)
def test_rejects_bad_files(tmp_path, content, message):
    path = tmp_path / "metadata" / "bad.json"
    path.parent.mkdir()
    path.write_text(content)
    with pytest.raises(CommandError, match=message):
        run(path)
    assert_nothing_written()


BAD_RECORDS = [
    ({"question": ""}, "question"),
    ({"question": None}, "question"),
    ({"options": ["A. Yes", "B. No", "C. Maybe"]}, "options"),
    ({"options": ["A. Yes", "B. No", "C. Maybe", "D. x", "E. y"]}, "options"),
    ({"options": ["A. Yes", "C. No", "B. Maybe", "D. x"]}, "options"),
    ({"options": ["A. Yes", "B. ", "C. Maybe", "D. x"]}, "options"),
    ({"correct_answer": "E"}, "correct_answer"),
    ({"correct_answer": ""}, "correct_answer"),
    ({"correct_answer": "AB"}, "correct_answer"),
    ({"task_name": "Counting Assessment"}, "task_name"),
    ({"study_id": ""}, "study_id"),
    ({"ImagePath": []}, "ImagePath"),
    ({"ImagePath": ["../deid_png/missing/file.png"]}, "ImagePath"),
    ({"ImagePath": ["../../../etc/passwd"]}, "ImagePath"),
    ({"ImagePath": ["/etc/passwd"]}, "ImagePath"),
    ({"ImagePath": ["../deid_png/../../outside.png"]}, "ImagePath"),
    ({"ImagePath": ["../deid_png/a\x00b.png"]}, "ImagePath"),
    ({"question": "Is there\x00 an effusion?"}, "question"),  # PostgreSQL refused it
    ({"Findings": "Clear lungs \ud800"}, "Findings"),  # not UTF-8: no database stores it
    ({"options": ["A. Yes", "B. No\x00", "C. Maybe", "D. x"]}, "options"),
    ({"PatientAge": "old"}, "PatientAge"),
]


@pytest.mark.parametrize(("overrides", "field"), BAD_RECORDS)
def test_rejects_bad_field_naming_question_and_field(tmp_path, overrides, field):
    # The bad question comes after a good one: the good one must not be written either.
    records = {"good-1": rb.record(1, "s1"), "bad-2": rb.record(2, "s2")}
    path = rb.write(tmp_path, records)
    records["bad-2"].update(overrides)
    path.write_text(json.dumps(records))
    with pytest.raises(CommandError) as info:
        run(path)
    assert "'bad-2'" in str(info.value)
    assert f"'{field}'" in str(info.value)
    assert "nothing was written" in str(info.value)
    assert_nothing_written()


def test_rejects_file_that_is_not_an_image_by_content(tmp_path):
    path = rb.write(tmp_path, {"q1": rb.record(1)}, source="not_an_image.png")
    with pytest.raises(CommandError, match="neither a PNG nor a DICOM"):
        run(path)
    assert_nothing_written()


def test_rejects_changed_question_on_reimport_and_keeps_the_original(tmp_path):
    path = rb.write(tmp_path, {"q1": rb.record(1), "q2": rb.record(2, "s2")})
    run(path, "--dataset", "d")
    changed = {"q1": rb.record(1), "q2": rb.record(2, "s2", correct_answer="C"), "q3": rb.record(3)}
    path.write_text(json.dumps(changed))
    with pytest.raises(CommandError, match=r"'q2'.*'correct'"):
        run(path, "--dataset", "d")
    assert Question.objects.get(source_id="q2").correct == "A"
    assert not Question.objects.filter(source_id="q3").exists()


def test_accepts_dicom_sources(tmp_path):
    from pydicom.data import get_testdata_file

    rel = rb.image_rel("s1", "img.dcm")
    path = rb.write(tmp_path, {"q1": rb.record(1, ImagePath=[f"../{rel}"])}, images=False)
    target = tmp_path / rel
    target.parent.mkdir(parents=True)
    target.write_bytes(Path(get_testdata_file("RG1_UNCR.dcm")).read_bytes())
    run(path)
    assert Image.objects.get().source_path.endswith("img.dcm")


def test_human_readable_output(tmp_path):
    path = rb.write(tmp_path, {"q1": rb.record(1)})
    out = StringIO()
    call_command("import_rexvqa", str(path), stdout=out)
    assert "questions 1 new / 0 unchanged" in out.getvalue()
    assert "Presence Assessment: 1" in out.getvalue()


@pytest.mark.parametrize("qid", ["q\x00id", "q\ud800"])
def test_rejects_a_question_id_no_database_stores(tmp_path, qid):
    records = {"good-1": rb.record(1, "s1"), qid: rb.record(2, "s2")}
    path = rb.write(tmp_path, {"good-1": records["good-1"]})
    path.write_text(json.dumps(records))
    with pytest.raises(CommandError) as info:
        run(path)
    assert "question id" in str(info.value) and "nothing was written" in str(info.value)
    assert_nothing_written()
