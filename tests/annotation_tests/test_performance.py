"""The case page and the submit run a fixed number of queries whatever the study size."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from readerstudy.models import Role
from tests.factories import MembershipFactory, UserFactory, build_study

pytestmark = pytest.mark.django_db
CASE_PAGE_MAX = 15  # one of them the question's current words (its version)
SUBMIT_MAX = 24


def _reader_of(study, client, name):
    user = UserFactory(username=name)
    MembershipFactory(study=study, user=user, role=Role.READER)
    client.force_login(user)
    return user


def _count(client, method, url, data=None):
    with CaptureQueriesContext(connection) as ctx:
        getattr(client, method)(url, data or {}, HTTP_HX_REQUEST="true")
    return len(ctx.captured_queries)


@pytest.mark.parametrize("size", [3, 60])
def test_case_page_queries_are_bounded(client, size, django_assert_max_num_queries):
    study = build_study(size, images_per_case=2, random_order=True)
    _reader_of(study, client, f"r{size}")
    client.get(reverse("reader-case", args=[study.slug, 1]))  # warm the session
    with django_assert_max_num_queries(CASE_PAGE_MAX):
        client.get(reverse("reader-case", args=[study.slug, 2]))
    with django_assert_max_num_queries(SUBMIT_MAX):
        client.post(
            reverse("reader-answer", args=[study.slug, 2]), {"choice": "A"}, HTTP_HX_REQUEST="true"
        )


def test_query_count_does_not_grow_with_study_size(client):
    counts = []
    for size in (6, 80):
        study = build_study(size, random_order=True)
        _reader_of(study, client, f"grow{size}")
        client.post(reverse("reader-answer", args=[study.slug, 1]), {"choice": "A"})
        counts.append(
            (
                _count(client, "get", reverse("reader-case", args=[study.slug, 2])),
                _count(
                    client, "post", reverse("reader-answer", args=[study.slug, 2]), {"choice": "B"}
                ),
            )
        )
    assert counts[0] == counts[1]
