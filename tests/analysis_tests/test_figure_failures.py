"""One figure can no longer fail the whole analysis (issue 32).

A reading-time quartile answered 3 of 3 right on 2 X-rays had a Wilson upper bound of
0.9999999999999999, below its accuracy of 1; matplotlib refused the negative error bar, the
analysis job failed, and the ZIP could never be downloaded. Now no bound lands on the wrong
side of its proportion, error bars are never negative, and a figure that still cannot be drawn
is said to have failed, in words, on the page and in the ZIP's README.txt, while every table,
the other figures and the ZIP come out.
"""

import re
from html import unescape
from unittest import mock

import numpy as np
import pandas as pd
import pytest
from django.urls import reverse

from analysis import plots
from analysis.cache import StudyAnalysis
from analysis.exports import analysis_files, write_files
from analysis.pipeline import AnalysisSettings
from analysis.stats import accuracy_by_time, clustered_proportion_ci, norm_ppf, wilson_interval
from readerstudy.models import BackgroundJob, JobStatus
from tests.analysis_tests.test_analysis_downloads import download_zip, page, run_db_worker


def _published_wilson(k: int, n: int, alpha: float = 0.05) -> tuple[float, float]:
    """Wilson (1927): (p + z²/2n ± z √(p(1-p)/n + z²/4n²)) / (1 + z²/n); at p = 1 the upper
    bound is (1 + z²/n) / (1 + z²/n) = 1 exactly, at p = 0 the lower bound 0 exactly."""
    z = float(norm_ppf(1 - alpha / 2))
    p = k / n
    centre = p + z * z / (2 * n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (centre - half) / (1 + z * z / n), (centre + half) / (1 + z * z / n)


@pytest.mark.parametrize("n", range(1, 41))
def test_wilson_all_right_reaches_1_and_all_wrong_reaches_0(n):
    """One question per X-ray: the plain Wilson interval (statsmodels' numbers, which miss by
    1 ulp: 7 of 7 gave 0.9999999999999999), with its bounds on the proportion's side."""
    ones = np.ones(n)
    right = clustered_proportion_ci(ones, ones)
    wrong = clustered_proportion_ci(0 * ones, ones)
    assert right.ci_high[0] == 1.0 and wrong.ci_low[0] == 0.0
    assert np.isclose(right.ci_low[0], _published_wilson(n, n)[0], rtol=1e-12)
    assert np.isclose(wrong.ci_high[0], _published_wilson(0, n)[1], rtol=1e-12)
    assert right.ci_low[0] == wilson_interval(n, n)[0]  # otherwise statsmodels' own numbers


@pytest.mark.parametrize("method", ["wilson", "clopper-pearson"])
def test_no_clustered_bound_on_the_wrong_side_of_its_proportion(method):
    """Every split of 1-30 questions over X-rays, all right, all wrong and one wrong: the
    interval lies in [0, 1] and holds the proportion (3 of 3 on 2 X-rays: 0.9999999999999999)."""
    checked = 0
    for n in range(1, 31):
        for clusters in range(1, n + 1):
            counted = np.ones(clusters)
            counted[0] += n - clusters
            for correct in (counted.copy(), 0 * counted, counted - (np.arange(clusters) == 0)):
                ci = clustered_proportion_ci(correct, counted, method=method)
                low, p, high = ci.ci_low[0], correct.sum() / n, ci.ci_high[0]
                if np.isnan(low):
                    assert np.isnan(high) and clusters == 1 and n > 1
                    continue
                assert 0.0 <= low <= p <= high <= 1.0, (n, clusters, correct, low, high)
                checked += 1
    assert checked > 400


def _timed(pattern: list[tuple[str, bool, int]]) -> pd.DataFrame:
    """One reader's answers: (X-ray, right, ms)."""
    return pd.DataFrame(
        {
            "rater": "Reader 1",
            "task": "t",
            "case_id": [case for case, _, _ in pattern],
            "answer": ["A" if right else "B" for _, right, _ in pattern],
            "correct_answer": "A",
            "time_ms": [ms for _, _, ms in pattern],
        }
    )


def test_a_quartile_all_right_on_two_xrays_has_its_bound_at_1_and_its_figure_draws():
    # 12 answers, quartiles of 3: the slowest 3 all right, 2 of them on one X-ray.
    pattern = [(f"x{i}", i % 2 == 0, 1000 * (i + 1)) for i in range(9)]
    pattern += [("x9", True, 20000), ("x9", True, 21000), ("x10", True, 22000)]
    frame = _timed(pattern)
    by_time = accuracy_by_time(frame, ["Reader 1"])
    slowest = by_time.iloc[-1]
    assert (slowest["correct"], slowest["n"], slowest["x_rays"]) == (3, 3, 2)
    assert slowest["ci_high"] == 1.0 and slowest["accuracy"] == 1.0
    assert (by_time["ci_low"] <= by_time["accuracy"]).all()
    assert (by_time["accuracy"] <= by_time["ci_high"]).all()
    times = pd.DataFrame(
        [
            {
                "rater": "Reader 1",
                "task": "All",
                "n": 12,
                "median_s": 6,
                "q1_s": 3,
                "q3_s": 10,
                "total_min": 2.0,
            }
        ]
    )
    plots.figure_bytes(plots.time_figure(times, by_time), "svg")


def test_the_figures_draw_a_bound_that_misses_its_estimate_by_rounding():
    """The figures do not rely on every table's bounds being exact: a bound 1e-16 on the
    wrong side of its estimate is drawn as a whisker of 0 (it raised ValueError)."""
    by_time = pd.DataFrame(
        [
            {
                "rater": "Reader 1",
                "time_bin": 1,
                "n": 3,
                "median_s": 4.0,
                "correct": 3,
                "accuracy": 1.0,
                "ci_low": 0.4385,
                "ci_high": 0.9999999999999999,
                "x_rays": 2,
            }
        ]
    )
    times = pd.DataFrame(
        [
            {
                "rater": "Reader 1",
                "task": "All",
                "n": 3,
                "median_s": 4,
                "q1_s": 3,
                "q3_s": 5,
                "total_min": 0.2,
            }
        ]
    )
    plots.figure_bytes(plots.time_figure(times, by_time), "svg")
    accuracy = pd.DataFrame(
        [
            {
                "rater": "Reader 1",
                "task": "All",
                "n": 3,
                "accuracy": 0.0,
                "ci_low": 1e-17,
                "ci_high": 0.56,
            }
        ]
    )
    plots.figure_bytes(plots.accuracy_figure(accuracy), "svg")


def _broken(*args, **kwargs):
    raise ValueError("'yerr' must not contain negative values")


@pytest.mark.django_db
def test_a_figure_that_cannot_be_drawn_is_said_in_words_and_the_rest_comes_out(
    client, answered, pi, db_backend, settings
):
    settings.ANALYSIS_PREPARE_DOWNLOADS = True
    client.force_login(pi)
    with mock.patch.object(plots, "time_figure", _broken):
        page(client, answered)
        run_db_worker()
        job = BackgroundJob.objects.get(study=answered)
        assert job.status == JobStatus.DONE, job.error
        html = unescape(re.sub(r"<[^>]+>", " ", page(client, answered).content.decode()))
        archive = download_zip(client, answered)
        single = client.get(reverse("analysis-figure", args=[answered.slug, "reading_time", "png"]))
    words = "The figure reading_time could not be drawn (ValueError: 'yerr' must not contain"
    assert words in " ".join(html.split())
    names = set(archive.namelist())
    assert not names & {"reading_time.png", "reading_time.svg", "reading_time.pdf"}
    for figure in ("accuracy_by_task", "accuracy_by_category", "kappa_answer"):
        assert {f"{figure}.png", f"{figure}.svg", f"{figure}.pdf"} <= names
    tables = StudyAnalysis(answered, AnalysisSettings()).result.tables()
    assert {f"{name}.csv" for name in tables} <= names
    assert {"report.xlsx", "reading_time.csv", "accuracy_by_time.csv"} <= names
    readme = archive.read("README.txt").decode()
    assert "Figures that could not be drawn (every table is complete without them):" in readme
    assert "  reading_time: could not be drawn (ValueError:" in readme
    assert single.status_code == 500
    assert "could not be drawn" in single.content.decode()


@pytest.mark.django_db
def test_export_analysis_writes_every_table_and_names_a_figure_it_could_not_draw(
    answered, tmp_path
):
    result = StudyAnalysis(answered, AnalysisSettings()).result
    with mock.patch.object(plots, "time_figure", _broken):
        write_files(analysis_files(result), tmp_path)
    written = {p.name for p in tmp_path.iterdir()}
    assert {"accuracy_by_task.png", "kappa_answer.pdf", "reading_time.csv"} <= written
    assert not written & {"reading_time.png", "reading_time.svg", "reading_time.pdf"}
    readme = (tmp_path / "README.txt").read_text()
    assert "  reading_time: could not be drawn (ValueError:" in readme
