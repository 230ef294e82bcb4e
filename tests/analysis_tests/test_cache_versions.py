"""The analysis cache needs no hand-kept version (issue 21): its keys follow the analysis code
and the results page's templates, so a deploy that changes either never serves old output."""

import shutil
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.urls import reverse

from analysis import cache
from tests.analysis_tests import test_analysis_pages

pytestmark = pytest.mark.django_db

ANALYSIS = Path(cache.__file__).resolve().parent
analysed_study = test_analysis_pages.analysed_study  # the same fixture


def test_the_code_version_is_the_analysis_source(tmp_path):
    copy = tmp_path / "analysis"
    shutil.copytree(ANALYSIS, copy, ignore=shutil.ignore_patterns("__pycache__"))
    assert cache.source_version(copy, "*.py") == cache.CODE_VERSION
    statistics = copy / "stats" / "kappa.py"
    statistics.write_text(statistics.read_text() + "\n# a changed statistic\n")
    assert cache.source_version(copy, "*.py") != cache.CODE_VERSION


def test_the_data_version_changes_with_the_code(analysed_study, monkeypatch):
    before = cache.data_version(analysed_study)
    assert cache.data_version(analysed_study) == before
    monkeypatch.setattr(cache, "CODE_VERSION", "another-build")
    assert cache.data_version(analysed_study) != before


def test_an_edited_template_shows_after_a_restart_with_a_shared_cache(
    client, pi, analysed_study, settings, tmp_path
):
    templates = tmp_path / "templates"
    shutil.copytree(Path(django_settings.BASE_DIR) / "templates", templates)
    settings.TEMPLATES = [{**settings.TEMPLATES[0], "DIRS": [templates]}]
    url = reverse("analysis", args=[analysed_study.slug])
    client.force_login(pi)
    cache.cached_template_version.cache_clear()
    assert "Download:" in client.get(url).content.decode()
    figure = templates / "analysis" / "_figure.html"  # included by the cached fragment
    figure.write_text(figure.read_text().replace("Download:", "Save as:"))
    # A new process after the deploy: fresh template engines, the cache shared and kept.
    settings.TEMPLATES = [{**settings.TEMPLATES[0], "DIRS": [templates]}]
    cache.cached_template_version.cache_clear()
    html = client.get(url).content.decode()
    assert "Save as:" in html and "Download:" not in html
    cache.cached_template_version.cache_clear()
