"""The analysis page (issue 34): contents linking to every section, and the XLSX report
reachable from the page, not only inside the ZIP, with the ZIP's permissions."""

import io
import re
import zipfile

import pandas as pd
import pytest
from django.urls import reverse

from analysis.page_contents import contents_tree, page_contents
from readerstudy.platform.spreadsheets import XLSX
from tests.analysis_tests.test_analysis_downloads import run_db_worker

pytestmark = pytest.mark.django_db


def test_the_contents_link_every_section_of_the_page_in_order(client, answered, pi):
    client.force_login(pi)
    html = client.get(reverse("analysis", args=[answered.slug])).content.decode()
    nav = re.search(r'<nav class="card page-contents".*?</nav>', html, re.S).group(0)
    linked = re.findall(r'href="#([^"]+)"', nav)
    sections = re.findall(r'<section id="([^"]+)"', html)
    assert linked == sections
    assert {"flow", "accuracy", "agreement", "methods", "time", "predictions", "names"} <= set(
        linked
    )
    titles = dict(re.findall(r'href="#([^"]+)">([^<]+)</a>', nav))
    assert titles["accuracy"] == "Accuracy by task"
    assert titles["names"] == "Names in figures and tables"


def test_page_contents_nest_a_section_within_another_under_its_first_heading():
    html = (
        '<section id="a"><h2>First</h2><h3>not a section</h3>'
        '<section id="b"><h3>Inner <em>one</em></h3></section></section>'
        '<section id="c"><h2>Last</h2></section><section><h2>no id</h2></section>'
    )
    entries = page_contents(html)
    assert [(e.id, e.title, e.depth) for e in entries] == [
        ("a", "First", 0),
        ("b", "Inner one", 1),
        ("c", "Last", 0),
    ]
    tree = contents_tree(entries)
    assert [(t["id"], [c["id"] for c in t["children"]]) for t in tree] == [("a", ["b"]), ("c", [])]


def test_the_xlsx_report_downloads_from_the_page_as_the_zips_own(
    client, answered, pi, reader, outsider
):
    client.force_login(pi)
    html = client.get(reverse("analysis", args=[answered.slug])).content.decode()
    link = re.search(r'<a href="([^"]+)" data-report-xlsx>XLSX report</a>', html).group(1)
    response = client.get(link.replace("&amp;", "&"))
    assert response.status_code == 200
    assert response["Content-Type"] == XLSX
    disposition = response["Content-Disposition"]
    assert re.search(rf'filename="{answered.slug}-report-v[0-9a-f]+-[0-9-]+\.xlsx"', disposition)
    sheets = pd.read_excel(io.BytesIO(response.content), sheet_name=None)
    assert {"settings", "about", "accuracy", "responses"} <= set(sheets)
    archive = zipfile.ZipFile(
        io.BytesIO(client.get(reverse("analysis-zip", args=[answered.slug])).content)
    )
    assert archive.read("report.xlsx") == response.content
    for person in (reader, outsider):  # as the ZIP: PIs of the study only
        client.force_login(person)
        zip_status = client.get(reverse("analysis-zip", args=[answered.slug])).status_code
        report_status = client.get(reverse("analysis-report", args=[answered.slug])).status_code
        assert report_status == zip_status == 404


def test_the_xlsx_report_asked_before_it_is_ready_downloads_when_the_worker_is_done(
    client, answered, pi, db_backend, settings
):
    settings.ANALYSIS_PREPARE_DOWNLOADS = True
    client.force_login(pi)
    waiting = client.get(reverse("analysis-report", args=[answered.slug]))
    assert waiting.status_code == 202
    assert b"Preparing the XLSX report" in waiting.content
    poll = re.search(rb'hx-get="([^"]+want=report[^"]*)"', waiting.content).group(1)
    run_db_worker()
    done = client.get(poll.decode().replace("&amp;", "&"))
    assert done.status_code == 204
    assert reverse("analysis-report", args=[answered.slug]) in done["HX-Redirect"]
    report = client.get(done["HX-Redirect"])
    assert report.status_code == 200
    assert "accuracy" in pd.read_excel(io.BytesIO(report.content), sheet_name=None)
