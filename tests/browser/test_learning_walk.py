"""Issue 36's acceptance walk on the demo, in Chromium at 1280x720, as its people do it:

- pi1 sets the demo study's results to open when its reading is closed (reader2 still
  waits), then to readers whose reading is final (the results setting, in the browser);
  reader2 (finished) then sees every case with their answer, the key and the explanation, and
  their accuracy per task beside the panel's median (once a third reader has finished: with
  two, `PANEL_MIN_READERS` withholds it and the page says why); reader3 (partway) gets nothing
  of it by page, case page, CSV or API, before and after;
- pi1 builds a practice set of 10 questions from the teaching file in the browser; reader2
  reads it with the keyboard, each answer followed by right or wrong, the key and the
  explanation; "practise my misses" (every day) offers exactly the missed ones once the day
  has passed (the plan's date moved back, as the demo seeds reader5's); the progress page shows
  both sittings; the research study's analysis holds its own answers and no practice answer;
- pi1 exports the residents' progress per task over time as CSV (read back with pandas).

Every number shown is checked against counts made here from the database's Answer rows and
keys. Screenshots (debrief, a practice answer's feedback, the progress page, the programme) go
to artifacts/ (SCREENSHOT_DIR=docs/screenshots writes the docs' copies)."""

from __future__ import annotations

import os
import statistics
import time
from datetime import timedelta
from pathlib import Path

import pandas as pd
import pytest
from django.urls import reverse
from django.utils import timezone

from annotation.models import Answer, ReaderCompletion
from annotation.selectors import item_at, ordered_item_ids
from annotation.services import answer_submit, reader_finish
from readerstudy.demo import TEACHING_DATASET_NAME
from readerstudy.models import Dataset, PracticePlan, ReaderStudy, StudyQuestion, Task
from readerstudy.vocabulary import ResultsVisibility
from tests.browser.helpers import (
    finish_on_review,
    open_results_from_done,
    sign_in,
    wait_for_image,
    wait_seen,
)

pytestmark = [pytest.mark.browser, pytest.mark.engine, pytest.mark.django_db(transaction=True)]

LAPTOP = {"width": 1280, "height": 720}
PRACTICE_SLUG = "walk-practice"
N_PRACTICE = 10
MISSED = (2, 5, 9)  # the practice cases reader2 answers wrong
TASK_LABELS = dict(Task.choices)


def shots() -> Path:
    folder = Path(os.environ.get("SCREENSHOT_DIR") or Path(__file__).parents[2] / "artifacts")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def as_person(page, live_server, username: str) -> None:
    page.context.clear_cookies()
    sign_in(page, live_server, username)


def counted_items(study: ReaderStudy) -> list[StudyQuestion]:
    """The items the default analysis counts: not excluded by a PI, not rejected by an
    expert (counted here from the rows, not by the code under test)."""
    return [
        item
        for item in study.items.select_related("question").order_by("position")
        if not item.excluded and not item.reviews.filter(decision="reject").exists()
    ]


def task_counts(study: ReaderStudy, reader) -> dict[str, tuple[int, int]]:
    """Per task label (and "All"): (right, n) of `reader`, a missing answer counting wrong, each
    answer against the question's imported key (the demo accepts no key change)."""
    chosen = dict(
        Answer.objects.filter(item__study=study, reader=reader).values_list("item_id", "choice")
    )
    out: dict[str, list[int]] = {}
    for item in counted_items(study):
        right = int(chosen.get(item.id, "") == item.question.correct)
        for task in (TASK_LABELS[item.question.task], "All"):
            tally = out.setdefault(task, [0, 0])
            tally[0] += right
            tally[1] += 1
    return {task: (r, n) for task, (r, n) in out.items()}


def accuracy_rows(page) -> dict[str, list[str]]:
    rows = page.eval_on_selector_all(
        "[data-accuracy] tbody tr",
        "rows => rows.map(r => Array.from(r.cells, c => c.innerText.trim()))",
    )
    return {row[0]: row[1:] for row in rows}


def pct0(value: float) -> str:
    return f"{value * 100:.0f}%"


def test_debrief_practice_misses_progress_and_programme_on_the_demo(page, live_server, demo):
    reader2 = demo.memberships.get(user__username="reader2").user
    reader3 = demo.memberships.get(user__username="reader3").user
    assert ReaderCompletion.objects.filter(study=demo, reader=reader2).exists()
    assert not ReaderCompletion.objects.filter(study=demo, reader=reader3).exists()
    assert demo.results_visibility == ResultsVisibility.NEVER  # the default
    page.set_viewport_size(LAPTOP)
    results_url = live_server.url + reverse("reader-results", args=["demo"])
    closed_urls = {
        "page": results_url,
        "case page": live_server.url + reverse("reader-results-case", args=["demo", 1]),
        "CSV": live_server.url + reverse("reader-results-csv", args=["demo"]),
        "API": live_server.url + reverse("api-results", args=["demo"]),
    }
    explanations = [
        e for e in demo.items.values_list("question__explanation", flat=True) if len(e) > 20
    ]

    # Before pi1 allows it, reader2 (finished) gets the study's "never" in words.
    as_person(page, live_server, "reader2")
    assert page.goto(results_url).status == 403
    assert "does not show its readers their results" in page.inner_text("[data-results-closed]")
    assert page.request.get(closed_urls["API"]).status == 403

    # pi1 chooses "when the study's reading is closed": reader2 still waits (reader1 and
    # reader3 are reading); then "once a reader's own reading is final", in the browser.
    for setting in (ResultsVisibility.CLOSED, ResultsVisibility.OWN_FINAL):
        as_person(page, live_server, "pi1")
        page.goto(live_server.url + reverse("pi-results", args=["demo"]))
        page.select_option("select[name=results_visibility]", setting.value)
        page.click("form.form-grid button[type=submit]")
        page.wait_for_selector("text=Results settings saved.")
        demo.refresh_from_db()
        assert demo.results_visibility == setting
        if setting == ResultsVisibility.CLOSED:
            as_person(page, live_server, "reader2")
            assert page.goto(results_url).status == 403
            assert "once the study's reading is closed" in page.inner_text("[data-results-closed]")

    # reader3 (partway) gets nothing: no page, no case, no CSV, no API, and no key text.
    as_person(page, live_server, "reader3")
    for what, url in closed_urls.items():
        response = page.request.get(url)
        body = response.text()
        assert response.status == 403, (what, response.status)
        assert not any(e in body for e in explanations), what
    page.goto(results_url)
    assert "once your reading is final" in page.inner_text("[data-results-closed]")
    page.goto(live_server.url + reverse("my-progress"))
    assert page.locator("[data-sitting='demo']").count() == 0
    practise = page.request.post(
        live_server.url + reverse("reader-practise-misses", args=["demo"]),
        form={"interval_days": "1"},
        headers={"X-CSRFToken": _csrf(page)},
    )
    assert practise.status == 403
    assert not PracticePlan.objects.filter(owner=reader3).exists()

    # reader2 sees every case: their answer, the key, the explanation.
    as_person(page, live_server, "reader2")
    page.goto(results_url)
    order = ordered_item_ids(demo, reader2)
    items = {i.id: i for i in demo.items.select_related("question")}
    chosen = dict(
        Answer.objects.filter(item__study=demo, reader=reader2).values_list("item_id", "choice")
    )
    assert page.locator("[data-case]").count() == len(order) == demo.items.count()
    for number, item_id in enumerate(order, start=1):
        question = items[item_id].question
        article = page.locator(f"[data-case='{number}']")
        rows = article.locator("tr").all_inner_texts()
        key_rows = [r for r in rows if "(key)" in r]
        mine = [r for r in rows if "(your answer)" in r]
        assert [r.split()[0] for r in key_rows] == [question.correct], number
        assert [r.split()[0] for r in mine] == [chosen[item_id]], number
        verdict = "✓ right" if chosen[item_id] == question.correct else "✗ wrong"
        assert verdict in article.locator("p").first.inner_text(), number
        assert article.locator(".feedback-explanation").inner_text() == question.explanation
    # Their accuracy per task, counted here; with two readers the panel's median is withheld
    # (it would give reader3's numbers away) and the page says why.
    counts = task_counts(demo, reader2)
    shown = accuracy_rows(page)
    assert set(shown) == set(counts)
    for task, (right, n) in counts.items():
        assert shown[task][0] == pct0(right / n) and shown[task][2] == f"{right}/{n}", task
        assert shown[task][3] == "2 readers: shown with 3 or more readers", task

    # A third reader finishes (reader1, simulated as the demo simulates its readers): the
    # panel's median now stands beside reader2's accuracy, the median of three counted here.
    reader1 = demo.memberships.get(user__username="reader1").user
    for item in demo.items.select_related("question").order_by("position"):
        wrong = next(x for x in "ABCD" if x != item.question.correct)
        answer_submit(
            reader=reader1,
            item=item,
            choice=item.question.correct if item.position % 3 else wrong,
            time_ms=20_000,
        )
    reader_finish(reader=reader1, study=demo)
    page.reload()
    shown = accuracy_rows(page)
    panel = [task_counts(demo, r) for r in (reader1, reader2, reader3)]
    for task in counts:
        median = statistics.median(c[task][0] / c[task][1] for c in panel)
        assert shown[task][3] == f"{pct0(median)} (3)", task
    page.wait_for_load_state("networkidle")
    page.screenshot(path=str(shots() / "walk36-debrief-1280.png"))
    api = page.request.get(closed_urls["API"])
    assert api.status == 200 and len(api.json()["cases"]) == len(order)

    # reader3 still has nothing (the panel grew; their reading is not final).
    as_person(page, live_server, "reader3")
    for what, url in closed_urls.items():
        assert page.request.get(url).status == 403, what

    # pi1 builds a practice set of 10 from the teaching file, in the browser.
    teaching = Dataset.objects.get(name=TEACHING_DATASET_NAME)
    as_person(page, live_server, "pi1")
    page.goto(live_server.url + reverse("practice-new"))
    page.fill("input[name=title]", "Walk practice: chest X-ray")
    page.fill("input[name=slug]", PRACTICE_SLUG)
    page.select_option("select[name=dataset]", str(teaching.pk))
    page.fill("input[name=sample]", str(N_PRACTICE))
    page.fill("[name=readers]", "reader2")
    page.click("button.primary[type=submit]")
    page.wait_for_selector(f"text=Practice set “Walk practice: chest X-ray” created: {N_PRACTICE}")
    practice = ReaderStudy.objects.get(slug=PRACTICE_SLUG)
    assert practice.practice and practice.items.count() == N_PRACTICE

    # reader2 reads it with the keyboard: right or wrong, the key and the explanation.
    as_person(page, live_server, "reader2")
    page.goto(live_server.url + reverse("reader-case", args=[PRACTICE_SLUG, 1]))
    missed_questions = []
    for number in range(1, N_PRACTICE + 1):
        question = item_at(practice, reader2, number).question
        key = question.correct
        wrong = next(x for x in "ABCD" if x != key)
        choice = wrong if number in MISSED else key
        if number in MISSED:
            missed_questions.append(question.pk)
        wait_seen(page, number)
        assert page.locator("[data-feedback-panel]").count() == 0
        page.keyboard.press(choice.lower())
        page.keyboard.press("Enter")
        page.wait_for_selector(f"#workspace[data-case-number='{number}'][data-feedback]")
        panel_text = page.inner_text("[data-feedback-panel]")
        verdict = page.inner_text(".feedback-verdict")
        if number in MISSED:
            assert verdict == f"✗ Wrong: you chose {wrong}; the key is {key}"
        else:
            assert verdict == f"✓ Right: {key}"
        assert question.explanation and question.explanation in panel_text
        if number == MISSED[0]:
            wait_for_image(page)
            page.screenshot(path=str(shots() / "walk36-practice-feedback-1280.png"))
        wait_seen(page, number)
        page.keyboard.press("Enter")
        if number < N_PRACTICE:
            page.wait_for_selector(f"#workspace[data-case-number='{number + 1}']")
    page.wait_for_url("**/read/review/")
    finish_on_review(page)
    page.wait_for_url("**/read/done/")
    open_results_from_done(page)
    practice_answers = Answer.objects.filter(item__study=practice, reader=reader2)
    assert practice_answers.count() == N_PRACTICE
    assert all(practice_answers.values_list("practice", flat=True))
    counts = task_counts(practice, reader2)
    assert counts["All"] == (N_PRACTICE - len(MISSED), N_PRACTICE)
    shown = accuracy_rows(page)
    for task, (right, n) in counts.items():
        assert shown[task][2] == f"{right}/{n}", task

    # "Practise my misses" every day: offered after the day, not before.
    page.select_option("#interval", "1")
    page.click("[data-practise] button[type=submit]")
    page.wait_for_url("**/#practice")
    plan = PracticePlan.objects.get(owner=reader2, source=practice)
    assert sorted(plan.questions.values_list("pk", flat=True)) == sorted(missed_questions)
    card = page.locator(f"[data-plan='{plan.pk}']")
    assert card.locator("[data-plan-due]").is_visible()
    assert card.locator("[data-plan-start]").count() == 0
    early = page.request.post(
        live_server.url + reverse("practice-plan-start", args=[plan.pk]),
        headers={"X-CSRFToken": _csrf(page)},
    )
    assert early.ok and "comes back on" in early.text()
    assert not ReaderStudy.objects.filter(plan=plan).exists()
    PracticePlan.objects.filter(pk=plan.pk).update(
        created_at=timezone.now() - timedelta(days=1, minutes=5)
    )
    page.reload()
    with page.expect_navigation():
        page.click(f"[data-plan='{plan.pk}'] [data-plan-start]")
    sitting = ReaderStudy.objects.get(plan=plan, sitting=1)
    assert sorted(sitting.items.values_list("question_id", flat=True)) == sorted(missed_questions)
    page.goto(live_server.url + reverse("reader-case", args=[sitting.slug, 1]))
    for number in range(1, len(MISSED) + 1):
        key = item_at(sitting, reader2, number).question.correct
        wait_seen(page, number)
        page.keyboard.press(key.lower())
        page.keyboard.press("Enter")
        page.wait_for_selector(f"#workspace[data-case-number='{number}'][data-feedback]")
        assert page.inner_text(".feedback-verdict") == f"✓ Right: {key}"
        wait_seen(page, number)
        page.keyboard.press("Enter")
        if number < len(MISSED):
            page.wait_for_selector(f"#workspace[data-case-number='{number + 1}']")
    page.wait_for_url("**/read/review/")
    finish_on_review(page)
    page.wait_for_url("**/read/done/")
    page.wait_for_load_state("networkidle")

    # The progress page: both sittings (and the debriefed study), numbers as counted here.
    page.goto(live_server.url + reverse("my-progress"))
    expected = {
        "demo": task_counts(demo, reader2),
        PRACTICE_SLUG: task_counts(practice, reader2),
        sitting.slug: task_counts(sitting, reader2),
    }
    assert expected[sitting.slug]["All"] == (len(MISSED), len(MISSED))
    for slug, tasks in expected.items():
        row = page.locator(f"[data-sitting='{slug}']")
        assert row.count() == 1, slug
        for task, (right, n) in tasks.items():
            cell = row.locator(f"td[data-task='{task}']").inner_text()
            assert f"{right}/{n}" in cell, (slug, task, cell)
    assert "my practice, sitting 1" in page.inner_text(f"[data-sitting='{sitting.slug}']")
    page.screenshot(path=str(shots() / "walk36-progress-1280.png"))

    # The research study's analysis (pi1, by the API) holds every research answer and no
    # practice answer.
    as_person(page, live_server, "pi1")
    analysis = _analysis(page, live_server.url + reverse("api-analysis", args=["demo"]))
    responses = pd.DataFrame(analysis["responses"])
    research = Answer.objects.filter(item__study=demo)
    assert research.filter(practice=True).count() == 0
    human = responses[responses["rater_kind"] == "human"]
    answered = human[human["answer"].fillna("") != ""]
    assert len(answered) == research.exclude(choice="").count()
    practice_questions = Answer.objects.filter(practice=True).values_list(
        "item__question_id", "item__question__source_id"
    )
    practice_ids = {str(x) for pair in practice_questions for x in pair}
    assert practice_ids and not practice_ids & set(responses["question_id"].astype(str))

    # The practice set's own analysis says its answers are practice.
    page.goto(live_server.url + reverse("analysis", args=[PRACTICE_SLUG]))
    assert "describe practice, not a reader study" in page.inner_text("[data-practice]")
    page.wait_for_selector("[data-no-kappa]")  # one rater: no pair to compare

    # pi1 exports the residents' progress per task over time as CSV.
    page.goto(live_server.url + reverse("programme"))
    with page.expect_download() as info:
        page.click(f"a[href='{reverse('programme-csv')}']")
    table = pd.read_csv(info.value.path(), dtype={"finished": str})
    page.screenshot(path=str(shots() / "walk36-programme-1280.png"))
    theirs = table[table["resident"] == "reader2"]
    assert list(theirs["sat_at"]) == sorted(theirs["sat_at"])  # over time, oldest first
    for slug, tasks in expected.items():
        rows = theirs[theirs["study_slug"] == slug].set_index("task")
        assert set(rows.index) == set(tasks), slug
        for task, (right, n) in tasks.items():
            assert (rows.loc[task, "correct"], rows.loc[task, "n"]) == (right, n), (slug, task)
            assert abs(rows.loc[task, "accuracy"] - right / n) < 5e-5
    # reader3 is partway: their sitting is there, not finished, counted as the analysis does.
    partway = table[(table["resident"] == "reader3") & (table["study_slug"] == "demo")]
    assert set(partway["finished"]) == {"False"}
    all3 = partway.set_index("task").loc["All"]
    assert (all3["correct"], all3["n"]) == task_counts(demo, reader3)["All"]


def _csrf(page) -> str:
    return next(c["value"] for c in page.context.cookies() if c["name"] == "csrftoken")


def _analysis(page, url: str) -> dict:
    """The analysis by the API with its responses, waiting while a worker prepares it."""
    deadline = time.monotonic() + 120
    while True:
        response = page.request.get(url + "?responses=true")
        if response.status == 200:
            return response.json()
        assert response.status == 202 and time.monotonic() < deadline, response.text()[:300]
        time.sleep(0.5)
