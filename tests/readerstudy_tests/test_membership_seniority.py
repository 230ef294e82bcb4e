"""Training year / seniority on a study membership: set by the PI, audited, in the analysis."""

import pytest
from django.urls import reverse

from analysis.selectors import study_facts
from annotation.services import answer_submit
from readerstudy.models import AuditEvent, Membership, Role
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_pi_sets_and_changes_a_readers_seniority_and_the_analysis_reports_it(
    client, study, pi, reader
):
    client.force_login(pi)
    url = reverse("pi-members", args=[study.slug])
    newcomer = UserFactory(username="resident7")
    client.post(url, {"username": "resident7", "role": "reader", "seniority": " PGY-3 "})
    membership = Membership.objects.get(study=study, user=newcomer, role=Role.READER)
    assert membership.seniority == "PGY-3"
    client.post(url, {"username": "resident7", "role": "reader", "seniority": "PGY-4"})
    membership.refresh_from_db()
    assert membership.seniority == "PGY-4"
    assert AuditEvent.objects.filter(
        study=study, action="membership.seniority", detail__seniority="PGY-4"
    ).exists()
    # adding again without a seniority leaves it as it is
    client.post(url, {"username": "resident7", "role": "reader"})
    membership.refresh_from_db()
    assert membership.seniority == "PGY-4"
    assert "PGY-4" in client.get(reverse("pi-dashboard", args=[study.slug])).content.decode()

    answer_submit(reader=newcomer, item=study.items.first(), choice="A")
    facts = study_facts(study)
    # Reader 2: the study's `reader` joined first and holds Reader 1, started or not.
    assert {"name": "Reader 2", "username": "resident7", "seniority": "PGY-4"} in facts["readers"]
