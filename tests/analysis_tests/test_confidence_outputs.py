"""A study with a confidence scale: the PI's page, the API and the ZIP show ROC curves, AUCs
with CIs, a calibration figure and the confidence tables, each saying what it rests on (the
scale, the rating rule); the same answers in a study without a scale show none of it."""

import io
import random
import re
import zipfile

import pandas as pd
import pytest
from django.urls import reverse
from django.utils.html import escape

from analysis.pipeline import records
from annotation.services import answer_submit
from readerstudy.models import Role
from readerstudy.predictions.services import predictions_import
from readerstudy.services.studies import membership_add
from readerstudy.vocabulary import CONFIDENCE_SCALES, ConfidenceScale
from tests.analysis_tests.simulated_checks import interval_problems
from tests.factories import (
    CaseFactory,
    ImageFactory,
    QuestionFactory,
    ReaderStudyFactory,
    StudyQuestionFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db
CONFIDENCE_FILES = ("roc_curves", "calibration")


def make_study(scale: str) -> tuple:
    """16 X-rays, each with a binary question (A: present) and a multiple-choice one, read by
    three readers in one arm (the same draws whatever the scale); a model's letters."""
    study = ReaderStudyFactory(confidence_scale=scale)
    for x in range(16):
        case = CaseFactory(dataset=study.dataset)
        ImageFactory(case=case, position=0)
        present = x % 3 != 0
        binary = QuestionFactory(
            dataset=study.dataset, case=case, correct="A" if present else "B", present_option="A"
        )
        choice = QuestionFactory(dataset=study.dataset, case=case, correct="ABCD"[x % 4])
        StudyQuestionFactory(study=study, question=binary, position=2 * x)
        StudyQuestionFactory(study=study, question=choice, position=2 * x + 1)
    rng = random.Random(7)
    for r in range(3):
        reader = UserFactory(username=f"{study.slug}-reader{r}")
        membership_add(study=study, user=reader, role=Role.READER)
        for item in study.items.select_related("question").order_by("position"):
            key = item.question.correct
            right = rng.random() < 0.75
            choice = key if right else "ABCD"[("ABCD".index(key) + 1) % 4]
            sure = rng.randint(2, 5) if right else rng.randint(1, 4)
            extra = {"confidence": sure} if study.scale else {}
            answer_submit(reader=reader, item=item, choice=choice, **extra)
    lines = ["question_id,prediction,probability"]
    for item in study.items.select_related("question"):
        key = item.question.correct
        right = rng.random() < 0.8
        letter = key if right else "ABCD"[("ABCD".index(key) + 2) % 4]
        sure = rng.uniform(0.6, 0.95) if right else rng.uniform(0.3, 0.7)
        lines.append(f"{item.question.source_id},{letter},{sure:.3f}")
    predictions_import(
        dataset=study.dataset, model_name="model-x", content="\n".join(lines).encode()
    )
    pi = UserFactory(username=f"{study.slug}-pi")
    membership_add(study=study, user=pi, role=Role.PI)
    return study, pi


def figure_on(page: str, study, name: str) -> bool:
    """The figure's place on the page: its picture once drawn, else the slot that asks."""
    return (
        reverse("analysis-figure", args=[study.slug, name, "svg"]) in page
        or reverse("analysis-figure-slot", args=[study.slug, name]) in page
    )


def outputs(client, study, pi) -> tuple[str, dict, zipfile.ZipFile]:
    client.force_login(pi)
    page = client.get(reverse("analysis", args=[study.slug])).content.decode()
    api = client.get(reverse("api-analysis", args=[study.slug])).json()
    archive = client.get(reverse("analysis-zip", args=[study.slug]))
    return page, api, zipfile.ZipFile(io.BytesIO(archive.content))


def test_a_study_with_a_scale_shows_roc_aucs_and_calibration(client):
    study, pi = make_study(ConfidenceScale.FIVE)
    page, api, archive = outputs(client, study, pi)
    rule = CONFIDENCE_SCALES[ConfidenceScale.FIVE].rule
    assert 'id="confidence"' in page and escape(rule) in page
    for name in CONFIDENCE_FILES:
        assert figure_on(page, study, name)
        for fmt in ("png", "svg", "pdf"):
            assert f"{name}.{fmt}" in archive.namelist()
    auc = pd.read_csv(io.BytesIO(archive.read("auc.csv")))
    readers = auc[auc["analysis"] == "this reader (normal)"]
    assert len(readers[readers["modality"] == "unaided"]) == 3
    assert (readers["ci_low"] < readers["auc"]).all() and (
        readers["auc"] < readers["ci_high"]
    ).all()
    assert set(readers["positives"]) == {10} and set(readers["negatives"]) == {6}
    assert api["confidence"]["rule"] == rule
    # the model's probabilities: its AUC and curve beside the readers', and its calibration
    assert [row["model"] for row in api["auc_vs_models"]] == ["model-x"]
    assert 0 < api["auc_vs_models"][0]["model_auc"] < 1
    assert "model-x" in {row["rater"] for row in api["calibration"]}
    assert "model-x" in {row["reader"] for row in api["roc_points"] if row["modality"] == "model"}
    assert [row["modality"] for row in api["auc"]][:3] == ["unaided"] * 3
    readme = archive.read("README.txt").decode()
    assert "method: empirical (trapezoidal, ties 1/2) AUC" in readme
    assert rule in readme and "confidence_scale: 1–5" in readme
    assert "Confidence, ROC and calibration" in archive.read("methods.md").decode()
    # each figure's footnote is its own
    roc, calibration = (archive.read(f"{name}.svg").decode() for name in CONFIDENCE_FILES)
    assert "Large markers" in roc and "Large markers" not in calibration
    assert "per confidence level" in calibration and "per confidence level" not in roc
    levels = pd.read_csv(io.BytesIO(archive.read("accuracy_by_confidence.csv")))
    assert set(levels["confidence"]) <= {1, 2, 3, 4, 5} and "readers pooled" in set(levels["rater"])


def test_a_study_without_a_scale_shows_none_of_it(client):
    study, pi = make_study(ConfidenceScale.NONE)
    page, api, archive = outputs(client, study, pi)
    assert 'id="confidence"' not in page and "data-confidence-table" not in page
    assert "AUC" not in page and "DeLong" not in page
    for name in CONFIDENCE_FILES:
        assert not figure_on(page, study, name)
    assert "confidence" not in api and "auc" not in api
    names = archive.namelist()
    assert not [n for n in names if n.startswith(("auc", "roc", "calibration", "accuracy_by_conf"))]
    assert not [n for n in names if "auc" in n]
    assert "Confidence, ROC" not in archive.read("methods.md").decode()


def test_each_platform_scale_says_its_rule_as_it_rates():
    """The rule's words (every ROC output's) say what roc_rating does, point by point."""
    for scale in CONFIDENCE_SCALES.values():
        numbers = [int(n) for n in re.findall(r"\d+", scale.rule)]
        for c in scale.points:
            present = scale.roc_rating(present=True, confidence=c)
            absent = scale.roc_rating(present=False, confidence=c)
            if scale.ordinal:
                levels, low, high = numbers[1], numbers[2], numbers[4]
                assert present == levels + (c - low) + 1 and absent == high - c + 1
            else:
                assert present == c and absent == numbers[-1] - c


def test_the_demos_rated_study_shows_roc_curves_aucs_and_calibration(client, demo):
    """demo-rated (a 5-point scale, binary yes/no questions, three simulated readers): ROC
    curves, every reader's AUC with its CI and the calibration figure; the demo's other
    studies (no scale) show none of it."""
    from django.contrib.auth import get_user_model

    from readerstudy.models import ReaderStudy

    pi = get_user_model().objects.get(username="pi1")
    study = ReaderStudy.objects.get(slug="demo-rated")
    page, api, archive = outputs(client, study, pi)
    for name in CONFIDENCE_FILES:
        assert figure_on(page, study, name) and f"{name}.pdf" in archive.namelist()
    readers = [
        row
        for row in api["auc"]
        if row["analysis"] == "this reader (normal)" and row["modality"] != "model"
    ]
    assert len(readers) == 3
    assert all(row["ci_low"] < row["auc"] < row["ci_high"] for row in readers if row["auc"] < 1)
    assert 'data-confidence-table="auc"' in page
    models = {row["rater"] for row in api["calibration"]}
    assert {"MedGemma-demo", "Qwen-VL-demo", "LLaVA-Med-demo"} <= models
    assert {row["model"] for row in api["auc_vs_models"]} == {
        "MedGemma-demo",
        "Qwen-VL-demo",
        "LLaVA-Med-demo",
    }
    # Every interval of every table in its range, or its row says in words that it passes it.
    tables = {
        name.rsplit("/", 1)[-1][:-4]: pd.read_csv(io.BytesIO(archive.read(name)))
        for name in archive.namelist()
        if name.endswith(".csv") and "mrmc/" not in name
    }
    assert {"auc", "confidence_discrimination", "calibration"} <= set(tables)
    assert not interval_problems(tables)
    for slug in ("demo", "demo-aided"):
        other = ReaderStudy.objects.get(slug=slug)
        html = client.get(reverse("analysis", args=[other.slug])).content.decode()
        assert 'id="confidence"' not in html and not figure_on(html, other, "roc_curves")


def test_a_reader_just_started_leaves_the_others_aucs_and_curves_standing(client):
    """Mid-study: a fourth reader has rated two binary questions, on two X-rays, so their AUC
    has no jackknife interval. The other readers' AUCs, their mean, the comparison with the
    model and every curve stay; the new reader has a row saying why they are left out; the
    counts stay whole numbers."""
    study, pi = make_study(ConfidenceScale.FIVE)
    late = UserFactory(username=f"{study.slug}-late")
    membership_add(study=study, user=late, role=Role.READER)
    for item in study.items.select_related("question").order_by("position")[:4]:
        answer_submit(reader=late, item=item, choice=item.question.correct, confidence=4)
    page, api, archive = outputs(client, study, pi)
    auc = pd.read_csv(io.BytesIO(archive.read("auc.csv")))
    unaided = auc[auc["modality"] == "unaided"]
    estimated = unaided.dropna(subset=["auc"])
    assert len(estimated[estimated["analysis"] == "this reader (normal)"]) == 3
    assert len(estimated[estimated["reader"] == "mean of readers"]) == 2
    left_out = unaided[unaided["auc"].isna()]
    assert left_out[["positives", "negatives"]].to_numpy().tolist() == [[1, 1]]
    note = left_out["note"].iloc[0]
    assert note.startswith("not estimable: leaving out X-ray ") and "left out of" in note
    assert left_out["reader"].iloc[0] in note
    assert [r["note"] for r in api["auc"] if r["auc"] is None] == [note]
    vs_models = pd.read_csv(io.BytesIO(archive.read("auc_vs_models.csv")))
    assert vs_models["readers"].tolist() == [3]
    curves = pd.read_csv(io.BytesIO(archive.read("roc_points.csv")))
    assert curves[curves["modality"] == "unaided"]["reader"].nunique() == 3
    assert "Not drawn (no AUC interval yet" in archive.read("roc_curves.svg").decode()
    shown = re.search(r'data-confidence-table="auc".*?</table>', page, re.S).group(0)
    row = next(r for r in shown.split("<tr>") if "not estimable" in r)
    assert "<td>1</td><td>1</td>" in row and "NA" not in row  # counts as counts
    assert "<td>10</td><td>6</td>" in shown
    counts = pd.DataFrame({"readers": pd.array([3, None], dtype="Int64")})
    assert records(counts) == [{"readers": 3}, {"readers": None}]  # JSON: a count or null


def test_the_page_says_what_the_zip_holds_and_how_too_fast_answers_were_treated(client):
    """The page promises the mrmc/ package files only where the ZIP has them (a comparison of
    two arms), and each confidence table says, as README.txt does, whether too-fast answers
    were left out of it under the policy asked for."""
    study, pi = make_study(ConfidenceScale.FIVE)
    client.force_login(pi)
    page = client.get(reverse("analysis", args=[study.slug]), {"fast": "drop"}).content.decode()
    archive = client.get(reverse("analysis-zip", args=[study.slug]), {"fast": "drop"})
    names = zipfile.ZipFile(io.BytesIO(archive.content)).namelist()
    assert ("mrmc/" in page) == any(name.startswith("mrmc/") for name in names)
    readme = zipfile.ZipFile(io.BytesIO(archive.content)).read("README.txt").decode()
    said = re.search(r"^ *(fast_answers: .*)$", readme.split("auc.csv")[1], re.M).group(1)
    assert "left out" in said
    shown = re.search(r'data-confidence-table="auc".*?</table></div>(.*?)</p>', page, re.S).group(1)
    assert escape(said) in shown
