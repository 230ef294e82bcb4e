"""Issue 32's walk-through on the demo, as a PI who publishes as results come out: pi1 creates a
two-arm crossover (unaided / aided by the demo MedGemma, washout 0) in the browser with three new
readers and makes expert1 its expert; the PI opens the analysis and downloads the ZIP from the
page's link before anyone reads, with one arm half read (one reader partway through session 1),
with one reader finished both sessions and with everyone finished; expert1 rejects a question
with the keyboard, and from then on the PI looks with expert-rejected questions left out and
included (the policy form).

At every point: no job failed (analysis page, dashboard), every figure on the page is drawn (its
picture loads; none said to have failed), the ZIP downloads and opens, every CSV in it opens in
pandas, every interval lies in its range, the per-arm accuracy (page and CSV) equals a count made
here from the Answer rows (correct = the answer is the question's key; only readers who have
read that arm), `responses.csv` holds both arms' answers with their arm and session, and
`methods.md` describes the crossover.

The analysis and its downloads are prepared by the task the page asks for (ANALYSIS_PREPARE_
DOWNLOADS on, as in production); the tests' TASKS_URL=immediate:// runs it inline, so a page
that asks finds it done. At each point the whole analysis page goes to artifacts/full-*.png
with the ZIP, and its "Aided against unaided" section in view to artifacts/ (SCREENSHOT_DIR=
docs/screenshots writes the README's)."""

from __future__ import annotations

import io
import math
import os
import time
import zipfile
from pathlib import Path

import pandas as pd
import pytest
from django.urls import reverse

from analysis.selectors import study_raters
from annotation.models import Answer, ExpertReview
from readerstudy.models import Question, ReaderAssignment, ReaderStudy, StudyQuestion
from tests.browser.conftest import ARTIFACTS
from tests.browser.helpers import (
    create_crossover,
    press_on_autofocus,
    sign_in,
    wait_image_loaded,
    wait_seen,
)
from tests.factories import UserFactory

# Not `engine`: the numbers it checks are the analysis's, which the simulated-study and design
# tests check on PostgreSQL below the browser; a second engine would only repeat the walk.
pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SLUG = "publish-walk"
SAMPLE = 5  # one question per task of the demo (the form stratifies by task)
READERS = ("pub1", "pub2", "pub3")  # people who read nothing else of the demo's X-rays
PARTWAY = 2  # cases the first reader answers in session 1 before the PI looks
PANEL = "Panel (mean of readers)"
ARMS = ("unaided", "aided")


def shots() -> Path:
    folder = Path(os.environ.get("SCREENSHOT_DIR") or ARTIFACTS)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


# --- the people ------------------------------------------------------------------------------


def create_study(page, live_server, demo) -> ReaderStudy:
    sentence = create_crossover(
        page,
        live_server,
        demo,
        slug=SLUG,
        title="Publish as it comes",
        sample=SAMPLE,
        readers=READERS,
    )
    assert "Crossover, 2 arms" in sentence
    # expert1 joins as the study's expert, from the dashboard's member form.
    page.fill("input[name=username]:visible", "expert1")
    page.select_option("select[name=role]", "expert")
    page.click("button:has-text('Add member')")
    page.wait_for_selector("text=Added expert1 as expert.")
    return ReaderStudy.objects.get(slug=SLUG)


def read(page, live_server, skill, session: int, start: int = 1, upto: int = SAMPLE) -> str:
    """Read cases `start`..`upto` of the reader's current session with the keyboard (and finish
    the session when that is all of them), answering the key where `skill(arm, number)` says
    so and another option elsewhere; return the arm the page said the session was in."""
    page.goto(live_server.url + reverse("reader-start", args=[SLUG]))
    banner = page.wait_for_selector(f"text=Session {session} of 2")
    arm = "aided" if "aided by AI" in banner.inner_text() else "unaided"
    if start == 1:
        press_on_autofocus(page)  # past the instructions
    for number in range(start, upto + 1):
        page.wait_for_selector(f"text=Case {number} of {SAMPLE}")
        wait_seen(page, number)
        page.keyboard.press(option_key(page, right=skill(arm, number)))
        page.keyboard.press("Enter")
    if upto < SAMPLE:  # left partway, every answer given so far saved
        page.wait_for_selector(f"#save-status:has-text('Saved — case {upto}')")
        page.goto(f"{live_server.url}/")
        page.wait_for_load_state("networkidle")
        return arm
    page.wait_for_url(f"**{reverse('reader-review', args=[SLUG])}")
    page.wait_for_selector(f"text=All {SAMPLE} cases are answered")
    page.check("input[name=confirm]")
    page.click("[data-final-submit]")
    page.wait_for_url(f"**{reverse('reader-done', args=[SLUG])}")
    if session == 1:  # washout 0: the second session opens at once
        page.wait_for_selector("[data-next-session]")
    page.wait_for_load_state("networkidle")
    return arm


def option_key(page, right: bool) -> str:
    """The shortcut of the key's option (or of another one), the key found in the database
    from the question and options on screen (the options are not shuffled)."""
    text = page.inner_text("#answer-form legend.question").strip()
    shown = page.eval_on_selector_all(  # "A. Round and well circumscribed"
        "#answer-form label.option span",
        "spans => spans.map(s => s.innerText.trim().replace(/^[A-D]\\.\\s*/, ''))",
    )
    keys = {
        q.correct
        for q in Question.objects.filter(text=text)
        if [q.option_a, q.option_b, q.option_c, q.option_d] == shown
    }
    assert len(keys) == 1, (text, shown, keys)
    letter = keys.pop()
    which = f"[value={letter}]" if right else f":not([value={letter}])"
    return page.locator(f"#answer-form label.option:has(input{which}) kbd").first.inner_text()


def skill_of(index: int):
    """A reader's answers: right on most cases, more often aided, each reader differently."""
    return lambda arm, number: (number + index) % (5 if arm == "aided" else 3) != 0


def expert_rejects_one(page, live_server) -> StudyQuestion:
    """expert1 opens the first question of the study's review queue and rejects it with the
    keyboard: image does not match (x), difficulty (d), reject (r), save (Enter)."""
    page.goto(live_server.url + reverse("expert-queue", args=[SLUG]))
    page.locator("table.queue tbody tr a").first.click()
    page.wait_for_selector("text=✓ correct")
    page.wait_for_selector("#workspace[data-next-ready]")
    item_id = int(page.url.rstrip("/").rsplit("/", 1)[1])
    for key in ("x", "d", "r", "Enter"):
        page.keyboard.press(key)
    page.wait_for_url(lambda url: not url.rstrip("/").endswith(f"/{item_id}"))
    page.wait_for_load_state("networkidle")
    review = ExpertReview.objects.get(item_id=item_id, expert__username="expert1")
    assert review.decision == "reject"
    return StudyQuestion.objects.get(pk=item_id)


# --- what the PI sees --------------------------------------------------------------------------


def no_error_on_page(page) -> None:
    errors = page.locator("#job-status .error, #arms .error")
    assert errors.count() == 0, errors.first.inner_text()


def no_failed_job(page, live_server) -> None:
    page.goto(live_server.url + reverse("pi-dashboard", args=[SLUG]))
    failed = [
        row
        for row in page.eval_on_selector_all(
            "#jobs tbody tr", "rows => rows.map(r => r.innerText.replace(/\\s+/g, ' '))"
        )
        if "Failed" in row
    ]
    assert not failed, f"{len(failed)} failed job(s), the first: {failed[0]}"


def figures_drawn(page, study) -> None:
    """Every figure on the analysis page shows its picture (drawn by the worker; none left
    pending, none said to have failed), and once readers have answered there are some."""
    page.wait_for_selector(
        "figure.chart.pending, figure[hx-get*=figure-slot]", state="detached", timeout=120_000
    )
    failed = page.locator("[data-figure-failed], figure.chart.failed")
    assert failed.count() == 0, failed.first.inner_text()
    figures = page.locator("figure.chart")
    if Answer.objects.filter(item__study=study).exclude(choice="").exists():
        assert figures.count() >= 4, f"{figures.count()} figure(s) on the page"
    for index in range(figures.count()):
        figure = figures.nth(index)
        text = figure.inner_text()
        assert "fail" not in text.lower() and "could not" not in text.lower(), text
        image = figure.locator("img, svg").first
        assert image.count() == 1, f"a figure without a picture: {text}"
        image.scroll_into_view_if_needed()
        wait_image_loaded(image, timeout=60_000)


def download_zip(page, keep: Path) -> zipfile.ZipFile:
    """The ZIP from the page's link, as a person would get it: at once when the worker has
    prepared it, else through its progress page; a failure said there is the test's failure."""
    got = []
    page.once("download", lambda download: got.append(download))
    link = page.locator("p.downloads a:text-is('ZIP')")
    assert link.count() == 1, "no ZIP link on the analysis page"
    link.click()
    deadline = time.monotonic() + 120
    while not got:
        error = page.locator(".error")
        if error.count():
            raise AssertionError(f"no ZIP: {error.first.inner_text()}")
        assert time.monotonic() < deadline, f"no ZIP after 120 s: {page.inner_text('main')}"
        page.wait_for_timeout(250)
    got[0].save_as(keep)  # kept for a look after a failure
    archive = zipfile.ZipFile(io.BytesIO(keep.read_bytes()))
    assert archive.testzip() is None
    return archive


def csv_tables(archive: zipfile.ZipFile, findings) -> dict[str, pd.DataFrame]:
    """Every CSV of the ZIP, as pandas reads it (one pandas cannot read is a finding)."""
    tables = {}
    for name in archive.namelist():
        if name.endswith(".csv"):
            frame = findings.check(f"{name} in pandas", pd.read_csv, io.BytesIO(archive.read(name)))
            if frame is not None:
                tables[name] = frame
    return tables


def intervals_in_range(tables: dict[str, pd.DataFrame]) -> None:
    """Every interval in its range and low <= high: a proportion's (accuracy, a rate, a mean
    accuracy) in [0, 1]; a difference's or a kappa's in [-1, 1], or, past it, the row's note
    says so in words. The untransformed OR/Hillis bounds kept beside a transformed interval
    (`*_untransformed`) are what the R packages give and are not an interval shown as such."""
    problems = []
    for name, frame in tables.items():
        for low in [c for c in frame.columns if "ci_low" in c and "untransformed" not in c]:
            high = low.replace("ci_low", "ci_high")
            if high not in frame.columns:
                continue
            both = frame[[low, high]].apply(pd.to_numeric, errors="coerce")
            if (both[low] > both[high]).any():
                problems.append(f"{name}: {low} > {high}")
            if _difference(name, frame, low):
                outside = (both[low] < -1) | (both[high] > 1)
                notes = frame["note"] if "note" in frame.columns else pd.Series("", frame.index)
                said = notes.astype(str).where(notes.notna(), "").str.contains("range")
                bad = both[outside & ~said]
                if len(bad):
                    problems.append(
                        f"{name}: {low}/{high} past -1 or 1 with no word of it: "
                        f"{bad.round(4).values.tolist()}"
                    )
            else:
                bad = both[(both[low] < 0) | (both[high] > 1)]
                if len(bad):
                    problems.append(
                        f"{name}: {low}/{high} outside [0, 1]: {bad.round(4).values.tolist()}"
                    )
    assert not problems, "; ".join(problems)


def _difference(name: str, frame: pd.DataFrame, low: str) -> bool:
    """The interval `low` is around a difference or a kappa (range -1 to 1), not around a
    proportion: by its own name (`<estimate>_ci_low`) or by the table's estimate."""
    estimate = low.split("ci_low")[0].rstrip("_")
    if estimate:
        return any(word in estimate for word in ("change", "contrast", "minus", "difference"))
    return "difference" in frame.columns or "kappa" in frame.columns


# --- the independent counts --------------------------------------------------------------------


def analysed_items(study: ReaderStudy, rejected: str) -> list[StudyQuestion]:
    items = StudyQuestion.objects.filter(study=study, excluded=False).select_related("question")
    if rejected == "drop":
        items = items.exclude(reviews__decision="reject")
    return list(items)


def expected_arm_accuracy(study: ReaderStudy, rejected: str) -> dict:
    """{(arm, task, reader name): (n, correct, accuracy)} counted from the Answer rows: every
    analysed question counts (missing answers as wrong, the default policy); only readers with
    an answer in the arm; the panel is the mean of its readers' accuracies."""
    items = analysed_items(study, rejected)
    names = {r.source: r.name for r in study_raters(study) if r.kind == "human"}
    task_of = {item.pk: item.question.get_task_display() for item in items}
    key_of = {item.pk: item.question.correct for item in items}
    expected = {}
    for arm in ARMS:
        answers = Answer.objects.filter(item__study=study, arm=arm).exclude(choice="")
        readers = sorted(set(answers.values_list("reader__username", flat=True)))
        for task in ["All", *sorted(set(task_of.values()))]:
            counted = [pk for pk in key_of if task in ("All", task_of[pk])]
            rates = []
            for username in readers:
                mine = dict(
                    answers.filter(reader__username=username, item_id__in=counted).values_list(
                        "item_id", "choice"
                    )
                )
                right = sum(mine[pk] == key_of[pk] for pk in mine)
                expected[(arm, task, names[username])] = (len(counted), right, right / len(counted))
                rates.append(right / len(counted))
            if readers:
                right = sum(expected[(arm, task, names[u])][1] for u in readers)
                mean = sum(rates) / len(rates)
                expected[(arm, task, PANEL)] = (len(counted) * len(readers), right, mean)
    return expected


def _counts(expected: dict) -> dict:
    return {key: value[:2] for key, value in expected.items()}


def _differences(shown: dict, expected: dict) -> str:
    keys = sorted(set(shown) | set(expected))
    return "; ".join(
        f"{key}: shown {shown.get(key, 'no row')}, counted {expected.get(key, 'no row')}"
        for key in keys
        if shown.get(key) != expected.get(key)
    )


def arm_accuracy_shown(page, study, rejected: str) -> None:
    """The page's per-arm table (its first five columns: arm, task, reader, n, correct) is the
    count; a row of no question counted (a panel of no reader yet) claims nothing."""
    expected = _counts(expected_arm_accuracy(study, rejected))
    rows = page.eval_on_selector_all(
        "[data-design-table=arm_accuracy] tbody tr",
        "rows => rows.map(r => Array.from(r.cells, c => c.innerText.trim()).slice(0, 5))",
    )
    shown = {
        (arm, task, reader): (int(n), int(right))
        for arm, task, reader, n, right in rows
        if (n, right) != ("0", "0")
    }
    assert shown == expected, _differences(shown, expected)


def arm_accuracy_written(tables: dict, study, rejected: str) -> None:
    expected = expected_arm_accuracy(study, rejected)
    found = _named(tables, "arm_accuracy")
    if not expected and found is None:
        return  # nobody has read yet: no per-arm table
    assert found is not None, sorted(tables)
    nothing = (found["n"] == 0) & found["accuracy"].isna()  # a panel of no reader yet
    found = found[~nothing]
    written = {(r.arm, r.task, r.reader): (int(r.n), int(r.correct)) for r in found.itertuples()}
    assert written == _counts(expected), _differences(written, _counts(expected))
    for (arm, task, reader), (_, _, accuracy) in expected.items():
        row = found[(found.arm == arm) & (found.task == task) & (found.reader == reader)]
        assert math.isclose(float(row.accuracy.iloc[0]), accuracy, abs_tol=1e-9), (
            f"{arm}, {task}, {reader}: accuracy {float(row.accuracy.iloc[0]):.4f}, "
            f"counted {accuracy:.4f}"
        )


def _named(tables: dict, stem: str) -> pd.DataFrame | None:
    found = [frame for name, frame in tables.items() if name.rsplit("/", 1)[-1] == f"{stem}.csv"]
    assert len(found) <= 1, (stem, sorted(tables))
    return found[0] if found else None


def responses_written(tables: dict, study) -> None:
    """Once the aided arm has answers, responses.csv holds every answer of both arms, each
    with its arm and session."""
    responses = _named(tables, "responses")
    assert responses is not None, sorted(tables)
    answered = Answer.objects.filter(item__study=study).exclude(choice="")
    if not answered.filter(arm="aided").exists():
        return
    missing = [c for c in ("arm", "session") if c not in responses.columns]
    assert not missing, f"no {', '.join(missing)} column (columns: {list(responses.columns)})"
    answer = "answer" if "answer" in responses.columns else "choice"
    given = responses[responses[answer].notna() & (responses[answer].astype(str) != "")]
    for arm in ARMS:
        for session in (1, 2):
            in_db = answered.filter(arm=arm, session=session).count()
            written = int(((given["arm"] == arm) & (given["session"] == session)).sum())
            assert written == in_db, f"{arm}, session {session}: {written} rows, {in_db} answers"


def methods_written(archive: zipfile.ZipFile) -> None:
    methods = [n for n in archive.namelist() if n.rsplit("/", 1)[-1] == "methods.md"]
    assert len(methods) == 1, archive.namelist()
    assert "crossover" in archive.read(methods[0]).decode().lower(), "no word of the crossover"


# --- the walk ----------------------------------------------------------------------------------


class Findings:
    """What is wrong, by point and policy: a walk reports every problem it meets, not only the
    first (the test fails at its end when there is any)."""

    def __init__(self) -> None:
        self.found: list[str] = []
        self.where = ""

    def check(self, what: str, check, *args) -> object:
        try:
            return check(*args)
        except AssertionError as exc:  # its message, without pytest's rewritten expression
            said = str(exc).split("\nassert ")[0]
            self.found.append(f"[{self.where}] {what}: {said}")
        except Exception as exc:  # a crash in a check is a finding too, with its type
            self.found.append(f"[{self.where}] {what}: {type(exc).__name__}: {exc}")
        return None


def look(page, live_server, study, findings: Findings, point: str, rejected: str) -> None:
    """The PI's look at one point under one policy: the page, its figures, the ZIP and every
    table in it, the dashboard's jobs."""
    findings.where = f"{point}, expert-rejected {'left out' if rejected == 'drop' else 'kept'}"
    page.goto(live_server.url + reverse("analysis", args=[SLUG]))
    if rejected != "drop":  # through the policy form, as the PI would
        page.select_option("select[name=rejected]", rejected)
        page.click("form.settings-form button:has-text('Apply')")
        page.wait_for_url(f"**rejected={rejected}**")
    findings.check("the analysis job", no_error_on_page, page)
    findings.check("figures", figures_drawn, page, study)
    name = f"publish-walk-{point}-{rejected}.png"
    page.screenshot(path=str(ARTIFACTS / f"full-{name}"), full_page=True)  # to look at
    page.evaluate("document.querySelector('#arms').scrollIntoView()")
    page.screenshot(path=str(shots() / name))  # aided against unaided, as the PI sees it
    findings.check("per-arm accuracy on the page", arm_accuracy_shown, page, study, rejected)
    keep = ARTIFACTS / f"publish-walk-{point}-{rejected}.zip"
    archive = findings.check("the ZIP", download_zip, page, keep)
    if archive is not None:
        tables = csv_tables(archive, findings)
        findings.check("intervals", intervals_in_range, tables)
        findings.check("arm_accuracy.csv", arm_accuracy_written, tables, study, rejected)
        findings.check("responses.csv", responses_written, tables, study)
        findings.check("methods.md", methods_written, archive)
    findings.check("the dashboard's jobs", no_failed_job, page, live_server)


def test_a_pi_publishes_a_crossover_as_it_is_read(page, live_server, demo, new_context, settings):
    settings.ANALYSIS_PREPARE_DOWNLOADS = True  # the worker prepares figures and ZIP, as deployed
    for username in READERS:
        UserFactory(username=username)
    sign_in(page, live_server, "pi1")
    study = create_study(page, live_server, demo)
    first_arm = dict(
        ReaderAssignment.objects.filter(study=study).values_list("reader__username", "first_arm")
    )
    readers = {}
    for username in READERS:
        readers[username] = new_context().new_page()
        sign_in(readers[username], live_server, username)
    findings = Findings()
    ARTIFACTS.mkdir(exist_ok=True)

    look(page, live_server, study, findings, "1-before-reading", "drop")

    expert = new_context().new_page()
    sign_in(expert, live_server, "expert1")
    rejected = expert_rejects_one(expert, live_server)
    assert rejected.study_id == study.pk

    first = READERS[0]
    skills = {username: skill_of(index) for index, username in enumerate(READERS)}
    assert read(readers[first], live_server, skills[first], 1, upto=PARTWAY) == first_arm[first]
    for policy in ("drop", "keep"):
        look(page, live_server, study, findings, "2-one-arm-half-read", policy)

    read(readers[first], live_server, skills[first], 1, start=PARTWAY + 1)
    read(readers[first], live_server, skills[first], 2)
    for policy in ("drop", "keep"):
        look(page, live_server, study, findings, "3-one-reader-finished", policy)

    for username in READERS[1:]:
        read(readers[username], live_server, skills[username], 1)
        read(readers[username], live_server, skills[username], 2)
    assert Answer.objects.filter(item__study=study).exclude(choice="").count() == 3 * 2 * SAMPLE
    for policy in ("drop", "keep"):
        look(page, live_server, study, findings, "4-all-finished", policy)

    assert not findings.found, "\n".join(findings.found)
