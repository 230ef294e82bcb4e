"""The PI's design page (issue 23): a study's design changed from the browser until anyone
answers, by the one design service (checked, all or nothing, audited); then read-only, with
the refusal in words."""

from __future__ import annotations

import re
from collections import Counter
from html import unescape

import pytest
from django.urls import reverse

from annotation.services import answer_submit, reader_finish
from readerstudy.design.rules import Design
from readerstudy.models import AuditEvent, ItemAid, ReaderAssignment, ReaderStudy, Role
from tests.design_tests.conftest import add_model, add_readers, crossover
from tests.factories import MembershipFactory, UserFactory, build_study

pytestmark = pytest.mark.django_db

CROSSOVER = {
    "arms": "unaided,aided",
    "aid_model": "MedGemma",
    "aid_mode": "concurrent",
    "washout_days": "28",
    "groups": "0",
    "anchor": "0",
}


@pytest.fixture
def pi(design_study):
    user = UserFactory(username="boss")
    MembershipFactory(study=design_study, user=user, role=Role.PI)
    return user


@pytest.fixture
def pi_client(client, pi):
    client.force_login(pi)
    return client


def url(study) -> str:
    return reverse("pi-design", args=[study.slug])


def design_of(study) -> Design:
    return Design.of(ReaderStudy.objects.get(pk=study.pk))


def field_errors(html: str, name: str) -> list[str]:
    block = re.search(
        rf'<div class="field[^"]*">\s*<label for="id_{name}".*?</div>', html, flags=re.S
    )
    assert block, name
    return [unescape(e) for e in re.findall(r'<span class="error">([^<]+)</span>', block.group(0))]


def test_the_dashboard_links_the_design_page(pi_client, design_study):
    html = pi_client.get(reverse("pi-dashboard", args=[design_study.slug])).content.decode()
    assert f'href="{url(design_study)}"' in html


def test_the_page_shows_the_design_prefilled(pi_client, design_study, set_design):
    add_readers(design_study, 2)
    set_design(design_study, crossover(washout_days=7, shuffle_options=True))
    html = pi_client.get(url(design_study)).content.decode()
    assert "Crossover, 2 arms (unaided / aided by MedGemma, concurrent), washout 7 days" in html
    assert '<option value="unaided,aided" selected>' in html
    assert '<option value="MedGemma" selected>' in html
    assert re.search(r'name="washout_days" value="7"', html)
    assert re.search(r'name="shuffle_options"[^>]*checked', html)
    assert "Save the design" in html and 'name="csrfmiddlewaretoken"' in html


def test_a_pi_changes_the_design_and_the_sentence_follows(pi_client, pi, design_study):
    readers = add_readers(design_study, 2)
    response = pi_client.post(url(design_study), CROSSOVER, follow=True)
    assert response.redirect_chain[-1][0] == reverse("pi-dashboard", args=[design_study.slug])
    page = response.content.decode()
    sentence = "Crossover, 2 arms (unaided / aided by MedGemma, concurrent), washout 28 days"
    assert f"Design saved: {sentence}, 2 readers balanced 1/1" in page
    assert design_of(design_study) == crossover(washout_days=28)
    assert ItemAid.objects.filter(item__study=design_study, usable=True).count() == 8
    firsts = ReaderAssignment.objects.filter(study=design_study, reader__in=readers)
    assert sorted(firsts.values_list("first_arm", flat=True)) == ["aided", "unaided"]
    event = AuditEvent.objects.get(study=design_study, action="design.set")
    assert event.actor == pi and event.detail["washout_days"] == 28
    assert sentence in pi_client.get(url(design_study)).content.decode()


def test_a_mistyped_washout_is_fixed_before_anyone_reads(pi_client, design_study, set_design):
    add_readers(design_study, 2)
    set_design(design_study, crossover(washout_days=280))
    pi_client.post(url(design_study), CROSSOVER)
    assert design_of(design_study).washout_days == 28
    assert AuditEvent.objects.filter(study=design_study, action="design.set").count() == 2


def test_back_to_a_single_arm_drops_the_aid_and_the_assignments(
    pi_client, design_study, set_design
):
    add_readers(design_study, 2)
    set_design(design_study, crossover())
    data = {"arms": "unaided", "aid_model": "", "aid_mode": "", "washout_days": "0"}
    pi_client.post(url(design_study), data)
    assert design_of(design_study) == Design()
    assert not ItemAid.objects.filter(item__study=design_study).exists()
    assert not ReaderAssignment.objects.filter(study=design_study).exists()


def test_groups_added_later_keep_whole_xrays_and_an_exact_anchor(pi_client, db):
    """Groups set on the design page are dealt as at creation: from the study's seed, whole
    X-rays per group, an anchor of exactly the size asked, readers balanced over groups."""
    study = build_study(12, seed=3)
    for item in study.items.all()[6:]:  # two questions on one X-ray for half of them
        partner = study.items.get(position=item.position - 6)
        item.question.case = partner.question.case
        item.question.save()
    pi = UserFactory(username="boss")
    MembershipFactory(study=study, user=pi, role=Role.PI)
    readers = add_readers(study, 4)
    pi_client.force_login(pi)
    data = {"arms": "unaided", "washout_days": "0", "groups": "2", "anchor": "4"}
    response = pi_client.post(url(study), data)
    assert response.status_code == 302, response.content.decode()
    items = list(study.items.select_related("question"))
    assert sum(1 for i in items if i.anchor) == 4
    by_case: dict[int, set] = {}
    for item in items:
        by_case.setdefault(item.question.case_id, set()).add(
            "anchor" if item.anchor else item.case_group
        )
    assert all(len(groups) == 1 for groups in by_case.values())
    assert {i.case_group for i in items if not i.anchor} == {1, 2}
    groups = ReaderAssignment.objects.filter(study=study, reader__in=readers)
    assert Counter(groups.values_list("reader_group", flat=True)) == {1: 2, 2: 2}
    # Back to no groups: every item is read by everyone again.
    pi_client.post(url(study), {"arms": "unaided", "washout_days": "0"})
    assert not study.items.filter(anchor=True).exists()
    assert not study.items.exclude(case_group=None).exists()


@pytest.mark.parametrize(
    ("data", "field", "message"),
    [
        ({**CROSSOVER, "washout_days": "-1"}, "washout_days", "The washout cannot be negative"),
        # Past a year: a number typed by mistake (a huge one was a server error; a date
        # thousands of years ahead broke every page that says when session 2 opens).
        ({**CROSSOVER, "washout_days": "366"}, "washout_days", "The washout is at most 365"),
        ({**CROSSOVER, "washout_days": "1" + "0" * 20}, "washout_days", "The washout is at"),
        ({**CROSSOVER, "aid_model": ""}, "aid_model", "An aided arm needs an AI model."),
        ({**CROSSOVER, "groups": "3"}, "groups", "3 groups are more than the 2 readers."),
        ({**CROSSOVER, "anchor": "2"}, "anchor", "An anchor set needs split-plot groups."),
        ({**CROSSOVER, "arms": "both"}, "arms", "Select a valid choice."),
        ({**CROSSOVER, "washout_days": "soon"}, "washout_days", "Enter a whole number."),
        ({**CROSSOVER, "aid_model": "Elsewhere"}, "aid_model", "Select a valid choice."),
    ],
)
def test_bad_input_is_said_beside_its_field_and_nothing_changes(
    pi_client, design_study, data, field, message
):
    add_readers(design_study, 2)
    response = pi_client.post(url(design_study), data)
    html = response.content.decode()
    assert response.status_code == 200
    assert any(e.startswith(message) for e in field_errors(html, field)), field_errors(html, field)
    assert "Nothing was changed." in html
    assert design_of(design_study) == Design()
    assert not AuditEvent.objects.filter(study=design_study, action="design.set").exists()


def test_a_model_of_another_dataset_is_not_offered(pi_client, design_study):
    add_model(build_study(2), name="Elsewhere")
    html = pi_client.get(url(design_study)).content.decode()
    assert '<option value="MedGemma">' in html and "Elsewhere" not in html


def test_a_refusal_the_form_cannot_foresee_is_said_and_writes_nothing(pi_client, design_study):
    """The model has no prediction for this study's questions: the service refuses; the page
    says why beside the model and nothing is written."""
    add_readers(design_study, 2)
    other = build_study(2)
    other.dataset = design_study.dataset
    add_model(other, name="Partial")  # its predictions are for other questions
    response = pi_client.post(url(design_study), {**CROSSOVER, "aid_model": "Partial"})
    errors = field_errors(response.content.decode(), "aid_model")
    assert errors == [
        "AI model 'Partial' has predictions for 0 of the 8 sampled questions; import its "
        "predictions for these questions first."
    ]
    assert design_of(design_study) == Design()


def test_an_anchor_that_would_cut_an_xray_is_refused_beside_the_anchor(pi_client, db):
    study = build_study(4)
    for item in study.items.all():  # two X-rays of two questions each
        item.question.case = study.items.get(position=item.position % 2).question.case
        item.question.save()
    pi = UserFactory(username="boss")
    MembershipFactory(study=study, user=pi, role=Role.PI)
    add_readers(study, 2)
    pi_client.force_login(pi)
    data = {"arms": "unaided", "washout_days": "0", "groups": "2", "anchor": "1"}
    response = pi_client.post(url(study), data)
    html = response.content.decode()
    errors = field_errors(html, "anchor")
    assert errors and "without splitting an X-ray" in errors[0]
    sentence = re.search(r"data-design>([^<]*)", html).group(1)
    assert "split-plot" not in sentence  # the design as stored, not the one refused
    study.refresh_from_db()
    assert (study.reader_groups, study.anchor_size) == (0, 0)


def test_once_anyone_answered_the_design_is_read_only_and_a_post_is_refused(
    pi_client, design_study, set_design
):
    reader = add_readers(design_study, 2)[0]
    set_design(design_study, crossover(washout_days=7))
    answer_submit(reader=reader, item=design_study.items.first(), choice="A")
    html = pi_client.get(url(design_study)).content.decode()
    refusal = (
        f"The design of &#x27;{design_study.slug}&#x27; cannot change: 1 answer is already "
        "recorded under it. Create a new study for a new design."
    )
    assert refusal in html
    assert "Save the design" not in html
    assert re.search(r'name="washout_days" value="7"[^>]*disabled', html)
    before = (design_of(design_study), list(ReaderAssignment.objects.values_list("id", flat=True)))
    response = pi_client.post(url(design_study), {**CROSSOVER, "washout_days": "0"})
    assert response.status_code == 409
    assert refusal in response.content.decode()
    after = (design_of(design_study), list(ReaderAssignment.objects.values_list("id", flat=True)))
    assert after == before
    assert AuditEvent.objects.filter(study=design_study, action="design.set").count() == 1


def test_the_refusal_counts_the_answers(pi_client, design_study, set_design):
    reader = add_readers(design_study, 2)[0]
    for item in design_study.items.all()[:3]:
        answer_submit(reader=reader, item=item, choice="B")
    html = pi_client.get(url(design_study)).content.decode()
    assert "3 answers are already recorded under it" in html


def test_a_session_finished_with_nothing_answered_also_fixes_the_design(
    pi_client, design_study, set_design
):
    """Finishing leaves cases unanswered when the reader confirms it; the completion still
    names this design's session and arm and starts its washout."""
    reader = add_readers(design_study, 2)[0]
    set_design(design_study, crossover(washout_days=7))
    reader_finish(reader=reader, study=design_study)
    html = pi_client.get(url(design_study)).content.decode()
    assert "cannot change: 1 reading session was already finished under it" in html
    response = pi_client.post(url(design_study), {**CROSSOVER, "washout_days": "0"})
    assert response.status_code == 409
    assert design_of(design_study).washout_days == 7


@pytest.mark.parametrize("role", [Role.READER, Role.EXPERT, None])
def test_only_the_studys_pis_reach_the_page(client, design_study, role):
    user = UserFactory(username="someone")
    if role:
        MembershipFactory(study=design_study, user=user, role=role)
    client.force_login(user)
    assert client.get(url(design_study)).status_code == 404
    assert client.post(url(design_study), CROSSOVER).status_code == 404
    assert design_of(design_study) == Design()


def test_a_pi_of_another_study_cannot_reach_this_one(client, design_study):
    other = build_study(2)
    boss = UserFactory(username="other-boss")
    MembershipFactory(study=other, user=boss, role=Role.PI)
    client.force_login(boss)
    assert client.get(url(other)).status_code == 200
    assert client.post(url(design_study), CROSSOVER).status_code == 404
    assert design_of(design_study) == Design()


def test_anonymous_is_sent_to_sign_in(client, design_study):
    response = client.post(url(design_study), CROSSOVER)
    assert response.status_code == 302 and response.url.startswith("/accounts/login/")
    assert design_of(design_study) == Design()


def test_a_post_without_the_csrf_token_is_refused(design_study, pi):
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.force_login(pi)
    assert client.post(url(design_study), CROSSOVER).status_code == 403
    assert design_of(design_study) == Design()
