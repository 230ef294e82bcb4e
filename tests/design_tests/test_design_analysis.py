"""The design-aware analysis through its URLs: the analysis page, the API, the ZIP and
`mrmc_power`, on a two-arm crossover read by simulated readers and on the demo's study."""

from __future__ import annotations

import io
import re
import zipfile
from html import unescape
from io import StringIO

import pandas as pd
import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.urls import reverse

from analysis.cache import StudyAnalysis
from analysis.design_frame import design_frame
from analysis.exports import table_about
from analysis.package_files import readme_lines
from analysis.pipeline import AnalysisSettings
from analysis.stats import DesignPolicy, conclusions, design_results, or_design, power_table
from annotation import selectors
from annotation.reviews import review_submit
from annotation.services import answer_submit, reader_finish
from annotation.sessions import reading_of
from readerstudy.design.services import study_design_set
from readerstudy.models import ReaderStudy, Role
from readerstudy.services.studies import membership_add
from tests.analysis_tests.export_readme import about_tables
from tests.analysis_tests.package_readers import read_mrmcaov
from tests.design_tests.conftest import add_model, add_readers, crossover
from tests.factories import UserFactory, build_study

# Their ZIPs are read for tables, README and methods: the figures are built, not saved
# (the figure tests save them).
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("figures_unrendered")]

PACKAGE_FILES = {"mrmc/mrmcaov.csv", "mrmc/imrmc.imrmc", "mrmc/rjafroc.xlsx"}


def _wrong(letter: str) -> str:
    return "ABCD"[("ABCD".index(letter) + 1) % 4]


def _read(study, reader, skill: int) -> None:
    """Read the reader's current session: question i right unless (i + skill) % k == 0, with
    k larger (fewer errors) in the aided arm, so readers and arms differ."""
    reading = reading_of(study, reader)
    every = 5 if reading.arm == "aided" else 3
    for number in range(1, len(selectors.ordered_item_ids(study, reader, reading)) + 1):
        item = selectors.item_at(study, reader, number, reading=reading)
        right = item.question.correct
        choice = _wrong(right) if (item.position + skill) % every == 0 else right
        answer_submit(reader=reader, item=item, choice=choice)
    reader_finish(reader=reader, study=study)


@pytest.fixture
def two_arm(db):
    """A crossover (unaided / aided, concurrent, washout 0): 4 readers x 12 questions x 2 arms,
    and its PI."""
    study = build_study(12)
    add_model(study)
    readers = add_readers(study, 4)
    study_design_set(study=study, design=crossover())
    for skill, reader in enumerate(readers):
        _read(study, reader, skill)
        _read(study, reader, skill)
    pi = UserFactory(username="the-pi")
    membership_add(study=study, user=pi, role=Role.PI)
    return study, pi


def _expected(study, **policy):
    return design_results(design_frame(study), DesignPolicy(**policy))


def test_page_shows_design_arms_mrmc_conclusion_reliance_and_power(client, two_arm):
    study, pi = two_arm
    client.force_login(pi)
    response = client.get(reverse("analysis", args=[study.slug]))
    html = unescape(response.content.decode())
    assert response.status_code == 200
    expected = _expected(study)
    assert "Crossover, 2 arms (unaided / aided by MedGemma, concurrent)" in html
    assert expected["design"].rstrip(".") in html
    # The sample counted as the study's own sentence counts it (questions on X-rays).
    xrays = study.items.values("question__case").distinct().count()
    assert f"{study.items.count()} questions on {xrays} X-rays compared" in expected["design"]
    for name in (
        "arm_accuracy",
        "mrmc_difference",
        "mrmc_variance_components",
        "non_inferiority",
        "reliance_agreement",
        "power",
    ):
        assert f'data-design-table="{name}"' in html, name
    difference = expected["tables"]["mrmc_difference"].data
    for value in difference["difference"]:
        assert f"{value:.3f}".replace("-", "−") in html
    for conclusion in expected["tables"]["non_inferiority"].data["conclusion"]:
        assert conclusion in html


def test_page_api_and_zip_state_the_same_conclusions_with_the_difference_and_its_ci(
    client, two_arm
):
    """The conclusions in words give aided − unaided with its CI and level, then the
    non-inferiority / superiority finding; the page, the API and the ZIP's README.txt say the
    same words (analysis.stats.design.conclusions)."""
    study, pi = two_arm
    client.force_login(pi)
    expected = _expected(study)
    stated = conclusions(expected)
    random = expected["result"].random
    difference = f"aided − unaided = {random.estimate:.3f}".replace("-", "−")
    assert [a for a, _ in stated] == list(expected["tables"]["mrmc_difference"].data["analysis"])
    assert stated[0][1].startswith(f"{difference} (95% CI ")
    page = client.get(reverse("analysis", args=[study.slug])).content.decode()
    html = unescape(re.sub(r"<[^>]+>", "", page))  # the words as read, without the markup
    api = client.get(reverse("api-analysis", args=[study.slug])).json()["design"]
    readme = (
        zipfile.ZipFile(io.BytesIO(client.get(reverse("analysis-zip", args=[study.slug])).content))
        .read("README.txt")
        .decode()
    )
    assert api["conclusions"] == [{"analysis": a, "conclusion": c} for a, c in stated]
    for analysis, conclusion in stated:
        assert f"{analysis}: {conclusion}" in html
        assert f"  {analysis}: {conclusion}" in readme


def test_ni_margin_is_a_policy_value_that_changes_the_conclusion(client, two_arm):
    study, pi = two_arm
    client.force_login(pi)
    url = reverse("api-analysis", args=[study.slug])
    wide = client.get(url, {"ni_margin": "0.4"}).json()
    assert wide["policy"]["ni_margin"] == 0.4
    rows = wide["design"]["tables"]["non_inferiority"]["rows"]
    assert all(row["margin"] == 0.4 for row in rows)
    assert rows == [
        {k: (None if v != v else v) for k, v in row.items()}
        for row in _expected(study, ni_margin=0.4)["tables"]["non_inferiority"].data.to_dict(
            "records"
        )
    ]
    assert client.get(url, {"ni_margin": "2"}).status_code == 400


def test_api_gives_design_tables_with_unit_method_policy_and_power(client, two_arm):
    study, pi = two_arm
    client.force_login(pi)
    body = client.get(
        reverse("api-analysis", args=[study.slug]), {"effect": "0.1", "power": "0.9"}
    ).json()
    expected = _expected(study)
    design = body["design"]
    assert design["design"] == expected["design"]
    table = design["tables"]["mrmc_difference"]
    assert table["unit"].startswith("X-ray") and "Obuchowski" in table["method"]
    assert [r["analysis"] for r in table["rows"]] == list(
        expected["tables"]["mrmc_difference"].data["analysis"]
    )
    assert pytest.approx([r["p_value"] for r in table["rows"]]) == list(
        expected["tables"]["mrmc_difference"].data["p_value"]
    )
    # The design tables are also among the page's tables (one registry, pipeline.TABLES).
    assert body["arm_accuracy"] and body["mrmc_difference"]
    power = body["power"]
    assert (power["effect"], power["power"]) == (0.1, 0.9)
    want = power_table(expected, 0.1, 0.9).data
    assert len(power["rows"]) == len(want)
    bad = client.get(reverse("api-analysis", args=[study.slug]), {"power": "1.5"})
    assert bad.status_code == 400 and "power" in bad.json()["errors"]


def test_zip_holds_the_package_files_id_key_readme_and_design_tables(client, two_arm):
    study, pi = two_arm
    client.force_login(pi)
    response = client.get(reverse("analysis-zip", args=[study.slug]))
    archive = zipfile.ZipFile(io.BytesIO(response.content))
    names = set(archive.namelist())
    assert PACKAGE_FILES | {"mrmc/id_map.csv", "mrmc/README.txt", "power.csv"} <= names
    assert {"mrmc_difference.csv", "non_inferiority.csv", "reliance_agreement.csv"} <= names
    readme = archive.read("mrmc/README.txt").decode()
    expected = _expected(study)
    packaged = {n.removeprefix("mrmc/") for n in names if n.startswith("mrmc/")}
    assert "\n".join(readme_lines(expected["cube"].modalities, packaged, False)) in readme
    assert expected["design"] in readme
    # The MRMCaov file read back through our analysis gives the page's difference.
    cube = read_mrmcaov(archive.read("mrmc/mrmcaov.csv").decode(), expected["cube"].modalities)
    again = or_design(cube.correct, cube.counted)
    assert again.random.estimate == pytest.approx(expected["result"].random.estimate, abs=1e-12)
    ids = pd.read_csv(io.BytesIO(archive.read("mrmc/id_map.csv")))
    assert set(ids["kind"]) == {"reader", "X-ray", "question"}
    assert not archive.read("mrmc_difference.csv").decode().startswith("#")  # a plain table
    header = about_tables(archive.read("README.txt").decode())["mrmc_difference"]
    assert any(line.startswith("unit: X-ray") for line in header)
    assert any("ni_margin: 0.05" in line for line in header)
    assert "Hillis" in "\n".join(about_tables(archive.read("README.txt").decode())["power"])


def test_single_arm_outputs_have_no_design_tables(client, study, pi, reader):
    answer_submit(reader=reader, item=study.items.first(), choice="A")
    client.force_login(pi)
    body = client.get(reverse("api-analysis", args=[study.slug])).json()
    assert "design" not in body and "mrmc_difference" not in body
    archive = zipfile.ZipFile(
        io.BytesIO(client.get(reverse("analysis-zip", args=[study.slug])).content)
    )
    assert not any(n.startswith("mrmc/") or n == "arm_accuracy.csv" for n in archive.namelist())
    assert (
        "Aided against unaided"
        not in client.get(reverse("analysis", args=[study.slug])).content.decode()
    )


def test_only_pis_see_the_design_aware_results(client, two_arm):
    study, _pi = two_arm
    reader = study.memberships.filter(role=Role.READER).first().user
    client.force_login(reader)
    for name in ("analysis", "api-analysis", "analysis-zip"):
        assert client.get(reverse(name, args=[study.slug])).status_code in (403, 404)


def test_mrmc_power_command_prints_the_power_table(two_arm):
    study, _pi = two_arm
    out = StringIO()
    call_command("mrmc_power", study.slug, "--effect", "0.1", "--power", "0.9", stdout=out)
    text = out.getvalue()
    want = power_table(_expected(study), 0.1, 0.9).data
    lines = [line for line in text.splitlines() if not line.startswith("#")]
    table = pd.read_csv(io.StringIO("\n".join(lines)))
    assert list(table.columns) == list(want.columns)
    assert len(table) == len(want)
    assert "# pilot: " in text and "Hillis" in text
    with pytest.raises(CommandError, match="--power"):
        call_command("mrmc_power", study.slug, "--power", "2", stdout=StringIO())
    with pytest.raises(CommandError, match="no study"):
        call_command("mrmc_power", "nope", stdout=StringIO())


def test_demo_aided_page_and_zip(client, demo):
    study = ReaderStudy.objects.get(slug="demo-aided")
    client.force_login(get_user_model().objects.get(username="pi1"))
    html = client.get(reverse("analysis", args=[study.slug])).content.decode()
    assert "data-design-sentence" in html and "Crossover, 2 arms" in html
    for name in ("arm_accuracy", "mrmc_difference", "reliance_agreement", "power"):
        assert f'data-design-table="{name}"' in html, name
    assert "data-conclusions" in html and "non-inferior" in html
    # The demo's pilot Var(T×R) estimate is negative: the power section says so.
    assert "Var(T×R) estimate is negative" in html and "not supported by this pilot" in html
    archive = zipfile.ZipFile(
        io.BytesIO(client.get(reverse("analysis-zip", args=[study.slug])).content)
    )
    assert set(archive.namelist()) >= PACKAGE_FILES
    power_csv = archive.read("power.csv").decode()
    assert "Var(T×R) estimate is negative" in power_csv


def test_design_tables_leave_out_the_questions_every_other_table_leaves_out(two_arm):
    """A question an expert rejected and one a PI excluded are out of the aided-vs-unaided
    tables as out of the accuracy table (for every reader and arm alike), back in when the
    policy includes them; each design table's header says so, and that too-fast answers stay."""
    study, _ = two_arm
    rejected, excluded = list(study.items.order_by("position"))[:2]
    expert = UserFactory(username="the-expert")
    membership_add(study=study, user=expert, role=Role.EXPERT)
    review_submit(
        expert=expert,
        item=rejected,
        flags=["image_mismatch"],
        ratings={"image_alignment": 1},
        difficulty="medium",
        decision="reject",
    )
    excluded.excluded, excluded.excluded_reason = True, "cut-off image"
    excluded.save()
    out = {rejected.question.source_id, excluded.question.source_id}

    default = StudyAnalysis(study, AnalysisSettings()).result
    assert not set(default.design_frame["question_id"]) & out
    assert set(default.analysed["question_id"]) == set(default.design_frame["question_id"])
    everything = AnalysisSettings(include_excluded=True, exclude_rejected=False)
    included = StudyAnalysis(study, everything).result
    assert out <= set(included.design_frame["question_id"])
    assert len(included.design_frame) == len(default.design_frame) + 2 * 4 * 2  # 4 readers, 2 arms

    name = next(n for n in default.design["tables"] if default.design_table(n) is not None)
    about = table_about(default, name)
    assert "excluded_questions: left out" in about
    assert "rejected_questions: questions an expert rejected are left out" in about
    assert any(line.startswith("too_fast_answers: kept") for line in about)


def test_readme_says_where_aided_against_unaided_is_on_the_page(client, two_arm):
    """The PI guide says where *Aided against unaided* is, as the page shows it: after the
    policy form and the flow of questions."""
    from pathlib import Path

    study, pi = two_arm
    client.force_login(pi)
    html = client.get(reverse("analysis", args=[study.slug])).content.decode()
    assert html.index('class="card settings-form"') < html.index('id="flow"')
    assert html.index('id="flow"') < html.index('id="arms"') < html.index('id="accuracy"')
    readme = (Path(__file__).resolve().parents[2] / "docs" / "guide" / "pis.md").read_text()
    assert "The analysis page opens with **Aided against unaided**" not in readme
    said = " ".join(readme.split())
    assert (
        "after the policy form and the flow of questions, the first section of results is "
        "**Aided against unaided**"
    ) in said


def _input_value(html: str, name: str) -> str | None:
    field = re.search(rf'<input[^>]*name="{name}"[^>]*>', html)
    value = re.search(r'value="([^"]*)"', field.group(0)) if field else None
    return value.group(1) if value else None


def test_the_power_form_shows_the_effect_and_power_its_table_is_for(client, two_arm):
    """Not asked, the table is for the defaults and the form shows them (it showed two empty
    fields under "to detect 0.05 with power 0.8"); asked, the form keeps what was asked."""
    study, pi = two_arm
    client.force_login(pi)
    for query, shown in (
        ({}, ("0.05", "0.8")),
        ({"effect": "0.1", "power": "0.9"}, ("0.1", "0.9")),
    ):
        html = client.get(reverse("analysis", args=[study.slug]), query).content.decode()
        assert f"to detect {shown[0]} with power {shown[1]}" in unescape(html)
        assert (_input_value(html, "effect"), _input_value(html, "power")) == shown, query
