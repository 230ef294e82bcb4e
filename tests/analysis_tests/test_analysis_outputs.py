"""What a PI downloads: the policy in every output, display names, paper-ready figures, safe
cells, the cache; and model names that look like reader names (issue 14, finding 5)."""

import io
import json
import zipfile
from unittest import mock

import openpyxl
import pandas as pd
import pytest
from django.urls import reverse

from analysis import cache as analysis_cache
from analysis.models import RaterLabel
from annotation.services import answer_submit
from readerstudy.models import AuditEvent, Role
from readerstudy.predictions.services import predictions_import
from readerstudy.services.studies import study_question_set_excluded
from tests.analysis_tests.export_readme import about_tables
from tests.factories import MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db


def upload(study, name, letters=None, only=None):
    items = list(study.items.order_by("position"))[:only]
    rows = "\n".join(
        f"{i.question.source_id},{(letters or 'ABCD')[n % len(letters or 'ABCD')]}"
        for n, i in enumerate(items)
    )
    predictions_import(
        dataset=study.dataset, model_name=name, content=f"question_id,prediction\n{rows}\n".encode()
    )


@pytest.fixture
def answered(study, reader, other_reader, pi):
    for n, item in enumerate(study.items.order_by("position")):
        answer_submit(reader=reader, item=item, choice=item.question.correct, time_ms=5000 + n)
        answer_submit(reader=other_reader, item=item, choice="A", time_ms=9000)
    upload(study, "model-x")
    return study


def get(client, name, study, *args, query=None):
    return client.get(reverse(name, args=[study.slug, *args]), query or {})


def test_model_names_that_look_like_readers_do_not_break_anything(client, study, pi):
    """A user `reader2` and models `reader2` and `reader2 (model)` once collided (500)."""
    reader2 = UserFactory(username="reader2")
    MembershipFactory(study=study, user=reader2, role=Role.READER)
    first = UserFactory(username="first")
    MembershipFactory(study=study, user=first, role=Role.READER)
    for item in study.items.all():
        answer_submit(reader=reader2, item=item, choice="A")
        answer_submit(reader=first, item=item, choice="B")
    upload(study, "reader2")
    upload(study, "reader2 (model)", letters="DCBA")
    client.force_login(pi)
    assert get(client, "analysis", study).status_code == 200
    for fmt in ("svg", "png", "pdf"):
        assert get(client, "analysis-figure", study, "kappa_answer", fmt).status_code == 200
    assert get(client, "analysis-zip", study).status_code == 200
    api = client.get(f"/api/v1/studies/{study.slug}/analysis/").json()
    names = [r["rater"] for r in api["raters"]]
    assert names == ["Reader 1", "Reader 2", "reader2", "reader2 (model)"]
    kinds = {r["rater"]: r["kind"] for r in api["raters"]}
    assert kinds["reader2"] == kinds["reader2 (model)"] == "model"
    assert len({r["rater_id"] for r in api["raters"]}) == 4


def test_a_model_named_like_a_default_reader_name_gets_a_suffix(client, study, reader, pi):
    answer_submit(reader=reader, item=study.items.first(), choice="A")
    upload(study, "Reader 1")
    client.force_login(pi)
    raters = client.get(f"/api/v1/studies/{study.slug}/analysis/").json()["raters"]
    assert [r["rater"] for r in raters] == ["Reader 1", "Reader 1 (model)"]


def test_pi_names_raters_and_every_output_uses_the_names(client, answered, reader, pi):
    client.force_login(pi)
    url = reverse("analysis-names", args=[answered.slug])
    model_id = answered.dataset.ai_models.get().id
    response = client.post(
        url, {f"name-reader:{reader.id}": "Resident A", f"name-model:{model_id}": "MedGemma"}
    )
    assert response.status_code == 302
    assert AuditEvent.objects.filter(action="analysis.rater_labels").exists()
    html = get(client, "analysis", answered).content.decode()
    assert "Resident A" in html and "MedGemma" in html
    svg = get(client, "analysis-figure", answered, "kappa_answer", "svg").content.decode()
    assert ">Resident A<" in svg or "Resident A</text>" in svg  # real text, not glyph paths
    accuracy = pd.read_csv(
        io.StringIO(get(client, "analysis-table", answered, "accuracy", "csv").content.decode()),
    )
    assert set(accuracy["rater"]) == {"Resident A", "Reader 1", "MedGemma"}
    # the other reader keeps a default name that does not clash


def test_duplicate_names_are_refused_and_nothing_changes(
    client, answered, reader, other_reader, pi
):
    client.force_login(pi)
    url = reverse("analysis-names", args=[answered.slug])
    response = client.post(
        url,
        {f"name-reader:{reader.id}": "Same", f"name-reader:{other_reader.id}": "same"},
        follow=True,
    )
    assert "Nothing was saved" in response.content.decode()
    assert not RaterLabel.objects.exists()
    long = client.post(url, {f"name-reader:{reader.id}": "x" * 61}, follow=True)
    assert "at most 60" in long.content.decode() and not RaterLabel.objects.exists()


def test_policy_is_in_every_output(client, answered, pi):
    client.force_login(pi)
    archive = zipfile.ZipFile(io.BytesIO(get(client, "analysis-zip", answered).content))
    names = set(archive.namelist())
    policy = json.loads(archive.read("policy.json"))
    assert policy["missing"] == "wrong" and policy["kappa_scale"] == "answer"
    assert policy["case_unit"].startswith("X-ray") and policy["alpha"] == 0.05
    about = about_tables(archive.read("README.txt").decode())
    for name in names:
        if name.endswith(".csv"):
            # A plain table: the first line is the column header, no "#" rows to skip.
            assert not archive.read(name).decode().startswith("#"), name
            head = about[name[:-4]]
            assert head[0].startswith("unit: ") and head[1].startswith("method: "), name
    assert "missing: wrong" in about["accuracy"]
    assert "Policy in force: missing answers count as wrong" in archive.read("README.txt").decode()
    assert {"kappa_answer_all.csv", "kappa_correct_all.csv"} <= names
    answer = pd.read_csv(io.BytesIO(archive.read("kappa_answer_all.csv")))
    correct = pd.read_csv(io.BytesIO(archive.read("kappa_correct_all.csv")))
    assert not answer.equals(correct)
    workbook = openpyxl.load_workbook(io.BytesIO(archive.read("report.xlsx")))
    settings = {row[0]: row[1] for row in workbook["settings"].iter_rows(values_only=True)}
    assert settings["kappa_scale"] == "answer" and settings["ci_method"] == "wilson"
    sheet = list(workbook["about"].iter_rows(values_only=True))
    assert ("accuracy", "missing", "wrong") in sheet
    api = client.get(f"/api/v1/studies/{answered.slug}/analysis/", {"scale": "correct"}).json()
    assert api["policy"]["kappa_scale"] == "correct"
    for key in ("mcnemar", "fleiss", "kappa_pairs", "reading_time", "accuracy_by_time", "flow"):
        assert api[key], key
    pair = api["kappa_pairs"][0]
    assert {"n", "kappa", "ci_low", "ci_high", "agreement", "pabak"} <= set(pair)
    assert {"p_value", "p_holm", "in_holm_family"} <= set(api["mcnemar"][0])


def test_figures_keep_text_and_truetype_fonts(client, answered, pi):
    client.force_login(pi)
    svg = get(client, "analysis-figure", answered, "accuracy_by_task", "svg").content.decode()
    assert "<text" in svg and "Reader 1" in svg and "Whiskers: Wilson 95% CI" in svg
    pdf = get(client, "analysis-figure", answered, "kappa_answer", "pdf").content
    assert b"/TrueType" in pdf or b"/CIDFontType2" in pdf
    assert b"/Type3" not in pdf
    png = get(client, "analysis-figure", answered, "accuracy_by_task", "png").content
    from PIL import Image

    assert round(Image.open(io.BytesIO(png)).info["dpi"][0]) == 300


def test_kappa_footnote_states_only_what_applies(client, answered, pi):
    client.force_login(pi)
    svg = get(client, "analysis-figure", answered, "kappa_answer", "svg").content.decode()
    assert "pairwise deletion" in svg and "count as wrong" not in svg and "Wilson" not in svg


def test_formula_like_names_are_neutralised_in_analysis_exports(client, answered, pi):
    upload(answered, '=HYPERLINK("http://evil.example","x")')
    client.force_login(pi)
    text = get(client, "analysis-table", answered, "accuracy", "csv").content.decode()
    assert "'=HYPERLINK" in text and "\n=HYPERLINK" not in text and ",=HYPERLINK" not in text
    body = get(client, "analysis-table", answered, "accuracy", "xlsx").content
    sheet = openpyxl.load_workbook(io.BytesIO(body))["accuracy"]
    cells = [c for row in sheet.iter_rows() for c in row if str(c.value).startswith("=HYPER")]
    assert cells and all(c.data_type == "s" for c in cells)
    negative = [c for row in sheet.iter_rows() for c in row if isinstance(c.value, float)]
    assert negative  # numbers stay numbers


def test_partial_predictions_are_not_predicted_not_failed(client, answered, pi):
    upload(answered, "half", only=2)
    client.force_login(pi)
    api = client.get(f"/api/v1/studies/{answered.slug}/analysis/").json()
    half = next(r for r in api["failed_extractions"] if r["rater"] == "half")
    assert (half["n"], half["failed"], half["not_predicted"]) == (2, 0, 2)
    acc = next(r for r in api["accuracy"] if r["rater"] == "half" and r["task"] == "All")
    assert acc["n"] == 2


def test_analysis_is_computed_once_per_data_version(client, answered, pi, reader):
    client.force_login(pi)
    with mock.patch.object(analysis_cache, "analyse", wraps=analysis_cache.analyse) as spy:
        get(client, "analysis", answered)
        get(client, "analysis-figure", answered, "accuracy_by_task", "svg")
        get(client, "analysis-table", answered, "accuracy", "csv")
        client.get(f"/api/v1/studies/{answered.slug}/analysis/")
        assert spy.call_count == 1
        get(client, "analysis", answered, query={"missing": "exclude"})  # another policy
        assert spy.call_count == 2
        answer_submit(reader=reader, item=answered.items.first(), choice="D")
        get(client, "analysis", answered)
        assert spy.call_count == 3
        study_question_set_excluded(
            item=answered.items.last(), actor=pi, excluded=True, reason="wrong view"
        )
        html = get(client, "analysis", answered).content.decode()
        assert spy.call_count == 4 and "reason: wrong view" in html


def test_flow_table_on_the_page(client, answered, pi):
    client.force_login(pi)
    html = get(client, "analysis", answered).content.decode()
    assert "Flow of questions" in html and "Sampled" in html and "Analysed" in html


def test_the_page_figures_are_pinned_to_their_data_version(client, answered, pi, reader):
    """A figure link on the page names its data version, so the browser may keep it for
    good; a new version gets a new link; a link whose figure is gone leads to the current
    one."""
    import re

    from django.core.cache import cache

    def kappa_src():
        html = get(client, "analysis", answered).content.decode()
        src = re.search(r'<img src="([^"]*kappa_answer\.svg[^"]*)"', html).group(1)
        return src.replace("&amp;", "&")

    client.force_login(pi)
    src = kappa_src()
    first = client.get(src)
    assert first.status_code == 200 and b"<svg" in first.content
    assert "immutable" in first["Cache-Control"]
    answer_submit(reader=reader, item=answered.items.first(), choice="D")
    new_src = kappa_src()
    assert "v=" in new_src and new_src != src
    assert client.get(src).content == first.content  # the old link: the same bytes
    assert client.get(new_src).status_code == 200
    cache.clear()  # the old version's figure is gone
    moved = client.get(src)
    assert moved.status_code == 302 and moved["Location"].endswith(new_src.split("?")[1])
    unpinned = get(client, "analysis-figure", answered, "kappa_answer", "svg")
    assert "must-revalidate" in unpinned["Cache-Control"]


def test_renaming_a_model_is_a_new_data_version(client, answered, pi):
    """A model renamed in the admin: the tables and figures show the new name at once."""
    from readerstudy.predictions.models import AIModel

    client.force_login(pi)
    assert "model-x" in get(client, "analysis", answered).content.decode()
    AIModel.objects.filter(name="model-x").update(name="MedGemma-4b")
    html = get(client, "analysis", answered).content.decode()
    assert "MedGemma-4b" in html and "model-x" not in html


def test_every_table_of_the_zip_opens_while_one_reader_has_answered(client, study, reader, pi):
    """With one reader there is no reader panel yet: reader_panel.csv holds its header and no
    row, like every table without rows (it was an empty file, which pandas and R refuse), in
    the ZIP and as its own download."""
    for item in study.items.all():
        answer_submit(reader=reader, item=item, choice=item.question.correct, time_ms=5000)
    upload(study, "model-x")
    client.force_login(pi)
    archive = zipfile.ZipFile(io.BytesIO(get(client, "analysis-zip", study).content))
    for name in archive.namelist():
        if name.endswith(".csv"):
            assert len(pd.read_csv(io.BytesIO(archive.read(name))).columns), name
    panel = pd.read_csv(io.BytesIO(archive.read("reader_panel.csv")))
    assert panel.empty and {"readers", "mean", "ci_low", "ci_high"} <= set(panel.columns)
    alone = get(client, "analysis-table", study, "reader_panel", "csv").content
    assert list(pd.read_csv(io.BytesIO(alone)).columns) == list(panel.columns)
