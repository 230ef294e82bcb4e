"""The figures of a two-arm study say the arm they show, and an aided-vs-unaided figure draws
each reader in both arms with the difference and its CI, from the OR/Hillis analysis the
tables show (issue 32: "the four figures show the unaided arm without saying so; there is no
aided-vs-unaided figure")."""

from __future__ import annotations

import io
import zipfile
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from django.urls import reverse

from analysis.cache import StudyAnalysis
from analysis.figures import FIGURES, arm_comparison, figure_builders
from analysis.pipeline import AnalysisSettings
from analysis.stats import (
    difference_note,
    logit_interval,
    or_design,
    or_hillis,
    reader_arms_table,
    reader_differences,
)
from annotation.models import Answer
from annotation.services import answer_submit
from tests.design_tests.test_design_analysis import two_arm  # noqa: F401 (a fixture)

pytestmark = pytest.mark.django_db


def test_per_reader_differences_are_the_mrmcaov_checked_fixed_reader_ones():
    """The same numbers as `or_hillis`'s fixed-readers reader-specific differences (checked
    against MRMCaov's summary in tests/analysis_tests/roc), aided − unaided."""
    rng = np.random.default_rng(3)
    counted = np.full((2, 5, 25), 3.0)
    correct = rng.binomial(3, [[[0.55]], [[0.7]]], size=(2, 5, 25)).astype(float)
    result = or_design(correct, counted)
    mine = reader_differences(result)
    core = or_hillis(
        result.fom,
        result.covariance,
        modalities=("unaided", "aided"),
        readers=[f"r{j}" for j in range(5)],
    ).fixed_readers.reader_differences
    for j, theirs in enumerate(core):  # theirs: unaided − aided
        assert mine[2, j] == pytest.approx(-theirs.estimate, abs=1e-15)
        assert mine[3, j] == pytest.approx(theirs.se, rel=1e-12)
        assert (mine[4, j], mine[5, j]) == pytest.approx(
            (-theirs.ci_high, -theirs.ci_low), rel=1e-12
        )


def test_a_readers_difference_interval_past_one_is_said_in_words_beside_it():
    """Four X-rays: reader r1 goes from 1 of 4 to 4 of 4, and the normal interval of the
    difference reaches past 1. It is shown as computed (MRMCaov's), with the row's note saying
    it is uninformative past the bound; the other reader's row says nothing."""
    counted = np.full((2, 2, 4), 1.0)
    correct = np.array([[[0, 0, 1, 0], [1, 0, 0, 1]], [[1, 1, 1, 1], [1, 1, 0, 1]]], float)
    cube = SimpleNamespace(readers=["r1", "r2"], modalities=SimpleNamespace(labels=("u", "a")))
    results = {"result": or_design(correct, counted), "cube": cube}
    table = reader_arms_table(results, 0.05, "policy").data.set_index("reader")
    assert table.loc["r1", "ci_high"] > 1 > table.loc["r2", "ci_high"]
    assert table.loc["r1", "note"] == difference_note(-2, 2)
    assert table.loc["r2", "note"] == ""


def test_the_aided_vs_unaided_figure_draws_every_reader_in_both_arms(client, two_arm):  # noqa: F811
    study, pi = two_arm
    analysis = StudyAnalysis(study, AnalysisSettings())
    result = analysis.result
    readers, panel = arm_comparison(result)
    # Independent count: each reader's share of right answers in each arm, from the answers.
    for _, row in readers.iterrows():
        for arm, column in (("unaided", "reference"), ("aided", "test")):
            answers = Answer.objects.filter(
                item__study=study, arm=arm, reader__username=_username(study, row["reader"])
            ).select_related("item__question")
            right = sum(a.choice == a.item.question.correct for a in answers)
            assert row[column] == pytest.approx(right / answers.count(), abs=1e-12)
        assert row["ci_low"] <= row["difference"] <= row["ci_high"]
    # The panel rows are the mrmc_difference table's numbers, not recomputed.
    mrmc = result.design_table("mrmc_difference").data
    for k in range(2):
        for column in ("difference", "ci_low", "ci_high"):
            assert panel.iloc[k][column] == mrmc.iloc[k][column]
    assert "aided_vs_unaided" in figure_builders(result)
    # Each arm's panel mean is a proportion: its interval is the logit-scale one (as the
    # reader panel's), inside 0-100% even where OR/Hillis's own runs past it.
    for mean, column in zip(result.design["result"].means, ("reference", "test"), strict=True):
        low, high = panel.iloc[0][f"{column}_low"], panel.iloc[0][f"{column}_high"]
        expected = logit_interval(mean.estimate, mean.se, mean.df, 0.05)
        assert [low, high] == pytest.approx(list(expected), nan_ok=True)
        assert np.isnan(low) or 0 < low <= mean.estimate <= high < 1
    # The figure draws the reader_arms table: the page, the CSV and the API show its numbers.
    table = result.design_table("reader_arms").data
    assert list(table["reader"]) == list(readers["reader"])
    assert list(table["difference"]) == list(readers["difference"])
    assert set(table["reference_arm"]) == {"unaided"} and set(table["test_arm"]) == {"aided"}
    client.force_login(pi)
    html = client.get(reverse("analysis", args=[study.slug])).content.decode()
    assert 'data-design-table="reader_arms"' in html
    assert "analysis/figure-slot/aided_vs_unaided/" in html or (
        "analysis/figure/aided_vs_unaided.svg" in html
    )
    archive = zipfile.ZipFile(
        io.BytesIO(client.get(reverse("analysis-zip", args=[study.slug])).content)
    )
    names = set(archive.namelist())
    assert {"aided_vs_unaided.png", "aided_vs_unaided.svg", "aided_vs_unaided.pdf"} <= names
    exported = pd.read_csv(io.BytesIO(archive.read("reader_arms.csv")))
    assert np.allclose(exported["ci_low"], table["ci_low"], rtol=1e-12)
    readme = archive.read("README.txt").decode()
    assert f"  aided_vs_unaided: {FIGURES['aided_vs_unaided']}" in readme
    svg = archive.read("aided_vs_unaided.svg").decode()
    for reader in readers["reader"]:
        assert reader in svg
    # The single-arm figures say which arm they show, in the title and the footnote.
    for name, title in (
        ("accuracy_by_task", "Accuracy by task (unaided arm)"),
        ("accuracy_by_category", "Accuracy by category (unaided arm)"),
        ("kappa_answer", "A–D answers, unaided arm"),
    ):
        drawn = archive.read(f"{name}.svg").decode()
        assert title in drawn, name
        assert "The unaided arm only" in drawn, name


def _username(study, name: str) -> str:
    from analysis.selectors import study_raters

    return next(r.source for r in study_raters(study) if r.name == name)


def test_a_study_read_unaided_only_names_no_arm(client, study, reader, other_reader, pi):
    for item in study.items.all():
        answer_submit(reader=reader, item=item, choice=item.question.correct, time_ms=4000)
        answer_submit(reader=other_reader, item=item, choice="A", time_ms=6000)
    result = StudyAnalysis(study, AnalysisSettings()).result
    assert "aided_vs_unaided" not in figure_builders(result)
    client.force_login(pi)
    archive = zipfile.ZipFile(
        io.BytesIO(client.get(reverse("analysis-zip", args=[study.slug])).content)
    )
    drawn = archive.read("accuracy_by_task.svg").decode()
    assert "Accuracy by task" in drawn
    assert " arm" not in drawn
