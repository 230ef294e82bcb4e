"""A κ figure needs a pair of raters. With one rater (a practice set's own analysis, or a
research study only one reader has answered, no AI model) the page drew an empty heatmap
titled "Cohen's κ between raters" and matplotlib warned of singular axis limits; now there
is no such figure (page, ZIP) and the page says why."""

from __future__ import annotations

import warnings

import pytest

from analysis.cache import StudyAnalysis
from analysis.figures import figure_builders
from analysis.pipeline import AnalysisSettings
from annotation.services import answer_submit
from tests.analysis_tests.test_analysis_downloads import download_zip, page

pytestmark = pytest.mark.django_db


def _answer(study, *readers):
    for n, item in enumerate(study.items.order_by("position")):
        for reader in readers:
            answer_submit(reader=reader, item=item, choice="ABCD"[n % 4], time_ms=5000 + n)


def test_one_rater_has_no_kappa_figure_and_the_page_says_why(client, study, reader, pi):
    _answer(study, reader)
    result = StudyAnalysis(study, AnalysisSettings()).result
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing drawn on singular axes either
        figures = figure_builders(result)
    assert not [name for name in figures if name.startswith("kappa")]
    assert "accuracy_by_task" in figures  # the rest is drawn as before
    client.force_login(pi)
    html = page(client, study).content.decode()
    assert "No κ: it compares pairs of raters" in html
    assert not [n for n in download_zip(client, study).namelist() if "kappa_answer." in n]


def test_two_raters_keep_their_kappa_figure(client, study, reader, other_reader, pi):
    _answer(study, reader, other_reader)
    result = StudyAnalysis(study, AnalysisSettings()).result
    assert "kappa_answer" in figure_builders(result)
    client.force_login(pi)
    assert "No κ: it compares pairs" not in page(client, study).content.decode()
    assert [n for n in download_zip(client, study).namelist() if "kappa_answer." in n]
