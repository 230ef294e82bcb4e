"""A two-arm study on the expert queue, the item analysis and the PI dashboard: a reader who
reads every case twice (unaided and aided) counts once per question in the item analysis
(their unaided session, said on the page), and the dashboard's readers table counts per arm,
never 16 answers of 8 cases (issue 23)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from analysis.triage import study_item_analysis, triage_queue
from annotation.reviews import reader_feedback
from annotation.services import answer_submit, reader_finish
from readerstudy.models import ReaderAssignment, Role
from readerstudy.services.studies import StudyError, membership_add
from readerstudy.vocabulary import Alignment
from tests.design_tests.conftest import add_readers, crossover
from tests.factories import MembershipFactory, UserFactory, build_study


def _read_session(study, reader, choice_of, **extra):
    """Answer every case of the reader's current session, then finish it."""
    for item in study.items.select_related("question"):
        answer_submit(reader=reader, item=item, choice=choice_of(item), **extra)
    reader_finish(reader=reader, study=study)


@pytest.fixture
def read_twice(design_study, set_design):
    """Two readers who read both sessions (washout 0). Unaided: everyone answers B and says
    question 1 does not fit; aided: everyone answers as the AI does (the key), comments."""
    study = design_study
    readers = add_readers(study, 2)
    set_design(study, crossover(washout_days=0))
    first = study.items.order_by("position").first()
    for reader in readers:
        arm = ReaderAssignment.objects.get(study=study, reader=reader).first_arm
        for session_arm in (arm, "aided" if arm == "unaided" else "unaided"):
            if session_arm == "unaided":
                for item in study.items.all():
                    answer_submit(
                        reader=reader,
                        item=item,
                        choice="B",
                        alignment=Alignment.NO if item == first else "",
                    )
                reader_finish(reader=reader, study=study)
            else:
                for item in study.items.select_related("question"):
                    answer_submit(
                        reader=reader,
                        item=item,
                        choice=item.question.correct,
                        alignment=Alignment.NO if item == first else "",
                        comment="agree with the AI",
                    )
                reader_finish(reader=reader, study=study)
    return study, readers, first


def test_item_analysis_counts_each_reader_once_from_the_unaided_session(read_twice, client):
    study, _, first = read_twice
    items = study_item_analysis(study).set_index("item_id")
    row = items.loc[first.id]
    # Two readers, not four answers; their unaided B, not the aided key.
    assert row["n_readers"] == 2
    assert row["share_B"] == pytest.approx(2 / 3)  # two readers and the model (the key)
    assert row["fit_no"] == 2 and row["comments"] == 0  # aided comments are not counted
    pi = UserFactory()
    MembershipFactory(study=study, user=pi, role=Role.PI)
    client.force_login(pi)
    page = client.get(reverse("item-analysis", args=[study.slug])).content.decode()
    assert "Each reader counts once per question, from their unaided session" in page
    queue = client.get(reverse("expert-queue", args=[study.slug])).content.decode()
    assert "from their unaided session" in queue
    api = client.get(f"/api/v1/studies/{study.slug}/items/").json()
    assert "unaided session" in api["readers_scope"]
    assert {r["n_readers"] for r in api["items"]} == {2}


def test_reader_comments_reach_the_queue(db, client):
    """A reader's comment counts as a complaint (the queue matched comments by username
    against the readers' display names, "Reader 1", and counted none)."""
    study = build_study(4)
    reader = add_readers(study, 1)[0]
    item = study.items.order_by("position").first()
    answer_submit(reader=reader, item=item, choice="A", comment="this is a leg")
    expert = UserFactory()
    MembershipFactory(study=study, user=expert, role=Role.EXPERT)
    row = next(r for r in triage_queue(study, expert) if r.item == item)
    assert row.comments == 1 and "1 reader comment" in row.reasons
    assert triage_queue(study, expert)[0].item == item  # the complaint ranks it first


def test_dashboard_counts_readers_per_arm(read_twice, client):
    study, readers, first = read_twice
    pi = UserFactory()
    MembershipFactory(study=study, user=pi, role=Role.PI)
    client.force_login(pi)
    response = client.get(reverse("pi-dashboard", args=[study.slug]))
    page = response.content.decode()
    assert "One row per reader and arm" in page
    rows = response.context["readers"]
    assert [(r.username, r.arm) for r in rows] == [
        (reader.username, arm) for reader in readers for arm in ("unaided", "aided")
    ]
    n = study.items.count()
    assert all(r.answered == n and r.total == n and r.finished for r in rows)
    assert all(f"{n} / {n}" in page for _ in rows) and f"{2 * n} / {n}" not in page
    # "Does not fit": two readers said so (in both sessions), not four answers.
    flagged = {row["item"].id: row for row in response.context["flagged"]}
    assert flagged[first.id]["misfit"] == 2


def _expert(study):
    expert = UserFactory(username="expert")
    MembershipFactory(study=study, user=expert, role=Role.EXPERT)
    return expert


def test_evidence_panel_counts_each_reader_once_from_the_unaided_session(read_twice, client):
    """Unaided, both readers chose B; aided, both chose the key (as the AI did). The panel
    counts two readers and the model, as the queue does, not four answers and the model."""
    study, _, _ = read_twice
    item = study.items.exclude(question__correct="B").order_by("position").first()
    key = item.question.correct
    client.force_login(_expert(study))
    url = reverse("expert-evidence", args=[study.slug, item.id])
    html = client.get(url, HTTP_HX_REQUEST="true").content.decode()
    assert "Each reader counts once per question, from their unaided session" in html
    rows = {
        row.split("<strong>")[1][0]: row
        for row in html.split("<tbody>")[1].split("</tbody>")[0].split("</tr>")
        if "<strong>" in row
    }
    assert "2 of 3" in rows["B"] and "Reader 1, Reader 2" in rows["B"]
    assert "1 of 3" in rows[key] and "MedGemma" in rows[key] and "Reader" not in rows[key]
    assert "· most chosen" in rows["B"]
    # The queue's row for the question and the panel agree (same rule, same numbers).
    row = next(r for r in triage_queue(study, UserFactory()) if r.item == item)
    assert row.answered == 3 and dict(row.counts)["B"] == 2


def test_review_page_counts_each_reader_once_from_the_unaided_session(read_twice, client):
    """What readers said: the two readers' unaided answers (both "does not fit", no
    comment), not their aided ones too (4 answers, 4 "does not fit", 2 comments)."""
    study, _, first = read_twice
    feedback = reader_feedback(first)
    assert feedback.answered == 2 and feedback.alignment["No"] == 2
    assert feedback.comments == []
    client.force_login(_expert(study))
    html = client.get(reverse("expert-review", args=[study.slug, first.id])).content.decode()
    said = html.split("What readers said")[1].split("</details>")[0]
    assert said.startswith(" (2 answers)")
    assert "No <strong>2</strong>" in said and "agree with the AI" not in said
    assert "Each reader counts once per question, from their unaided session" in said


def test_one_arm_review_page_counts_every_answer_and_says_nothing_of_sessions(db, client):
    study = build_study(2)
    item = study.items.first()
    for reader in add_readers(study, 3):
        answer_submit(reader=reader, item=item, choice="A", comment="faint")
    client.force_login(_expert(study))
    html = client.get(reverse("expert-review", args=[study.slug, item.id])).content.decode()
    said = html.split("What readers said")[1].split("</details>")[0]
    assert said.startswith(" (3 answers)") and said.count("“faint”") == 3
    assert "data-readers-scope" not in said


def test_a_reader_between_the_two_sessions_still_reads_blind(design_study, set_design, client):
    """A crossover reader whose unaided session is final (locked) reads every case again,
    aided: they may not become an expert of the study, nor open its key, before that second
    session is final too. Then the panel opens to them, without who chose what."""
    study = design_study
    reader = add_readers(study, 1)[0]
    set_design(study, crossover(washout_days=0))
    _read_session(study, reader, lambda item: "B")  # session 1, locked
    with pytest.raises(StudyError, match=r"reading .* blind"):
        membership_add(study=study, user=reader, role=Role.EXPERT)
    MembershipFactory(study=study, user=reader, role=Role.EXPERT)  # e.g. through the admin
    item = study.items.order_by("position").first()
    client.force_login(reader)
    url = reverse("expert-evidence", args=[study.slug, item.id])
    assert client.get(url).status_code == 403
    assert client.get(reverse("expert-review", args=[study.slug, item.id])).status_code == 403
    _read_session(study, reader, lambda item: item.question.correct)  # session 2, final
    html = client.get(url).content.decode()
    assert f"of {study.items.count()} in the queue" in html
    assert "Reader 1" not in html and "MedGemma" not in html  # they read here: no who


def test_dashboard_does_not_fit_counts_readers_from_the_counted_session(
    design_study, set_design, client
):
    """A question only said not to fit beside the AI (aided session) is not flagged by
    readers; one said so unaided is, once per reader, like the queue counts it."""
    from annotation.dashboard import flagged_items

    study = design_study
    readers = add_readers(study, 2)
    set_design(study, crossover(washout_days=0))
    first, second = study.items.order_by("position")[:2]
    for reader in readers:
        arm = ReaderAssignment.objects.get(study=study, reader=reader).first_arm
        for session_arm in (arm, "aided" if arm == "unaided" else "unaided"):
            misfit = first if session_arm == "unaided" else second
            for item in study.items.select_related("question"):
                answer_submit(
                    reader=reader,
                    item=item,
                    choice=item.question.correct,
                    alignment=Alignment.NO if item == misfit else Alignment.YES,
                )
            reader_finish(reader=reader, study=study)
    pi = UserFactory(username="pi-flags")
    MembershipFactory(study=study, user=pi, role=Role.PI)
    rows, _ = flagged_items(study, viewer=pi)
    misfit = {row["item"].pk: row["misfit"] for row in rows}
    assert misfit.get(first.pk) == 2
    assert second.pk not in misfit
    client.force_login(pi)
    page = client.get(reverse("pi-dashboard", args=[study.slug])).content.decode()
    assert "data-counted-scope" in page and "from their unaided session" in page
