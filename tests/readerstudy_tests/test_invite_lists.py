"""Invitation lists as PIs paste them (issue 34): mail-client and spreadsheet forms, every bad
line named at once with the list kept, links with copy buttons and a CSV; and the two invite
defects of issue 38 (a CSV the csv module cannot read; a typed username whose address belongs
to another account)."""

from __future__ import annotations

import io
from urllib.parse import unquote

import pandas as pd
import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from readerstudy.models import Invitation, Membership, Role
from readerstudy.services.invitations import InvitationError, people_parse
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db
User = get_user_model()


@pytest.fixture
def pi_client(client, pi):
    client.force_login(pi)
    return client


def _invite(client, study, people="", **extra):
    return client.post(
        reverse("pi-invite", args=[study.slug]), {"people": people, "role": Role.READER, **extra}
    )


def _parsed(text: str) -> list[tuple[str, str, str, bool]]:
    return [(p.username, p.email, p.name, p.typed) for p in people_parse(text=text)]


def test_the_forms_mail_programs_and_spreadsheets_give():
    assert _parsed("Ben Okafor <ben.okafor@hospital.org>") == [
        ("ben.okafor", "ben.okafor@hospital.org", "Ben Okafor", False)
    ]
    assert _parsed('"Okafor, Ben" <Ben.Okafor@Hospital.org>') == [
        ("ben.okafor", "ben.okafor@hospital.org", "Okafor, Ben", False)
    ]
    # A mail program's recipient list: several people on one line.
    assert _parsed('Ben Okafor <ben@h.org>; "Doe, Jane" <jane@h.org>, <amir@h.org>') == [
        ("ben", "ben@h.org", "Ben Okafor", False),
        ("jane", "jane@h.org", "Doe, Jane", False),
        ("amir", "amir@h.org", "", False),
    ]
    # Spreadsheet rows pasted: tabs (or semicolons) between the cells.
    assert _parsed("Ben\tOkafor\tben@h.org\nbokafor\tBen Okafor\tb.okafor@h.org") == [
        ("ben", "ben@h.org", "Ben Okafor", False),
        ("bokafor", "b.okafor@h.org", "Ben Okafor", True),
    ]
    assert _parsed("jdoe;jane.doe@h.org\nbob bob@h.org\nsolo") == [
        ("jdoe", "jane.doe@h.org", "", True),
        ("bob", "bob@h.org", "", True),
        ("solo", "", "", True),
    ]


def test_every_bad_line_is_named_at_once_and_the_list_is_kept(pi_client, study):
    text = "Ben Okafor <ben@h.org>\nnot an@address@x\nJane Doe\ngood1\nben@h.org"
    response = _invite(pi_client, study, text)
    html = response.content.decode()
    assert response.status_code == 200
    assert "Nobody was added" in html and "3 problems" in html
    assert "Line 2" in html and "Line 3" in html and "Line 5" in html
    assert "&#x27;ben@h.org&#x27; is already on line 1" in html
    assert "Ben Okafor &lt;ben@h.org&gt;" in html  # the list, as typed, to correct
    assert not User.objects.filter(username__in=["ben", "good1"]).exists()


def test_a_name_and_address_invites_with_the_name_and_links_to_copy_or_save(pi_client, study):
    UserFactory(username="ben", email="")  # someone else called ben, without an address
    text = "Ben Okafor <ben@hospital.org>\nJane Doe <jane.doe@hospital.org>"
    response = _invite(pi_client, study, text)
    html = response.content.decode()
    ben = User.objects.get(email="ben@hospital.org")
    # The address's owner is new: never the account that merely shares the address's stem.
    assert ben.username == "ben2" and (ben.first_name, ben.last_name) == ("Ben", "Okafor")
    assert Membership.objects.filter(study=study, user=ben, role=Role.READER).exists()
    assert not Membership.objects.filter(study=study, user__username="ben").exists()
    assert "Ben Okafor" in html and "data-copy-all" in html and html.count('class="copy"') == 2
    href = html.split('href="data:text/csv;charset=utf-8,', 1)[1].split('"', 1)[0]
    table = pd.read_csv(io.StringIO(unquote(href)))
    assert list(table.columns) == ["name", "username", "email", "sign_in_link", "note"]
    assert table.set_index("username").loc["ben2", "name"] == "Ben Okafor"
    links = set(table["sign_in_link"])
    assert all("/accounts/invitation/" in link for link in links) and len(links) == 2
    assert Invitation.objects.count() == 2


def test_a_typed_username_never_adds_the_account_that_holds_the_address(pi_client, study):
    """Issue 38: "newname, existing@x" added the existing account and showed its username."""
    UserFactory(username="senior", email="existing@x.org")
    html = _invite(pi_client, study, "newname, existing@x.org").content.decode()
    assert "Nobody was added" in html
    assert "existing@x.org is the e-mail address of the account &#x27;senior&#x27;" in html
    assert "write senior (or the address alone)" in html
    assert not Membership.objects.filter(study=study, user__username="senior").exists()
    assert not User.objects.filter(username="newname").exists()
    # The address alone means its account: added, as the message says.
    _invite(pi_client, study, "existing@x.org")
    assert Membership.objects.filter(study=study, user__username="senior").exists()


def test_csv_files_the_csv_module_refuses_are_said_in_words(pi_client, study):
    """Issue 38: a cell over 131,072 characters raised _csv.Error (500); CR-only line endings
    (old Excel for Mac) too."""
    huge = b"username,email\n" + b"x" * 140_000 + b",a@b.org\n"
    upload = SimpleUploadedFile("people.csv", huge, content_type="text/csv")
    response = _invite(pi_client, study, people_file=upload)
    html = response.content.decode()
    assert response.status_code == 200
    assert "The CSV file cannot be read at line" in html and "too long" in html
    upload = SimpleUploadedFile(
        "people.csv", b"name,email\rCarla Diaz,carla@h.org\rDan Wu,dan@h.org\r"
    )
    response = _invite(pi_client, study, people_file=upload)
    assert response.status_code == 200
    assert set(
        User.objects.filter(email__endswith="@h.org").values_list("username", flat=True)
    ) == {
        "carla",
        "dan",
    }
    assert User.objects.get(username="dan").get_full_name() == "Dan Wu"


def test_an_address_many_accounts_share_asks_for_the_username(study):
    UserFactory(username="a1", email="shared@x.org")
    UserFactory(username="a2", email="shared@x.org")
    from readerstudy.services.invitations import people_invite

    with pytest.raises(InvitationError, match="several accounts have the address"):
        people_invite(
            study=study,
            people=people_parse(text="shared@x.org"),
            role=Role.READER,
            actor=None,
            link_for=str,
        )
