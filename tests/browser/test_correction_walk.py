"""Issue 35 on the demo, at 1280x720: the mis-keyed question (key A; both simulated readers and
the three models chose B) is first in expert1's queue; expert1 proposes "wrong key, B" with
the keyboard alone; pi1 (also an expert) reviews it, sees the proposal, and accepts it with
`a` on its page: the question is at version 2, keyed B, and reader1's pages show none of it."""

from __future__ import annotations

import io
import json
import math
from pathlib import Path

import pandas as pd
import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse
from django.utils import timezone
from playwright.sync_api import expect

from analysis.selectors import study_raters
from annotation.correction_models import Correction
from annotation.models import Answer, ExpertReview
from annotation.selectors import ordered_item_ids, screen_letters, to_screen
from annotation.sessions import reading_of
from readerstudy.blinding import results_open_studies
from readerstudy.demo import MISKEYED, MISKEYED_RIGHT
from readerstudy.keys import question_key
from readerstudy.models import BackgroundJob, JobKind, JobStatus
from readerstudy.predictions.models import Prediction
from readerstudy.vocabulary import KeyPolicy, ProposalStatus
from tests.browser.conftest import ARTIFACTS
from tests.browser.helpers import press_on_autofocus, sign_in, wait_for_image, wait_seen
from tests.browser.test_expert_triage_browser import SCREEN, Keyboard
from tests.browser.test_publish_walk import download_zip, shots

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _open_question(page, live_server, demo, item) -> None:
    page.goto(live_server.url + reverse("expert-review", args=[demo.slug, item.id]))
    page.locator("#evidence table.evidence-shares").wait_for()
    wait_for_image(page)
    # The next question is fetched ahead: keys wait for it, so the save does not race it.
    page.wait_for_selector("#workspace[data-next-ready]")


def _propose_wrong_key_b(page) -> Keyboard:
    keys = Keyboard(page)
    keys.press("v")  # Revise: the proposed correction opens with the focus
    expect(page.locator("#correction")).to_be_focused()
    keys.press("b")  # the new key; "wrong key" follows from it
    return keys


def test_expert1_proposes_wrong_key_b_by_keyboard_and_pi1_accepts(
    page, live_server, demo, artifacts
):
    page.set_viewport_size(SCREEN)
    item = demo.items.get(question__source_id=MISKEYED)
    sign_in(page, live_server, "expert1")
    page.goto(live_server.url + reverse("expert-queue", args=[demo.slug]))
    top = page.locator("table.queue tbody tr").first
    assert "5 of 5 raters chose B, 0 the key A" in top.inner_text()
    _open_question(page, live_server, demo, item)

    keys = _propose_wrong_key_b(page)
    assert page.locator("input[name=fix-error_type][value=wrong_key]").is_checked()
    assert page.locator("input[name=fix-correct][value=B]").is_checked()
    page.screenshot(path=str(artifacts / "expert-correction.png"))
    keys.press("Escape")  # back to the review keys
    keys.press("d")  # what was judged: the difficulty (ratings stay not rated)
    keys.press("Enter")  # save, and open the next question
    page.wait_for_url(lambda url: not url.rstrip("/").endswith(f"/{item.id}"))
    assert len(keys.presses) <= 5, keys.presses
    proposal = Correction.objects.get(item=item)
    assert (proposal.proposer.username, proposal.error_type, proposal.changes) == (
        "expert1",
        "wrong_key",
        {"correct": "B", "accepted": "B"},
    )
    assert ExpertReview.objects.get(item=item, expert__username="expert1").decision == "revise"
    # The ? help names the correction's keys.
    page.keyboard.press("?")
    help_text = page.locator("#help").inner_text()
    assert "the new key" in help_text and "also correct" in help_text
    page.screenshot(path=str(artifacts / "expert-help.png"))

    # pi1 is an expert of the demo too: a colleague's proposal shows once pi1 has reviewed.
    page.context.clear_cookies()
    sign_in(page, live_server, "pi1")
    _open_question(page, live_server, demo, item)
    assert page.locator("[data-proposals-hidden]").is_visible()
    keys = _propose_wrong_key_b(page)  # the same correction: a vote for expert1's
    for key in ("Escape", "d", "Enter"):
        keys.press(key)
    page.wait_for_url(lambda url: not url.rstrip("/").endswith(f"/{item.id}"))
    page.goto(live_server.url + reverse("correction", args=[demo.slug, proposal.pk]))
    assert "Agree: expert1, pi1" in page.inner_text("body")
    page.screenshot(path=str(artifacts / "pi-proposal.png"))
    page.keyboard.press("a")  # Accept as the key
    page.wait_for_selector("text=is now at version 2")
    proposal.refresh_from_db()
    assert proposal.status == ProposalStatus.ACCEPTED and proposal.decided_by.username == "pi1"
    assert question_key(item.question).key == "B"
    assert question_key(item.question, policy=KeyPolicy.ORIGINAL).key == "A"
    page.goto(live_server.url + reverse("expert-review", args=[demo.slug, item.id]))
    assert "Key as adjudicated: B" in page.inner_text("body")
    page.goto(live_server.url + reverse("corrections", args=[demo.slug]))
    page.screenshot(path=str(artifacts / "corrections.png"), full_page=True)

    # reader1 (reading the demo, not final): the API and the reading pages show none of it.
    page.context.clear_cookies()
    sign_in(page, live_server, "reader1")
    for url in (
        f"/api/v1/studies/{demo.slug}/cases/",
        reverse("expert-review", args=[demo.slug, item.id]),
        reverse("corrections", args=[demo.slug]),
        f"/api/v1/studies/{demo.slug}/corrections/",
    ):
        body = page.request.get(live_server.url + url).text()
        assert "wrong_key" not in body and "Wrong key" not in body and "version 2" not in body
        assert "Report: mid" not in body


# --- issue 35's first acceptance point, end to end -----------------------------------------------

# What a reader whose reading is not final may not meet anywhere: a proposal, a correction, a key
# version, the adjudicated key or the explanation that gives the key away.
HIDDEN = (
    "wrong_key",
    "wrong key",
    "adjudicat",
    "propos",
    "correction",
    "version 2",
    '"version": 2',
    "key changes",
    "re-keyed",
    "accepted_answers",
    "correct_answer",
)


def _read_up_to_the_miskeyed(page, live_server, demo, reader) -> int:
    """reader1 reads the demo with the keyboard up to and including the mis-keyed question,
    choosing B there (as the other readers and the models did) and the key elsewhere on every
    other case, and leaves with the rest unanswered; return the mis-keyed question's number."""
    page.goto(live_server.url + reverse("reader-start", args=[demo.slug]))
    page.wait_for_selector("text=Begin with case 1")
    press_on_autofocus(page)
    page.wait_for_selector("text=Case 1 of")
    reading = reading_of(demo, reader)  # the order as the reader's started reading has it
    order = ordered_item_ids(demo, reader, reading)
    items = {i.pk: i for i in demo.items.select_related("question")}
    last = next(n for n, pk in enumerate(order, 1) if items[pk].question.source_id == MISKEYED)
    for number in range(1, last + 1):
        question = items[order[number - 1]].question
        wanted = MISKEYED_RIGHT if number == last else question.correct
        if number != last and number % 2 == 0:  # a miss: the next option round
            wanted = "ABCD"[("ABCD".index(question.correct) + 1) % 4]
        screen = to_screen(screen_letters(demo, reading, question.pk), wanted)
        page.wait_for_selector(f"text=Case {number} of {len(order)}")
        wait_seen(page, number)
        page.keyboard.press(screen.lower())
        page.keyboard.press("Enter")
    page.wait_for_selector(f"#save-status:has-text('Saved — case {last}')")
    page.goto(f"{live_server.url}/")
    page.wait_for_load_state("networkidle")
    return last


def _analysed(demo) -> list:
    """The questions the analysis counts under its default policy: not excluded, not rejected
    by an expert."""
    return list(
        demo.items.filter(excluded=False)
        .exclude(reviews__decision="reject")
        .select_related("question")
    )


def _hand_count(demo) -> dict[str, tuple[int, int, int]]:
    """{rater: (n, correct under key A, correct under key B)} counted here from the Answer and
    Prediction rows: the mis-keyed question's key is A before the correction and B after, every
    other question keeps its imported key; a reader is counted over every analysed question (a
    missing answer is wrong), a model over the analysed questions it has a prediction for (a
    failed extraction is wrong)."""
    items = _analysed(demo)
    before = {i.question_id: i.question.correct for i in items}
    assert before[demo.items.get(question__source_id=MISKEYED).question_id] == "A"
    after = {**before}
    after[demo.items.get(question__source_id=MISKEYED).question_id] = MISKEYED_RIGHT
    names = {r.source: r.name for r in study_raters(demo)}
    counts = {}
    answers = Answer.objects.filter(item__in=items, practice=False).exclude(choice="")
    for username in sorted(set(answers.values_list("reader__username", flat=True))):
        mine = dict(
            answers.filter(reader__username=username).values_list("item__question_id", "choice")
        )
        counts[names[username]] = (
            len(items),
            sum(mine.get(q) == key for q, key in before.items()),
            sum(mine.get(q) == key for q, key in after.items()),
        )
    predictions = Prediction.objects.filter(question_id__in=before)
    for model in sorted(set(predictions.values_list("model__name", flat=True))):
        mine = dict(predictions.filter(model__name=model).values_list("question_id", "letter"))
        counts[names[model]] = (
            len(mine),
            sum(letter == before[q] for q, letter in mine.items()),
            sum(letter == after[q] for q, letter in mine.items()),
        )
    return counts


def _accuracy_by_key_shown(page) -> dict[str, tuple[int, int, int]]:
    rows = page.eval_on_selector_all(
        "[data-table=accuracy_by_key] tbody tr",
        "rows => rows.map(r => Array.from(r.cells, c => c.innerText.trim()))",
    )
    shown = {}
    for rater, _kind, n, original, adjudicated, *_ in rows:
        shown[rater] = (
            int(n),
            int(original.split()[-1].split("/")[0]),
            int(adjudicated.split()[-1].split("/")[0]),
        )
    return shown


def _download(page, link) -> bytes:
    with page.expect_download() as got:
        link.click()
    return Path(got.value.path()).read_bytes()


def _no_key_for_reader(page, live_server, demo, reader, numbers, explanation) -> None:
    """reader1 (reading, not final) meets no key, proposal or correction: on the reading
    pages as the browser shows them, the debrief, and every API endpoint and download of the
    study (refused ones included: a refusal must not say it either)."""
    question = demo.items.get(question__source_id=MISKEYED).question
    for number in numbers:
        page.goto(live_server.url + reverse("reader-case", args=[demo.slug, number]))
        page.wait_for_selector(f"text=Case {number} of")
        _hides(page.content(), f"case {number}", explanation)
    assert question.text in page.inner_text("#answer-form")  # the last: the mis-keyed one
    detail = page.request.get(
        live_server.url + reverse("api-case", args=[demo.slug, numbers[-1]])
    ).json()
    assert question.text in json.dumps(detail), detail  # the API's case is that question too
    pages = [
        "/",
        reverse("reader-start", args=[demo.slug]),
        reverse("reader-review", args=[demo.slug]),
        reverse("reader-done", args=[demo.slug]),
        reverse("reader-results", args=[demo.slug]),
        *[reverse("reader-results-case", args=[demo.slug, n]) for n in numbers],
        reverse("reader-results-csv", args=[demo.slug]),
        reverse("corrections", args=[demo.slug]),
        reverse("expert-queue", args=[demo.slug]),
        reverse("analysis", args=[demo.slug]),
        reverse("analysis-zip", args=[demo.slug]),
        *[reverse("corrections-bank", args=[demo.slug, f]) for f in ("json", "changelog", "zip")],
    ]
    api = [
        reverse(name, args=[demo.slug])
        for name in (
            "api-cases",
            "api-questions",
            "api-reviews",
            "api-analysis",
            "api-items",
            "api-results",
            "api-corrections",
        )
    ]
    api += [reverse("api-case", args=[demo.slug, n]) for n in numbers]
    for url in [*pages, reverse("api-studies"), *api]:
        response = page.request.get(live_server.url + url)
        _hides(response.body().decode(errors="replace"), f"{url} ({response.status})", explanation)


def _hides(body: str, where: str, explanation: str) -> None:
    said = [word for word in HIDDEN if word in body.lower()]
    assert not said, f"reader1 meets {said} on {where}"
    assert explanation not in body, f"reader1 meets the explanation (the key) on {where}"


def test_a_rekeyed_question_rescores_every_rater_in_the_worker_analysis_and_the_exports(
    page, live_server, demo, new_context, settings, artifacts
):
    """Issue 35's first acceptance point, on the demo: reader1 reads up to the mis-keyed
    question (choosing B, as the other two readers and the three models did) and stops; expert1
    proposes "wrong key, B" by keyboard, pi1 accepts; the PI's analysis page (recomputed by
    the worker's job) and its ZIP show every rater's accuracy under key A and under key B
    exactly as counted here from the answers, the key changes and the key version; the bank
    export on the corrections page holds version 2 and its changelog row; reader1 meets none
    of it."""
    settings.ANALYSIS_PREPARE_DOWNLOADS = True  # the worker prepares the downloads, as deployed
    item = demo.items.get(question__source_id=MISKEYED)
    reader1 = get_user_model().objects.get(username="reader1")
    reader_page = new_context().new_page()
    sign_in(reader_page, live_server, "reader1")
    miskeyed_number = _read_up_to_the_miskeyed(reader_page, live_server, demo, reader1)
    chose_b = Answer.objects.filter(item=item, choice="B").values_list(
        "reader__username", flat=True
    )
    assert sorted(chose_b) == ["reader1", "reader2", "reader3"]
    assert Prediction.objects.filter(question=item.question, letter="B").count() == 3
    assert not Answer.objects.filter(item=item).exclude(choice="B").exists()

    # The PI looks first: the imported keys.
    page.set_viewport_size(SCREEN)
    sign_in(page, live_server, "pi1")
    page.goto(live_server.url + reverse("analysis", args=[demo.slug]))
    assert "keys as imported" in page.inner_text("[data-key-version]")
    analysis_jobs = BackgroundJob.objects.filter(study=demo, kind=JobKind.ANALYSIS)
    jobs_before = set(analysis_jobs.values_list("pk", flat=True))

    # expert1 proposes "wrong key, B" by keyboard; pi1 agrees and accepts.
    page.context.clear_cookies()
    sign_in(page, live_server, "expert1")
    _open_question(page, live_server, demo, item)
    keys = _propose_wrong_key_b(page)
    for key in ("Escape", "d", "Enter"):
        keys.press(key)
    page.wait_for_url(lambda url: not url.rstrip("/").endswith(f"/{item.id}"))
    proposal = Correction.objects.get(item=item)
    page.context.clear_cookies()
    sign_in(page, live_server, "pi1")
    _open_question(page, live_server, demo, item)  # pi1, an expert too, reviews it first
    keys = _propose_wrong_key_b(page)
    for key in ("Escape", "d", "Enter"):
        keys.press(key)
    page.wait_for_url(lambda url: not url.rstrip("/").endswith(f"/{item.id}"))
    page.goto(live_server.url + reverse("correction", args=[demo.slug, proposal.pk]))
    page.keyboard.press("a")
    page.wait_for_selector("text=is now at version 2")
    decided = timezone.localdate(Correction.objects.get(pk=proposal.pk).decided_at)

    # The analysis page: recomputed by a new analysis job, done, on the adjudicated keys.
    page.goto(live_server.url + reverse("analysis", args=[demo.slug]))
    page.wait_for_selector("[data-table=accuracy_by_key]")
    new_jobs = analysis_jobs.exclude(pk__in=jobs_before)
    assert new_jobs.exists(), "no analysis job after the key changed"
    assert set(new_jobs.values_list("status", flat=True)) == {JobStatus.DONE}, list(
        new_jobs.values_list("status", "error")
    )
    statement = f"keys as adjudicated on {decided.isoformat()}: 1 question re-keyed, 0 given"
    assert statement in page.inner_text("[data-key-version]"), page.inner_text("[data-key-version]")
    changes = page.eval_on_selector_all(
        "[data-table=key_changes] tbody tr",
        "rows => rows.map(r => Array.from(r.cells, c => c.innerText.trim()))",
    )
    assert len(changes) == 1, changes
    question, version, _change, old, new, error, who, *_ = changes[0]
    assert (question, version, old, new, who) == (MISKEYED, "2", "A", "B", "pi1"), changes
    assert "wrong key" in error.lower(), changes
    counted = _hand_count(demo)
    assert len(counted) == 6, counted  # reader1-3 and the three models
    assert _accuracy_by_key_shown(page) == counted
    page.evaluate("document.querySelector('#keys').scrollIntoView()")
    page.screenshot(path=str(shots() / "key-changes.png"))

    # The ZIP from the page's link: both tables, the same counts, methods.md's key version.
    archive = download_zip(page, ARTIFACTS / "keys-walk.zip")
    names = {name.rsplit("/", 1)[-1]: name for name in archive.namelist()}
    key_changes = pd.read_csv(io.BytesIO(archive.read(names["key_changes.csv"])), dtype=str)
    assert key_changes[
        ["question_id", "version", "old_key", "new_key", "error_type", "error_label", "decided_by"]
    ].values.tolist() == [[MISKEYED, "2", "A", "B", "wrong_key", "Wrong key", "pi1"]]
    by_key = pd.read_csv(io.BytesIO(archive.read(names["accuracy_by_key.csv"])))
    by_key = by_key[by_key.task == "All"]
    written = {
        r.rater: (int(r.n), int(r.correct_original), int(r.correct_adjudicated))
        for r in by_key.itertuples()
    }
    assert written == counted
    for r in by_key.itertuples():
        n, before, after = counted[r.rater]
        assert math.isclose(r.accuracy_original, before / n)
        assert math.isclose(r.accuracy_adjudicated, after / n)
        assert math.isclose(r.difference, (after - before) / n)
    assert statement in archive.read(names["methods.md"]).decode()
    readme = archive.read(names["README.txt"]).decode()
    assert f"Key version: {statement}" in readme, readme[:2000]

    # The corrected bank, from the links on the corrections page.
    page.goto(live_server.url + reverse("corrections", args=[demo.slug]))
    links = page.locator("a[href*='/corrections/bank.']")
    bank = json.loads(_download(page, links.filter(has_text="ReXVQA JSON")))
    record = (
        bank[MISKEYED]
        if isinstance(bank, dict)
        else next(r for r in bank if r.get("id") == MISKEYED)
    )
    assert (record["version"], record["correct_answer"]) == (2, "B")
    assert [v["correct_answer"] for v in record["history"]] == ["A", "B"]
    table = pd.read_csv(io.BytesIO(_download(page, links.filter(has_text="CSV").first)), dtype=str)
    row = table[table.id == MISKEYED]
    assert row[["version", "correct"]].values.tolist() == [["2", "B"]]
    changelog = pd.read_csv(
        io.BytesIO(_download(page, links.filter(has_text="changelog"))), dtype=str
    ).fillna("")
    mine = changelog[changelog.question_id == MISKEYED]
    assert len(mine) >= 1 and set(mine.version) == {"2"} and set(mine.error_type) == {"wrong_key"}
    assert ["A", "B"] in mine[["old", "new"]].values.tolist(), mine.to_dict("records")
    assert len(changelog) == len(mine), changelog.to_dict("records")

    # reader1, still reading: none of it anywhere.
    assert not results_open_studies(reader1).filter(pk=demo.pk).exists()
    _no_key_for_reader(
        reader_page,
        live_server,
        demo,
        reader1,
        range(1, miskeyed_number + 1),
        item.question.explanation,
    )
