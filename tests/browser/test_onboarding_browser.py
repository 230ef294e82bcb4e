"""A PI brings three new residents in by a pasted list; one follows their link and reads."""

import pytest
from django.urls import reverse

from annotation.models import Answer
from readerstudy.models import Membership, Role
from tests.browser.helpers import (
    press_on_autofocus,
    sign_in,
    study_with_radiographs,
    wait_for_image,
    wait_seen,
)
from tests.factories import MembershipFactory, UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "a-long-fresh-passphrase-42"


def test_pi_onboards_residents_and_one_reads_a_case(page, new_context, live_server, artifacts):
    study = study_with_radiographs(3)
    MembershipFactory(study=study, user=UserFactory(username="chief"), role=Role.PI)
    sign_in(page, live_server, "chief")
    page.goto(live_server.url + reverse("pi-dashboard", args=[study.slug]))
    page.click("text=Invite people…")
    page.fill("textarea[name=people]", "newres1\nnewres2, newres2@hospital.org\nnewres3")
    page.click("button:has-text('Invite')")
    page.wait_for_selector("text=3 people added as readers")
    page.screenshot(path=str(artifacts / "invite-links.png"))
    links = page.eval_on_selector_all("code.invite-link", "els => els.map(e => e.dataset.link)")
    assert len(links) == 3
    assert set(
        Membership.objects.filter(study=study, role=Role.READER).values_list(
            "user__username", flat=True
        )
    ) == {"newres1", "newres2", "newres3"}

    newcomer = new_context().new_page()  # the resident's own browser
    newcomer.goto(links[0])
    newcomer.wait_for_selector("text=Your username is newres1")
    newcomer.fill("input[name=new_password1]", PASSWORD)
    newcomer.fill("input[name=new_password2]", PASSWORD)
    newcomer.click("button:has-text('Set password and sign in')")
    newcomer.wait_for_selector(f"text={study.title}")
    newcomer.goto(live_server.url + reverse("reader-start", args=[study.slug]))
    newcomer.wait_for_selector("text=Begin with case 1")
    press_on_autofocus(newcomer)
    newcomer.wait_for_selector("text=Case 1 of 3")
    wait_for_image(newcomer)
    wait_seen(newcomer, 1)
    newcomer.keyboard.press("2")
    newcomer.keyboard.press("Enter")
    newcomer.wait_for_selector("text=Case 2 of 3")
    newcomer.wait_for_selector("text=1 / 3 answered")
    assert [a.choice for a in Answer.objects.filter(reader__username="newres1")] == ["B"]
    # The link worked once.
    newcomer.goto(links[0])
    newcomer.wait_for_selector("text=already used")
