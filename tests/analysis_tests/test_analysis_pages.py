"""The PI analysis page, its downloads, export_analysis and the responses selector."""

import datetime as dt
import io
import re
import zipfile
from io import StringIO
from pathlib import Path

import pandas as pd
import pytest
from django.core.management import call_command
from django.urls import reverse

from analysis.cache import StudyAnalysis
from analysis.pipeline import AnalysisSettings
from analysis.selectors import study_responses
from annotation.services import answer_submit
from readerstudy.models import Role
from readerstudy.predictions.services import predictions_import
from tests.factories import MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db
# For the tests that read the page's text, its tables or an export's CSVs: the figures are
# built (a figure that cannot be built still fails them) but not saved as PNG, SVG and PDF.
# The figure downloads and the export's file list render them.
UNRENDERED = pytest.mark.usefixtures("figures_unrendered")


@pytest.fixture
def analysed_study(study, reader, other_reader, pi):
    items = list(study.items.order_by("position"))
    for item in items:
        answer_submit(reader=reader, item=item, choice=item.question.correct, difficulty="easy")
    for item in items[:3]:
        answer_submit(reader=other_reader, item=item, choice="A")
    rows = "\n".join(f"{i.question.source_id},{'ABCD'[n % 4]}" for n, i in enumerate(items))
    predictions_import(
        dataset=study.dataset,
        model_name="model-x",
        content=f"question_id,prediction\n{rows}\n".encode(),
    )
    return study


def test_responses_selector_has_every_rater_and_question(analysed_study):
    df = study_responses(analysed_study)
    assert list(dict.fromkeys(df["rater"])) == ["Reader 1", "Reader 2", "model-x"]
    assert len(df) == 3 * 4
    assert df.loc[df.rater == "Reader 2", "answer"].isna().sum() == 1
    assert set(df.loc[df.rater == "model-x", "rater_kind"]) == {"model"}
    assert set(df.loc[df.rater == "model-x", "rater_id"]) == {
        f"model:{analysed_study.dataset.ai_models.get().id}"
    }
    assert df["case_id"].notna().all() and df["presented"].all()
    first = df[df.rater == "Reader 1"]
    assert (first["answer"] == first["correct_answer"]).all()


def test_a_reader_who_has_not_started_is_left_out_and_named(client, analysed_study, pi):
    """Under "missing = wrong" a reader who has not begun would show as 0%, which reads as a
    result; they are named on the page instead."""
    newcomer = UserFactory(username="newcomer")
    MembershipFactory(study=analysed_study, user=newcomer, role=Role.READER)
    assert f"reader:{newcomer.id}" not in set(study_responses(analysed_study)["rater_id"])
    client.force_login(pi)
    html = client.get(reverse("analysis", args=[analysed_study.slug])).content.decode()
    assert "left out: newcomer" in html
    answer_submit(reader=newcomer, item=analysed_study.items.first(), choice="B")
    assert f"reader:{newcomer.id}" in set(study_responses(analysed_study)["rater_id"])
    html = client.get(reverse("analysis", args=[analysed_study.slug])).content.decode()
    assert "left out: newcomer" not in html


def test_only_pis_see_the_analysis(client, analysed_study, reader, expert, outsider):
    url = reverse("analysis", args=[analysed_study.slug])
    for user in (reader, expert, outsider):
        client.force_login(user)
        assert client.get(url).status_code == 404
        assert (
            client.get(
                reverse("analysis-figure", args=[analysed_study.slug, "kappa_answer", "png"])
            ).status_code
            == 404
        )
        assert (
            client.get(
                reverse("analysis-table", args=[analysed_study.slug, "responses", "csv"])
            ).status_code
            == 404
        )


@UNRENDERED
def test_analysis_page_shows_tables_and_policy(client, pi, analysed_study):
    client.force_login(pi)
    html = client.get(reverse("analysis", args=[analysed_study.slug])).content.decode()
    assert "missing answers count as wrong" in html
    assert "100.0%" in html and "4/4" in html  # reader answered everything correctly
    assert "model-x" in html and "Reader 2" in html and "1/4" in html
    html = client.get(
        reverse("analysis", args=[analysed_study.slug]), {"missing": "exclude"}
    ).content.decode()
    assert "missing answers are excluded" in html and "1/3" in html and "1/4" not in html


@UNRENDERED
def test_missing_policy_changes_the_numbers(client, pi, analysed_study):
    client.force_login(pi)
    url = reverse("analysis-table", args=[analysed_study.slug, "accuracy", "csv"])
    wrong = pd.read_csv(io.StringIO(client.get(url).content.decode()))
    excl = pd.read_csv(io.StringIO(client.get(url, {"missing": "exclude"}).content.decode()))
    row = lambda t: t.query("rater == 'Reader 2' and task == 'All'").iloc[0]  # noqa: E731
    assert row(wrong)["n"] == 4 and row(excl)["n"] == 3


@pytest.mark.parametrize(
    ("fmt", "magic"), [("png", b"\x89PNG"), ("svg", b"<?xml"), ("pdf", b"%PDF")]
)
def test_figure_downloads(client, pi, analysed_study, fmt, magic):
    client.force_login(pi)
    for name in ("accuracy_by_task", "kappa_answer"):
        response = client.get(
            reverse("analysis-figure", args=[analysed_study.slug, name, fmt]), {"download": "1"}
        )
        assert response.status_code == 200 and response.content.startswith(magic)
        assert "attachment" in response["Content-Disposition"]
    # The names from before figures were split by task and scale are gone.
    for name in ("accuracy", "kappa"):
        url = reverse("analysis-figure", args=[analysed_study.slug, name, fmt])
        assert client.get(url).status_code == 404


def test_table_downloads_csv_and_xlsx(client, pi, analysed_study):
    client.force_login(pi)
    csv = client.get(
        reverse("analysis-table", args=[analysed_study.slug, "kappa_answer_all", "csv"])
    )
    matrix = pd.read_csv(io.StringIO(csv.content.decode()), index_col="rater")
    assert list(matrix.index) == list(matrix.columns) == ["Reader 1", "Reader 2", "model-x"]
    xlsx = client.get(reverse("analysis-table", args=[analysed_study.slug, "accuracy", "xlsx"]))
    frame = pd.read_excel(io.BytesIO(xlsx.content), sheet_name="accuracy")
    assert {"rater", "task", "n", "correct", "accuracy", "ci_low", "ci_high"} <= set(frame.columns)
    settings = pd.read_excel(io.BytesIO(xlsx.content), sheet_name="settings")
    assert dict(zip(settings["setting"], settings["value"], strict=True))["missing"] == "wrong"


def test_zip_has_every_export(client, pi, analysed_study):
    client.force_login(pi)
    response = client.get(reverse("analysis-zip", args=[analysed_study.slug]))
    archive = zipfile.ZipFile(io.BytesIO(response.content))
    names = set(archive.namelist())
    assert {"accuracy.csv", "kappa_answer_all.csv", "report.xlsx", "policy.json"} <= names
    readme = archive.read("README.txt").decode()
    version = StudyAnalysis(analysed_study, AnalysisSettings()).version
    assert f"Study: {analysed_study.slug} ({analysed_study.title})" in readme
    assert f"Data version: {version}" in readme and "pandas.read_csv" in readme


def test_every_download_is_named_by_study_data_version_and_date(client, pi, analysed_study):
    """Two downloads of different data or days never share a name (not `demo-analysis.zip`)."""
    client.force_login(pi)
    slug, day = analysed_study.slug, dt.datetime.now(dt.UTC).date().isoformat()
    version = StudyAnalysis(analysed_study, AnalysisSettings()).version[:8]
    urls = {
        "analysis.zip": reverse("analysis-zip", args=[slug]),
        "accuracy.csv": reverse("analysis-table", args=[slug, "accuracy", "csv"]),
        "accuracy.xlsx": reverse("analysis-table", args=[slug, "accuracy", "xlsx"]),
    }
    for what, url in urls.items():
        stem, ext = what.split(".")
        response = client.get(url)
        want = f'filename="{slug}-{stem}-v{version}-{day}.{ext}"'
        assert want in response["Content-Disposition"], (what, response["Content-Disposition"])
    for name in ("pi-reviews-csv", "pi-feedback-csv"):
        disposition = client.get(reverse(name, args=[slug]))["Content-Disposition"]
        assert re.search(rf'filename="{slug}-[a-z-]+-v[0-9a-f]{{8}}-{day}\.csv"', disposition)


def test_export_analysis_writes_every_file(tmp_path, analysed_study):
    out = tmp_path / "out"
    call_command("export_analysis", analysed_study.slug, "--out", str(out), stdout=StringIO())
    tasks = [
        "presence-assessment",
        "negation-assessment",
        "differential-diagnosis",
        "location-and-distribution-assessment",
    ]
    expected = {
        "policy.json",
        "flow.csv",
        "flow_raters.csv",
        "raters.csv",
        "accuracy.csv",
        "accuracy_by_category.csv",
        "ai_vs_readers.csv",
        "reader_panel.csv",
        "mcnemar.csv",
        "fleiss.csv",
        "kappa_pairs_answer.csv",
        "kappa_pairs_correct.csv",
        "reading_time.csv",
        "accuracy_by_time.csv",
        "failed_extractions.csv",
        "responses.csv",
        "questions.csv",
        "methods.csv",
        "methods.md",
        "README.txt",
        "report.xlsx",
    }
    for scale in ("answer", "correct"):
        expected |= {f"kappa_{scale}_{slug}.csv" for slug in ["all", *tasks]}
    expected |= {f"kappa_answer.{fmt}" for fmt in ("png", "svg", "pdf")}  # the policy's scale
    for figure in ("accuracy_by_task", "accuracy_by_category"):
        expected |= {f"{figure}.{fmt}" for fmt in ("png", "svg", "pdf")}
    assert expected <= {p.name for p in out.iterdir()}
    responses = pd.read_csv(out / "responses.csv")
    assert list(responses.columns) == [
        "question_id",
        "rater",
        "rater_id",
        "rater_kind",
        "answer",
        "presented",
        "correct",
        "difficulty",
        "alignment",
        "confidence",
        "time_ms",
        "excluded",
        "rejected",
        # What each answer is scored against (issue 35): the words shown, the version scored
        # by, the letters counted right, and the same under each key policy.
        "shown_version",
        "key_version",
        "accepted",
        "original_accepted",
        "adjudicated_accepted",
        "earlier_words",
        "arm",
        "session",
        "too_fast",
    ]
    # A study read in one unaided arm: every reader's answer in that arm, session 1.
    humans = responses["rater_kind"] == "human"
    assert set(responses.loc[humans, "arm"]) == {"unaided"}
    assert set(responses.loc[humans, "session"]) == {1}
    assert responses.loc[~humans, "arm"].isna().all()
    questions = pd.read_csv(out / "questions.csv")
    assert list(questions.columns) == [
        "question_id",
        "case_id",
        "task",
        "category",
        "correct_answer",
        "excluded",
        "excluded_reason",
        "rejected",
        "rejected_by",
    ]
    sheets = pd.ExcelFile(out / "report.xlsx").sheet_names
    assert {
        "accuracy",
        "k_ans_all",
        "k_cor_all",
        "responses",
        "questions",
        "settings",
        "about",
    } <= set(sheets)


@UNRENDERED
def test_excluded_questions_are_left_out_by_default(tmp_path, analysed_study):
    item = analysed_study.items.first()
    item.excluded = True
    item.save()
    out = tmp_path / "out"
    call_command("export_analysis", analysed_study.slug, "--out", str(out), stdout=StringIO())
    accuracy = pd.read_csv(out / "accuracy.csv")
    assert accuracy.query("rater == 'Reader 1' and task == 'All'")["n"].item() == 3
    questions = pd.read_csv(out / "questions.csv")
    assert questions["excluded"].sum() == 1  # still listed, and marked
    call_command(
        "export_analysis",
        analysed_study.slug,
        "--out",
        str(out),
        "--include-excluded",
        stdout=StringIO(),
    )
    accuracy = pd.read_csv(out / "accuracy.csv")
    assert accuracy.query("rater == 'Reader 1' and task == 'All'")["n"].item() == 4


def test_pi_of_another_study_cannot_see_this_one(client, analysed_study):
    from tests.factories import build_study

    other = build_study(1)
    boss = UserFactory(username="boss")
    MembershipFactory(study=other, user=boss, role=Role.PI)
    client.force_login(boss)
    assert client.get(reverse("analysis", args=[analysed_study.slug])).status_code == 404


@UNRENDERED
def test_readme_notebook_recipe_honours_exclusions(tmp_path, analysed_study):
    """The PI guide's notebook recipe, run on an export, gives the page's numbers."""
    import re
    from pathlib import Path

    item = analysed_study.items.first()
    item.excluded = True
    item.save()
    out = tmp_path / "out"
    call_command("export_analysis", analysed_study.slug, "--out", str(out), stdout=StringIO())
    readme = (Path(__file__).resolve().parents[2] / "docs" / "guide" / "pis.md").read_text()
    recipe = re.search(r"```python\n(import pandas as pd\n.*?)```", readme, re.S).group(1)
    namespace: dict = {}
    import os

    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        exec(recipe, namespace)
    finally:
        os.chdir(cwd)
    table = namespace["stats"].accuracy_table(namespace["p"], missing="exclude")
    exported = pd.read_csv(out / "accuracy.csv")
    mine = table.query("rater == 'Reader 1' and task == 'All'")["n"].item()
    assert mine == 3 == exported.query("rater == 'Reader 1' and task == 'All'")["n"].item()


@UNRENDERED
def test_the_long_pairs_table_starts_collapsed_and_says_its_size(client, pi, analysed_study):
    client.force_login(pi)
    html = client.get(reverse("analysis", args=[analysed_study.slug])).content.decode()
    start = html.index("Every pair (")
    opening = html.rfind("<details", 0, start)
    assert "open" not in html[opening : html.index(">", opening)]
    assert re.search(r"Every pair \(\d+ rows\)", html)


@UNRENDERED
def test_fast_answers_are_counted_on_the_page_and_left_out_on_request(
    client, pi, study, reader, other_reader, settings
):
    """A key burst (300 ms on screen) is counted in the flow table under the platform's
    FAST_ANSWER_MS; "leave out" takes it out of the reader's n and the page says so."""
    settings.FAST_ANSWER_MS = 2000
    items = list(study.items.order_by("position"))
    for n, item in enumerate(items):
        answer_submit(reader=reader, item=item, choice=item.question.correct, time_ms=9000)
        fast = n < 2
        answer_submit(reader=other_reader, item=item, choice="A", time_ms=300 if fast else 9000)
    client.force_login(pi)
    url = reverse("analysis", args=[study.slug])
    html = client.get(url).content.decode()
    assert "Answers faster than 2000 ms" in html and "2 answers by 1 reader" in html
    assert "answers under 2000 ms flagged, kept" in html  # the policy line in force
    kept = pd.read_csv(
        io.StringIO(
            client.get(
                reverse("analysis-table", args=[study.slug, "flow_raters", "csv"])
            ).content.decode()
        )
    )
    assert kept.set_index("rater")["too_fast"].to_dict() == {"Reader 1": 0, "Reader 2": 2}
    responses = pd.read_csv(
        io.StringIO(
            client.get(
                reverse("analysis-table", args=[study.slug, "responses", "csv"])
            ).content.decode()
        )
    )
    assert responses["too_fast"].sum() == 2
    html = client.get(url, {"fast": "drop"}).content.decode()
    assert "answers under 2000 ms left out" in html
    accuracy = pd.read_csv(
        io.StringIO(
            client.get(
                reverse("analysis-table", args=[study.slug, "accuracy", "csv"]), {"fast": "drop"}
            ).content.decode()
        )
    )
    n = accuracy[accuracy["task"] == "All"].set_index("rater")["n"]
    assert n["Reader 2"] == len(items) - 2 and n["Reader 1"] == len(items)
    api = client.get(f"/api/v1/studies/{study.slug}/analysis/", {"fast": "drop"}).json()
    assert api["policy"]["exclude_fast"] is True and api["policy"]["fast_answer_ms"] == 2000
    fast_rows = [r for r in api["flow"] if r["stage"] == "Answers faster than 2000 ms"]
    assert fast_rows and "left out" in fast_rows[0]["detail"]


@UNRENDERED
def test_raters_table_maps_display_names_to_usernames(client, pi, analysed_study, reader):
    client.force_login(pi)
    url = reverse("analysis-table", args=[analysed_study.slug, "raters", "csv"])
    raters = pd.read_csv(io.StringIO(client.get(url).content.decode()), keep_default_na=False)
    by_name = raters.set_index("rater")
    assert by_name.loc["Reader 1", "username"] == reader.username
    assert by_name.loc["Reader 1", "rater_id"] == f"reader:{reader.id}"
    assert by_name.loc["model-x", "username"] == "" and by_name.loc["model-x", "kind"] == "model"


@UNRENDERED
def test_long_pair_tables_start_collapsed(client, pi, analysed_study):
    client.force_login(pi)
    html = client.get(reverse("analysis", args=[analysed_study.slug])).content.decode()
    for name in ("mcnemar", "kappa_pairs"):
        tag = re.search(rf'<details data-long-table="{name}"[^>]*>', html)
        assert tag and " open" not in tag.group(0), name


@UNRENDERED
def test_the_readme_pandas_recipe_runs_on_an_export(tmp_path, analysed_study, monkeypatch):
    """The PI guide's notebook recipe, as written, on what export_analysis writes (plain CSVs)."""
    readme = (Path(__file__).resolve().parents[2] / "docs" / "guide" / "pis.md").read_text()
    start = readme.index("Honour the PI's exclusions as the page does:")
    block = re.search(r"```python\n(.*?)```", readme[start:], flags=re.S).group(1)
    call_command(
        "export_analysis", analysed_study.slug, "--out", str(tmp_path / "out"), stdout=StringIO()
    )
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    exec(compile(block, "docs/guide/pis.md", "exec"), namespace)
    assert set(namespace["readers"]) == {"Reader 1", "Reader 2"}
    assert namespace["models"] == ["model-x"]


def test_a_readers_number_does_not_move_when_an_earlier_member_starts(analysed_study):
    """Readers are numbered in the order they joined, members who have not started included:
    a colleague who joined first and starts last does not renumber the others."""
    first, late = UserFactory(username="first"), UserFactory(username="late")
    for user in (first, late):
        MembershipFactory(study=analysed_study, user=user, role=Role.READER)

    def shown() -> dict[str, str]:
        frame = study_responses(analysed_study).drop_duplicates("rater_id")
        return dict(zip(frame["rater_id"], frame["rater"], strict=True))

    answer_submit(reader=late, item=analysed_study.items.first(), choice="B")
    before = shown()
    assert before[f"reader:{late.id}"] == "Reader 4"  # first, who joined before, is Reader 3
    answer_submit(reader=first, item=analysed_study.items.first(), choice="C")
    after = shown()
    assert after == {**before, f"reader:{first.id}": "Reader 3"}
