"""Issue 23's acceptance walk-through on the demo, as a new user would do it in the browser:
pi1 creates a two-arm crossover (unaided / aided by the demo MedGemma, washout 0) on the demo
data, two new readers read both sessions, and the analysis page shows aided against unaided.
The demo's own readers cannot be its readers: they read the same X-rays unaided in `demo`, or
are shown the AI's answers on them in `demo-aided` (readerstudy.blinding).

Study creation is a task: the tests' TASKS_URL=immediate:// runs it inline, so the form
leads straight to the dashboard, as a worker would after its progress page."""

from __future__ import annotations

import pytest
from django.urls import reverse

from analysis.selectors import study_raters
from annotation.models import Answer, ReaderCompletion
from readerstudy.models import ReaderAssignment, ReaderStudy
from tests.browser.helpers import create_crossover, press_on_autofocus, sign_in, wait_seen
from tests.factories import UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.engine, pytest.mark.django_db(transaction=True)]

SLUG = "ai-trial"
SAMPLE = 5  # one question per task (the form stratifies by task)
READERS = ("trial1", "trial2")  # people who read nothing else of the demo's X-rays


def _read_session(page, live_server, session: int) -> str:
    """Read every case of the reader's current session with the keyboard and finish it;
    return the arm the page said the session was in."""
    page.goto(live_server.url + reverse("reader-start", args=[SLUG]))
    banner = page.wait_for_selector(f"text=Session {session} of 2")
    arm = "aided" if "aided by AI" in banner.inner_text() else "unaided"
    press_on_autofocus(page)  # past the instructions
    for number in range(1, SAMPLE + 1):
        page.wait_for_selector(f"text=Case {number} of {SAMPLE}")
        # The AI's answer is on the case in the aided session only.
        assert page.locator("[data-ai-aid]").count() == (1 if arm == "aided" else 0)
        wait_seen(page, number)
        page.keyboard.press(str(1 + number % 4))
        page.keyboard.press("Enter")
    page.wait_for_url(f"**{reverse('reader-review', args=[SLUG])}")
    page.wait_for_selector(f"text=All {SAMPLE} cases are answered")
    page.check("input[name=confirm]")
    page.click("[data-final-submit]")
    page.wait_for_url(f"**{reverse('reader-done', args=[SLUG])}")
    if session == 1:  # washout 0: the second session opens at once
        page.wait_for_selector("[data-next-session]")
    page.wait_for_load_state("networkidle")
    return arm


def test_a_pi_designs_a_crossover_two_readers_read_both_arms_and_the_analysis_compares_them(
    page, live_server, demo
):
    for username in READERS:
        UserFactory(username=username)
    sign_in(page, live_server, "pi1")
    sentence = create_crossover(
        page,
        live_server,
        demo,
        slug=SLUG,
        title="AI-assisted trial",
        sample=SAMPLE,
        readers=READERS,
    )
    assert "Crossover, 2 arms (unaided / aided by MedGemma-demo, concurrent)" in sentence
    assert "washout 0 days" in sentence and "balanced 1/1" in sentence
    page.wait_for_load_state("networkidle")
    study = ReaderStudy.objects.get(slug=SLUG)
    first_arms = dict(
        ReaderAssignment.objects.filter(study=study).values_list("reader__username", "first_arm")
    )
    assert sorted(first_arms.values()) == ["aided", "unaided"]  # counterbalanced

    for reader in READERS:
        page.context.clear_cookies()
        sign_in(page, live_server, reader)
        first = _read_session(page, live_server, 1)
        second = _read_session(page, live_server, 2)
        assert (first, second) == (
            first_arms[reader],
            {"aided", "unaided"}.difference({first}).pop(),
        )

    answers = Answer.objects.filter(item__study=study).exclude(choice="")
    assert answers.count() == 2 * 2 * SAMPLE  # two readers, two arms, every case
    assert ReaderCompletion.objects.filter(study=study).count() == 4

    page.context.clear_cookies()
    sign_in(page, live_server, "pi1")
    page.goto(live_server.url + reverse("analysis", args=[SLUG]))
    page.wait_for_selector("[data-design-table=arm_accuracy]", timeout=120_000)
    cells = page.eval_on_selector_all(
        "[data-design-table=arm_accuracy] tbody tr",
        "rows => rows.map(r => Array.from(r.cells, c => c.innerText.trim()))",
    )
    shown = {
        (arm, reader): (n, correct)
        for arm, task, reader, n, correct, _, _note in cells
        if task == "All"
    }
    # Readers by the page's names ("Reader 1"), as in every other table, never by username.
    names = {r.source: r.name for r in study_raters(study) if r.kind == "human"}
    assert READERS[0] not in page.inner_text("#arms")
    # Each reader's accuracy in each arm, as the database has their answers.
    for username in READERS:
        for arm in ("unaided", "aided"):
            mine = answers.filter(reader__username=username, arm=arm).select_related(
                "item__question"
            )
            right = sum(a.choice == a.item.question.correct for a in mine)
            assert shown[(arm, names[username])] == (str(SAMPLE), str(right))
    assert ("aided", "Panel (mean of readers)") in shown
    assert page.locator("[data-design-table=mrmc_difference]").count() == 1
    assert "Analysed: " in page.inner_text("[data-design-sentence]")
