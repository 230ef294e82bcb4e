"""Membership writes keep the study's rule that it always has a PI, whoever calls them (the
members page, a command, a script): the rule lives in the service, not in a view."""

import pytest

from readerstudy.models import AuditEvent, Membership, Role
from readerstudy.services.studies import StudyError, membership_add, membership_remove
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_the_last_pi_cannot_be_removed(study, pi):
    with pytest.raises(StudyError, match="at least one PI"):
        membership_remove(study=study, user=pi, role=Role.PI, actor=pi)
    assert Membership.objects.filter(study=study, user=pi, role=Role.PI).exists()
    assert not AuditEvent.objects.filter(action="membership.remove").exists()


def test_a_pi_can_go_while_another_stays(study, pi):
    second = UserFactory()
    membership_add(study=study, user=second, role=Role.PI, actor=pi)
    assert membership_remove(study=study, user=pi, role=Role.PI, actor=second)
    with pytest.raises(StudyError):
        membership_remove(study=study, user=second, role=Role.PI, actor=second)
    assert list(
        Membership.objects.filter(study=study, role=Role.PI).values_list("user", flat=True)
    ) == [second.pk]


def test_the_last_pi_may_drop_another_role(study, pi):
    # (Not reader: a PI sees the key, so blinding by person refuses that role.)
    membership_add(study=study, user=pi, role=Role.EXPERT, actor=pi)
    assert membership_remove(study=study, user=pi, role=Role.EXPERT, actor=pi)
    assert Membership.objects.filter(study=study, user=pi, role=Role.PI).exists()
