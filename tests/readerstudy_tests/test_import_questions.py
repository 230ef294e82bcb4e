"""import_questions: spreadsheet question banks (.csv, .xlsx) through the ReXVQA validation core."""

from __future__ import annotations

import csv
import io
import json
import shutil
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from openpyxl import Workbook

from readerstudy.models import Case, Dataset, Image, Question, Task
from readerstudy.question_bank import read_question_bank
from tests.readerstudy_tests import rexvqa_builder as rb
from tests.readerstudy_tests.conftest import radiograph, uids

pytestmark = pytest.mark.django_db
DOCS = Path(__file__).resolve().parents[2] / "docs"
TEMPLATE_CSV = DOCS / "question_bank_template.csv"
TEMPLATE_XLSX = DOCS / "question_bank_template.xlsx"
HEADER = ["id", "case_id", "question", "option_a", "option_b", "option_c", "option_d"]
HEADER += ["correct", "task", "category", "explanation", "image_paths", "view_positions", "age"]
HEADER += ["sex", "indication"]


def row(qid: str = "q1", case: str = "c1", **cells: str) -> dict[str, str]:
    base = {
        "id": qid,
        "case_id": case,
        "question": f"Is there an effusion ({qid})?",
        "option_a": "Yes",
        "option_b": "No",
        "option_c": "Maybe",
        "option_d": "Not assessable",
        "correct": "B",
        "task": "Presence Assessment",
        "category": "Pleura",
        "explanation": "SENTINEL-EXPLANATION",
        "image_paths": f"images/{case}/pa.png",
        "view_positions": "PA",
        "age": "58",
        "sex": "F",
        "indication": "Cough.",
    }
    base.update(cells)
    return base


def place_images(root: Path, rows: list[dict[str, str]]) -> None:
    for r in rows:
        for rel in filter(None, r.get("image_paths", "").split("|")):
            target = root / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(rb.RESOURCES / "tiny_8bit.png", target)


def write_csv(root: Path, rows: list[dict[str, str]], *, images: bool = True, **fmt) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    path = root / "bank.csv"
    with open(path, "w", newline="", encoding=fmt.pop("encoding", "utf-8")) as out:
        writer = csv.DictWriter(out, fieldnames=list(rows[0]), **fmt)
        writer.writeheader()
        writer.writerows(rows)
    if images:
        place_images(root, rows)
    return path


def write_xlsx(root: Path, rows: list[list], *, images: list[dict] | None = None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    workbook = Workbook()
    for values in rows:
        workbook.active.append(values)
    path = root / "bank.xlsx"
    workbook.save(path)
    if images:
        place_images(root, images)
    return path


def run(path: Path, *args: str) -> dict:
    out = StringIO()
    call_command("import_questions", str(path), "--dataset", "bank", "--json", *args, stdout=out)
    return json.loads(out.getvalue())


def assert_nothing_written() -> None:
    assert Dataset.objects.count() == 0 and Case.objects.count() == 0
    assert Question.objects.count() == 0 and Image.objects.count() == 0


def test_csv_bank_is_imported(tmp_path):
    rows = [
        row("q1", "c1"),
        row("q2", "c1", correct="a", task="negation"),
        row("q3", "c2", image_paths="images/c2/pa.png|images/c2/lat.png", view_positions="PA|LL"),
    ]
    summary = run(write_csv(tmp_path, rows))
    assert (summary["questions_created"], summary["cases_created"]) == (3, 2)
    assert summary["images_created"] == 3
    q2 = Question.objects.get(source_id="q2")
    assert q2.correct == "A" and q2.task == Task.NEGATION
    assert q2.options == ["Yes", "No", "Maybe", "Not assessable"]
    assert q2.explanation == "SENTINEL-EXPLANATION"
    c2 = Case.objects.get(study_id="c2")
    assert [i.view_position for i in c2.images.all()] == ["PA", "LL"]
    assert c2.patient_age == 58 and c2.patient_sex == "F" and c2.indication == "Cough."
    again = run(write_csv(tmp_path, rows))
    assert again["questions_unchanged"] == 3 and again["questions_created"] == 0


def test_xlsx_bank_reads_numbers_as_text(tmp_path):
    header = ["id", "case_id", "question", "option_a", "option_b", "option_c", "option_d"]
    header += ["correct", "task", "image_paths", "age"]
    values = [101, 7, "Effusion?", "Yes", "No", 3, 4.5, "D", "Presence Assessment"]
    values += ["images/c/pa.png", 58.0]
    path = write_xlsx(tmp_path, [header, values], images=[{"image_paths": "images/c/pa.png"}])
    run(path)
    q = Question.objects.get()
    assert q.source_id == "101" and q.case.study_id == "7"
    assert q.options == ["Yes", "No", "3", "4.5"] and q.case.patient_age == 58


@pytest.mark.parametrize("template", [TEMPLATE_CSV, TEMPLATE_XLSX], ids=["csv", "xlsx"])
def test_the_templates_import(tmp_path, template):
    for rel in ("images/case-001/pa.dcm", "images/case-002/pa.dcm", "images/case-002/lateral.dcm"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(radiograph("RG1_UNCR.dcm"), tmp_path / rel)
    summary = run(template, "--images-root", str(tmp_path))
    assert summary["questions_created"] == 4 and summary["images_created"] == 3
    assert summary["binary"] == 1  # q004: its "Yes" means the pneumothorax is present


def test_the_two_templates_hold_the_same_rows():
    with open(TEMPLATE_CSV, "rb") as a, open(TEMPLATE_XLSX, "rb") as b:
        from_csv = read_question_bank(a, "t.csv")
        from_xlsx = read_question_bank(b, "t.xlsx")
    assert [(r.qid, r.data, r.row) for r in from_csv] == [(r.qid, r.data, r.row) for r in from_xlsx]


BAD_CELLS = [
    ({"correct": "E"}, "correct", "must be one of A, B, C, D"),
    ({"option_c": ""}, "option_c", "option C is missing"),
    ({"option_b": "C) No"}, "option_b", "labelled"),
    ({"task": "Counting"}, "task", "unknown task"),
    ({"question": ""}, "question", "missing or empty"),
    ({"age": "Infinity"}, "age", "not a finite number"),
    ({"age": "1e999"}, "age", "not a finite number"),
    ({"age": "NaN"}, "age", "not a finite number"),
    ({"age": "old"}, "age", "cannot read age"),
    ({"image_paths": ""}, "image_paths", "missing or empty"),
    ({"image_paths": "images/none/missing.png"}, "image_paths", "image not found"),
    ({"image_paths": "../../etc/passwd"}, "image_paths", "escapes the images root"),
    ({"image_paths": "images/a\x00b.png"}, "image_paths", "holds a NUL character"),
    ({"case_id": ""}, "case_id", "missing or empty"),
]


@pytest.mark.parametrize(("cells", "column", "message"), BAD_CELLS)
def test_one_bad_row_is_refused_naming_row_and_column(tmp_path, cells, column, message):
    rows = [row("q1", "c1"), row("q2", "c2"), row("q3", "c3")]
    place_images(tmp_path, rows)
    rows[1].update(cells)
    path = write_csv(tmp_path, rows, images=False)
    with pytest.raises(CommandError) as info:
        run(path)
    text = str(info.value)
    assert f"row 3 (question 'q2'), column '{column}'" in text
    assert message in text and "nothing was written" in text
    assert_nothing_written()


def test_bad_xlsx_row_is_named_too(tmp_path):
    values = [row("q1"), row("q2", correct="Z")]
    path = write_xlsx(tmp_path, [HEADER] + [[r[c] for c in HEADER] for r in values], images=values)
    with pytest.raises(CommandError, match=r"row 3 \(question 'q2'\), column 'correct'"):
        run(path)
    assert_nothing_written()


def test_xlsx_formula_is_refused_not_evaluated(tmp_path):
    values = [row("q1"), row("q2")]
    cells = [[r[c] for c in HEADER] for r in values]
    cells[1][HEADER.index("correct")] = '=IF(1,"A","B")'
    path = write_xlsx(tmp_path, [HEADER, *cells], images=values)
    with pytest.raises(CommandError, match=r"row 3, column 'correct': is a formula"):
        run(path)
    assert_nothing_written()


@pytest.mark.parametrize(
    ("header", "message"),
    [
        ([*HEADER, "optionE"], "unknown column 'optione'"),
        ([c for c in HEADER if c != "correct"], "no 'correct' column"),
        ([*HEADER, "age"], "'age' appears twice"),
        ([c for c in HEADER if c != "image_paths"], "'image_paths' or a 'study_uid' column"),
    ],
)
def test_bad_header_is_refused(tmp_path, header, message):
    path = tmp_path / "bank.csv"
    path.write_text(",".join(header) + "\n" + ",".join("x" for _ in header) + "\n")
    with pytest.raises(CommandError, match=message):
        run(path)
    assert_nothing_written()


def test_duplicate_question_id_names_both_rows(tmp_path):
    path = write_csv(tmp_path, [row("q1", "c1"), row("q2", "c2"), row("q1", "c3")])
    with pytest.raises(CommandError, match=r"row 4 \(question 'q1'\), column 'id'.*row 2"):
        run(path)
    assert_nothing_written()


def test_excel_csv_variants_are_read(tmp_path):
    # Excel's "CSV UTF-8" starts with a BOM; European Excel separates with semicolons.
    rows = [row("q1", indication="Toux; fièvre."), row("q2", "c2")]
    path = write_csv(tmp_path, rows, delimiter=";", encoding="utf-8-sig")
    run(path)
    assert Case.objects.get(study_id="c1").indication == "Toux; fièvre."


def test_empty_rows_are_skipped_and_row_numbers_stay_true(tmp_path):
    rows = [row("q1"), dict.fromkeys(row(), ""), row("q3", correct="X")]
    path = write_csv(tmp_path, rows)
    with pytest.raises(CommandError, match=r"row 4 \(question 'q3'\)"):
        run(path)


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("bank.csv", b"id,question\n\xff\xfe\n", "not UTF-8"),
        ("bank.csv", b"", "empty"),
        ("bank.xlsx", b"not a zip", "not a readable .xlsx"),
        ("bank.ods", b"x", "must be a .csv or .xlsx"),
    ],
)
def test_unreadable_files_are_refused(tmp_path, name, content, message):
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(CommandError, match=message):
        run(path)
    assert_nothing_written()


def test_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(CommandError, match="file not found"):
        run(tmp_path / "nope.csv")


def test_reader_gives_row_numbers_as_shown_in_excel():
    text = "id,case_id,question,option_a,option_b,option_c,option_d,correct,task,image_paths\n"
    text += "a,c,Q?,1,2,3,4,A,presence,x.png\n\nb,c,Q?,1,2,3,4,A,presence,x.png\n"
    records = read_question_bank(io.BytesIO(text.encode()), "b.csv")
    assert [(r.qid, r.row) for r in records] == [("a", 2), ("b", 4)]


# The JSON reader shares the core: non-finite numbers are refused there too (issue 14).
@pytest.mark.parametrize("literal", ["Infinity", "-Infinity", "NaN", "1e999"])
@pytest.mark.parametrize("field", ["PatientAge", "question", "ImageViewPosition"])
def test_json_non_finite_numbers_are_refused_with_the_question_id(tmp_path, literal, field):
    path = rb.write(tmp_path, {"q1": rb.record(1), "q2": rb.record(2, "s2")})
    text = json.dumps({"q1": rb.record(1), "q2": rb.record(2, "s2", **{field: "@@"})})
    path.write_text(text.replace('"@@"', literal))
    out = StringIO()
    with pytest.raises(CommandError, match=rf"question 'q2', field '{field}'.*not a finite"):
        call_command("import_rexvqa", str(path), stdout=out)
    assert_nothing_written()


def test_spreadsheet_bank_with_images_in_the_pacs(pacs, monkeypatch, tmp_path):
    study, series, sop = uids("RG3_UNCR.dcm")
    rows = [
        row("q1", "c1", image_paths="", study_uid=study),  # the study's instances, by QIDO
        row("q2", "c2", image_paths=f"studies/{study}/series/{series}/instances/{sop}"),
    ]
    path = write_csv(tmp_path, rows, images=False)
    monkeypatch.setenv("PACS_PW_TEST", pacs.password)
    summary = run(
        path,
        "--dicomweb",
        pacs.dicomweb_url,
        "--dicomweb-user",
        pacs.user,
        "--dicomweb-password-env",
        "PACS_PW_TEST",
    )
    assert summary["images_created"] == 2
    assert set(Image.objects.values_list("source_path", flat=True)) == {
        Image.objects.first().source_path
    }  # one instance, fetched once into one cached file
