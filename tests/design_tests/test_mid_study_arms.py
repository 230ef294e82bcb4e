"""Mid-study, per arm: a reader who has not opened an arm yet is in none of that arm's numbers
(page, CSV, XLSX, API) and is named; the OR/Hillis comparison leaves them out and says so.
Expected values are counted here from the stored answers, not taken from our analysis."""

from __future__ import annotations

import io
import zipfile
from html import unescape

import pandas as pd
import pytest
from django.urls import reverse

from analysis.cache import StudyAnalysis
from analysis.pipeline import AnalysisSettings
from analysis.reporting import table_arm
from analysis.selectors import study_raters
from annotation import selectors
from annotation.models import Answer
from annotation.services import answer_submit, reader_finish
from annotation.sessions import reading_of
from readerstudy.design.services import study_design_set
from readerstudy.models import Role
from readerstudy.services.studies import membership_add
from tests.analysis_tests.export_readme import about_tables
from tests.design_tests.conftest import add_model, add_readers, crossover
from tests.factories import UserFactory, build_study

# Their ZIPs are read for tables, README and methods: the figures are built, not saved
# (the figure tests save them).
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("figures_unrendered")]

PANEL = "Panel (mean of readers)"


def _wrong(letter: str) -> str:
    return "ABCD"[("ABCD".index(letter) + 1) % 4]


def _read_session(study, reader, every: int) -> None:
    """Read the reader's current session: question i right unless position % every == 0."""
    reading = reading_of(study, reader)
    for number in range(1, len(selectors.ordered_item_ids(study, reader, reading)) + 1):
        item = selectors.item_at(study, reader, number, reading=reading)
        right = item.question.correct
        answer_submit(
            reader=reader,
            item=item,
            choice=_wrong(right) if item.position % every == 0 else right,
        )
    reader_finish(reader=reader, study=study)


@pytest.fixture
def half_read(db):
    """A crossover of 4 readers x 12 questions: two readers have read both arms, two only
    their first session (their second arm not opened)."""
    study = build_study(12)
    add_model(study)
    readers = add_readers(study, 4)
    study_design_set(study=study, design=crossover())
    for i, reader in enumerate(readers):
        _read_session(study, reader, 3 + i)
        if i < 2:
            _read_session(study, reader, 4 + i)
    pi = UserFactory(username="the-pi")
    membership_add(study=study, user=pi, role=Role.PI)
    return study, pi, readers


def _reader_names(study) -> dict[str, str]:
    """Username -> the display name every table gives the reader (whether or not a table
    has them yet)."""
    return {r.source: r.name for r in study_raters(study) if r.kind == "human"}


def _counted(study, names: dict[str, str]) -> dict[str, dict[str, tuple[int, int]]]:
    """Per arm, per reader who answered in it: (correct, questions) from the stored answers
    (every reader reads all 12 questions, a missing answer counts as wrong)."""
    total = study.items.count()
    out: dict[str, dict[str, tuple[int, int]]] = {}
    for answer in Answer.objects.filter(item__study=study).select_related(
        "item__question", "reader"
    ):
        arm = out.setdefault(answer.arm, {})
        name = names[answer.reader.username]
        right, n = arm.get(name, (0, total))
        arm[name] = (right + (answer.choice == answer.item.question.correct), n)
    return out


def test_a_reader_who_has_not_opened_an_arm_is_not_in_its_numbers_and_is_named(client, half_read):
    study, pi, _ = half_read
    result = StudyAnalysis(study, AnalysisSettings()).result
    names = _reader_names(study)
    counted = _counted(study, names)
    table = result.design_table("arm_accuracy").data
    every = table[table["task"] == "All"]
    for arm in ("unaided", "aided"):
        rows = every[(every["arm"] == arm) & (every["reader"] != PANEL)]
        assert set(rows["reader"]) == set(counted[arm]), arm
        for _, row in rows.iterrows():
            assert (row["correct"], row["n"]) == counted[arm][row["reader"]]
        panel = every[(every["arm"] == arm) & (every["reader"] == PANEL)].iloc[0]
        mean = sum(c / n for c, n in counted[arm].values()) / len(counted[arm])
        assert panel["accuracy"] == pytest.approx(mean)
        waiting = sorted(set(names.values()) - set(counted[arm]))
        assert waiting, "the fixture leaves some reader without this arm"
        assert panel["note"] == f"left out (no answer yet in this arm): {', '.join(waiting)}"

    # The OR/Hillis input has only the readers who have read both arms, and says so.
    both = set(counted["unaided"]) & set(counted["aided"])
    assert set(result.design["cube"].readers) == both
    assert "left out (no answers yet in one of the two readings)" in result.design["design"]

    # The page, the CSV, the XLSX and the API carry the same table.
    client.force_login(pi)
    html = unescape(client.get(reverse("analysis", args=[study.slug])).content.decode())
    assert panel["note"] in html
    csv = client.get(reverse("analysis-table", args=[study.slug, "arm_accuracy", "csv"]))
    shown = pd.read_csv(io.BytesIO(csv.content))
    assert len(shown) == len(table)
    assert set(shown.loc[shown["reader"] != PANEL, "reader"]) <= set(names.values())
    for arm in ("unaided", "aided"):
        pick = (shown["arm"] == arm) & (shown["task"] == "All") & (shown["reader"] != PANEL)
        assert set(shown.loc[pick, "reader"]) == set(counted[arm])
    archive = zipfile.ZipFile(
        io.BytesIO(client.get(reverse("analysis-zip", args=[study.slug])).content)
    )
    xlsx = pd.read_excel(io.BytesIO(archive.read(_xlsx_name(archive))), sheet_name=None)
    sheet = next(frame for name, frame in xlsx.items() if name.startswith("arm_accuracy"))
    assert sheet["note"].fillna("").str.startswith("left out").sum() >= 2
    rows = client.get(reverse("api-analysis", args=[study.slug])).json()["arm_accuracy"]
    notes = [r["note"] for r in rows if r["reader"] == PANEL and r["task"] == "All"]
    assert all(note.startswith("left out") for note in notes)


def test_the_order_check_leaves_out_readers_without_the_arm(half_read):
    study, _, _ = half_read
    result = StudyAnalysis(study, AnalysisSettings()).result
    names = _reader_names(study)
    counted = _counted(study, names)
    table = result.design_table("arm_by_session").data
    for arm in ("unaided", "aided"):
        rows = table[table["arm"] == arm]
        assert rows["readers"].sum() == len(counted[arm])
        means = [c / n for c, n in counted[arm].values()]
        pooled = (rows["mean_accuracy"] * rows["readers"]).sum() / rows["readers"].sum()
        assert pooled == pytest.approx(sum(means) / len(means))


def _xlsx_name(archive: zipfile.ZipFile) -> str:
    return next(n for n in archive.namelist() if n.endswith(".xlsx") and "/" not in n)


@pytest.fixture
def split_no_anchor(db):
    """A split-plot crossover without anchor questions: 6 readers in 2 groups, each group
    reads its own 6 of 12 questions in both arms; one AI model answers every question."""
    study = build_study(12)
    add_model(study)
    readers = add_readers(study, 6)
    study_design_set(study=study, design=crossover(groups=2))
    for i, reader in enumerate(readers):
        _read_session(study, reader, 3 + i % 3)
        _read_session(study, reader, 4 + i % 2)
    pi = UserFactory(username="the-pi")
    membership_add(study=study, user=pi, role=Role.PI)
    return study, pi


def test_without_anchor_questions_the_panel_tables_say_why_they_are_empty(client, split_no_anchor):
    """No question is read by every reader, so the panel and AI-vs-readers comparisons have
    no value: the page, the CSVs and the API say that, not "needs two readers and a model"."""
    study, pi = split_no_anchor
    # Independently: each question is answered (unaided arm) by the readers of one group only.
    per_question = {
        item: Answer.objects.filter(item=item, arm="unaided").count() for item in study.items.all()
    }
    assert max(per_question.values()) == 3 < 6
    client.force_login(pi)
    body = client.get(reverse("api-analysis", args=[study.slug])).json()
    panel = body["reader_panel"]
    assert panel["readers"] == 6 and panel["mean"] is None
    assert "no two X-rays have a question counted for all 6 readers" in panel["note"]
    assert "split-plot" in panel["note"]
    (row,) = body["ai_vs_readers"]
    assert row["model"] == "MedGemma" and row["difference"] is None
    assert "all 6 readers and MedGemma" in row["note"]
    html = unescape(client.get(reverse("analysis", args=[study.slug])).content.decode())
    assert "Needs at least two readers and one AI model" not in html
    assert panel["note"] in html
    for name in ("reader_panel", "ai_vs_readers"):
        csv = client.get(reverse("analysis-table", args=[study.slug, name, "csv"]))
        frame = pd.read_csv(io.BytesIO(csv.content))
        assert len(frame) == 1 and "not estimable" in frame.loc[0, "note"], name


def test_responses_carry_every_answer_of_every_arm_with_its_session(client, half_read):
    """responses.csv, the XLSX responses sheet and the API's responses hold the aided
    answers too, each with its arm and session, as stored."""
    study, pi, _ = half_read
    names = _reader_names(study)
    stored = {
        (names[a.reader.username], a.item.question.source_id, a.arm): (a.choice, a.session)
        for a in Answer.objects.filter(item__study=study).select_related("reader", "item__question")
    }
    assert {arm for _, _, arm in stored} == {"unaided", "aided"}
    client.force_login(pi)
    csv = client.get(reverse("analysis-table", args=[study.slug, "responses", "csv"]))
    archive = zipfile.ZipFile(
        io.BytesIO(client.get(reverse("analysis-zip", args=[study.slug])).content)
    )
    sheets = pd.read_excel(io.BytesIO(archive.read(_xlsx_name(archive))), sheet_name=None)
    api = client.get(reverse("api-analysis", args=[study.slug]), {"responses": "true"}).json()
    for frame in (
        pd.read_csv(io.BytesIO(csv.content)),
        sheets["responses"],
        pd.DataFrame(api["responses"]),
    ):
        given = frame[frame["answer"].notna() & (frame["rater_kind"] == "human")]
        shown = {
            (r.rater, str(r.question_id), r.arm): (r.answer, int(r.session))
            for r in given.itertuples()
        }
        assert shown == stored
        models = frame[frame["rater_kind"] == "model"]
        assert len(models) and models["arm"].isna().all()
    readme = archive.read("README.txt").decode()
    assert "`arm` (unaided / aided; empty for models) and `session`" in readme


def test_methods_describe_the_design_and_every_table_says_its_arm(client, half_read):
    """methods.md names the crossover, washout, the AI aid and how it was shown, the
    two-modality OR/Hillis, the NI margin, reliance and power, and which arm each table
    covers; README.txt and the page say the same arm per table (one declaration)."""
    study, pi, _ = half_read
    client.force_login(pi)
    archive = zipfile.ZipFile(
        io.BytesIO(client.get(reverse("analysis-zip", args=[study.slug])).content)
    )
    methods = archive.read("methods.md").decode()
    for said in (
        "## Design",
        "Crossover, 2 arms (unaided / aided by MedGemma, concurrent)",
        "washout 0 days between finishing the first session and opening the second",
        "AI aid: MedGemma's answer, concurrent (shown with the case)",
        f"{study.items.count()} questions have a usable answer",
        "two-modality Obuchowski–Rockette with Hillis df",
        "Non-inferiority at margin 0.05",
        "Reliance on the AI:",
        "Hillis–Obuchowski–Berbaum (2011)",
        "left out (no answers yet in one of the two readings)",
    ):
        assert said in methods, said
    single = "unaided arm only (readers alone; the aided answers enter the aided-vs-unaided tables)"
    assert "arm_accuracy and arm_by_session: each arm, side by side (unaided and aided)" in methods
    # The reader whose first session was the aided one has no unaided answer yet: out of
    # the unaided-arm tables, and named wherever their arm is said.
    unaided = {a.reader.username for a in Answer.objects.filter(item__study=study, arm="unaided")}
    result = StudyAnalysis(study, AnalysisSettings()).result
    names = _reader_names(study)
    assert {u for u, name in names.items() if name in set(result.humans)} == unaided
    waiting = sorted(name for u, name in _reader_names(study).items() if u not in unaided)
    assert waiting, "the fixture has a reader who read the aided arm first"
    single += f"; left out (no unaided answer yet): {', '.join(waiting)}"
    assert f"and the flow tables cover the {single};" in methods
    about = about_tables(archive.read("README.txt").decode())
    for name in ("accuracy", "mcnemar", "kappa_pairs_answer", "ai_vs_readers", "reader_panel"):
        assert f"arm: {single}" in about[name], name
    assert any(line.startswith("arm: aided against unaided") for line in about["mrmc_difference"])
    assert "arm: aided arm only" in about["reliance_agreement"]
    html = unescape(client.get(reverse("analysis", args=[study.slug])).content.decode())
    assert f"cover the {single}." in html
    arms = client.get(reverse("api-analysis", args=[study.slug])).json()["arms"]
    assert arms["accuracy"] == arms["mcnemar"] == single
    assert arms["reliance_agreement"] == "aided arm only"


def test_a_second_read_says_which_answers_each_table_covers():
    facts = {"design": {"arms": ["aided"], "counted_arm": "aided", "aid_mode": "second-read"}}
    assert table_arm(facts, "accuracy") == "aided arm only (final answers, after the AI was shown)"
    assert table_arm(facts, "mrmc_difference").startswith("aided arm: final answers")
    plain = {"design": {"arms": ["unaided"], "counted_arm": "unaided"}}
    assert table_arm(plain, "accuracy") == ""
