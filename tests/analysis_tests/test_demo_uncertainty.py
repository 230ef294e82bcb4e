"""On the demo (2 simulated readers, 3 models, several questions per X-ray): no interval is
shown as 0–100%, 1.0–1.0 or 0–0 without words saying why, the few-readers warning is on the
page, in the API and in the ZIP, and every CSV header line is true of its table."""

from __future__ import annotations

import io
import math
import re
import zipfile

import numpy as np
import pandas as pd
import pytest
from django.urls import reverse
from scipy import stats as sps

from readerstudy.models import Role
from tests.analysis_tests.export_readme import about_tables
from tests.factories import MembershipFactory, UserFactory
from tests.stats_tests.test_uncertainty import Z, wilson

# Their ZIPs are read for tables, README and methods: the figures are built, not saved
# (the figure tests save them).
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("figures_unrendered")]

WORDS = ("caveat", "note", "warning")
INTERVALS = [("ci_low", "ci_high"), ("ci_low_fixed", "ci_high_fixed")]


@pytest.fixture
def demo(demo, client):
    """The session's demo (seeded once, tests/conftest.py), seen by a PI of its own."""
    study = demo
    pi = UserFactory(username="pi-for-test")
    MembershipFactory(study=study, user=pi, role=Role.PI)
    client.force_login(pi)
    return study


def degenerate(low, high) -> bool:
    """An interval a reader would take at face value although it says nothing: 0–0, a
    point (1.0–1.0), or the whole 0–100%."""
    if low is None or high is None or (isinstance(low, float) and math.isnan(low)):
        return False
    return bool(np.isclose(low, high) or (low <= 0 and high >= 1))


def explained(record: dict) -> bool:
    return any(str(record.get(k) or "").strip() for k in WORDS)


def check_records(name: str, records: list[dict]) -> int:
    shown = 0
    for record in records:
        for low, high in INTERVALS:
            if low in record and degenerate(record[low], record.get(high)):
                shown += 1
                assert explained(record), f"{name}: {record}"
    return shown


def test_demo_says_why_wherever_an_interval_is_degenerate(client, demo):
    api = client.get(f"/api/v1/studies/{demo.slug}/analysis/").json()
    for name, records in api.items():
        if isinstance(records, list) and records and isinstance(records[0], dict):
            check_records(f"api {name}", records)
    panel = api["reader_panel"]
    assert "Only 2 readers" in panel["warning"]
    assert all("Only 2 readers" in row["warning"] for row in api["ai_vs_readers"])
    assert api["policy"]["min_readers"] == 4

    archive = zipfile.ZipFile(
        io.BytesIO(client.get(reverse("analysis-zip", args=[demo.slug])).content)
    )
    for name in archive.namelist():
        if name.endswith(".csv") and not name.startswith(("kappa_answer_", "kappa_correct_")):
            frame = pd.read_csv(io.BytesIO(archive.read(name)), keep_default_na=True)
            check_records(f"zip {name}", frame.where(frame.notna(), None).to_dict("records"))
    assert "Only 2 readers" in archive.read("reader_panel.csv").decode()

    html = client.get(reverse("analysis", args=[demo.slug])).content.decode()
    assert "Few readers." in html and "fixed readers" in html
    for row in re.findall(r"<tr>.*?</tr>", html, flags=re.S):
        for bad in ("0.0% – 0.0%", "0.0% – 100.0%", "1.00 – 1.00"):
            if bad in row:
                assert re.search(r'class="caveat">[^<]+<', row), row
    assert "not estimable –" not in html  # a NaN is shown as the reason, not as a range


def _header(archive, name: str) -> list[str]:
    """What README.txt says table `name` rests on, after its name (as the CSV's "#" rows
    used to)."""
    about = about_tables(archive.read("README.txt").decode())
    return [f"table: {name[:-4]}", *about[name[:-4]]]


def test_every_csv_header_line_is_true_of_its_table(client, demo):
    """Each table states its unit and method; the claims are checked against the data."""
    archive = zipfile.ZipFile(
        io.BytesIO(client.get(reverse("analysis-zip", args=[demo.slug])).content)
    )
    csvs = [n for n in archive.namelist() if n.endswith(".csv")]
    responses = pd.read_csv(io.BytesIO(archive.read("responses.csv")))
    questions = pd.read_csv(io.BytesIO(archive.read("questions.csv")))
    resampling = ("bootstrap", "resampled", "jackknife", "case_unit")
    for name in csvs:
        head = _header(archive, name)
        table = name[:-4]
        assert head[0] == f"table: {table}"
        assert head[1].startswith("unit: ") and head[2].startswith("method: ")
        text = "\n".join(head)
        not_resampled = table in (
            "flow",
            "flow_raters",
            "raters",
            "reading_time",
            "failed_extractions",
            "responses",
            "questions",
            "methods",
        ) or table.startswith(("kappa_answer_", "kappa_correct_"))
        if not_resampled:
            assert not any(word in text for word in resampling), name
        if table.startswith("kappa_answer_"):
            assert "A–D answers" in text and "correct / incorrect" not in text
        if table.startswith("kappa_correct_") or table == "kappa_pairs_correct":
            assert "correct / incorrect" in text and "A–D answers" not in text
        if table.startswith("kappa"):
            assert "pairwise deletion" in text
        if table in ("reading_time", "accuracy_by_time", "responses"):
            assert "time_cap_ms: 1800000" in head
        if table == "mcnemar":
            assert "holm_family: ai_vs_reader" in head and "Obuchowski" in text

    # fleiss: "complete cases" is what n counts
    fleiss = pd.read_csv(io.BytesIO(archive.read("fleiss.csv")))
    assert "complete cases" in _header(archive, "fleiss.csv")[1]
    readers = responses[responses["rater_kind"] == "human"]
    analysed = readers[~readers["excluded"].astype(bool) & ~readers["rejected"].astype(bool)]
    complete = analysed.groupby("question_id")["answer"].apply(lambda a: a.notna().all())
    assert fleiss.set_index("task").loc["All", "n"] == complete.sum()

    # accuracy: "Wilson on the effective sample size n/deff" recomputed from responses.csv
    assert "Wilson on the effective sample size" in _header(archive, "accuracy.csv")[2]
    accuracy = pd.read_csv(io.BytesIO(archive.read("accuracy.csv")))
    row = accuracy[(accuracy["rater"] == "MedGemma-demo") & (accuracy["task"] == "All")].iloc[0]
    kept = questions[~questions["excluded"].astype(bool) & ~questions["rejected"].astype(bool)]
    mine = responses[responses["rater"] == "MedGemma-demo"].merge(
        kept[["question_id", "case_id"]], on="question_id"
    )
    mine = mine[mine["presented"].astype(bool)]
    per_xray = mine.groupby("case_id")["correct"].agg(
        y=lambda c: c.fillna(False).astype(bool).sum(), m="size"
    )
    y, m = per_xray["y"].to_numpy(float), per_xray["m"].to_numpy(float)
    c, n = len(y), m.sum()
    p = y.sum() / n
    v = c / (c - 1) * ((y - p * m) ** 2).sum() / n**2
    deff = max(v / (p * (1 - p) / n), 1.0)
    n_star = min(n, n / deff * (Z / sps.t.ppf(0.975, c - 1)) ** 2)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(wilson(p * n_star, n_star))
