"""Bringing people into a study from the browser: accounts, memberships and one-time links.

A PI pastes a list (or uploads a CSV) of usernames and/or e-mail addresses. People who already
have an account are added to the study at once; everyone else gets an account with no usable
password and a one-time sign-in link on which they choose their own password. The whole list is
checked before anything is written: one bad line and nobody is added.
"""

from __future__ import annotations

import csv
import hashlib
import io
import re
import secrets
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core.exceptions import ValidationError
from django.core.mail import send_mail
from django.core.validators import validate_email
from django.db import transaction
from django.utils import timezone

from readerstudy.models import AuditEvent, Invitation, Membership, ReaderStudy, Role
from readerstudy.services.accounts import username_normalized
from readerstudy.services.studies import StudyError, membership_add

MAX_PEOPLE = 500
_SPLIT = re.compile(r"[,;\t]+|\s+")
_USERNAME = UnicodeUsernameValidator()


class InvitationError(ValueError):
    """A list of people that cannot be added as given; the message says which line and why."""


@dataclass(frozen=True)
class Person:
    line: int
    username: str
    email: str


@dataclass(frozen=True)
class Added:
    username: str
    email: str
    existing: bool
    link_token: str | None  # the secret, shown to the PI once; None for existing accounts
    emailed: bool
    already_member: bool = False  # already had this role in the study: nothing changed


def _short(value: str) -> str:
    return value if len(value) <= 60 else value[:57] + "…"


def _person(line: int, fields: list[str], typed: str | None = None) -> Person:
    """One person from a line's fields; `typed` is the line as the PI wrote it (quoted back in
    a message, rather than the fields re-joined)."""
    fields = [f.strip() for f in fields if f and f.strip()]
    emails = [f for f in fields if "@" in f]
    names = [f for f in fields if "@" not in f]
    if len(emails) > 1 or len(names) > 1 or not fields:
        shown = typed.strip() if typed is not None else ", ".join(fields)
        raise InvitationError(
            f"Line {line}: give a username, an e-mail address, or both (got {_short(shown)!r})."
        )
    email = emails[0].lower() if emails else ""
    if email:
        try:
            validate_email(email)
        except ValidationError as exc:
            raise InvitationError(
                f"Line {line}: {_short(email)!r} is not an e-mail address."
            ) from exc
    username = username_normalized(names[0] if names else email.split("@", 1)[0])
    try:
        if len(username) > 150:
            raise ValidationError("too long")
        _USERNAME(username)
    except ValidationError as exc:
        raise InvitationError(
            f"Line {line}: {_short(username)!r} is not a valid username "
            "(letters, digits and @ . + - _ only; at most 150 characters)."
        ) from exc
    return Person(line, username, email)


def people_parse(*, text: str = "", csv_bytes: bytes | None = None) -> list[Person]:
    """People from pasted lines ("username", "email" or "username, email") or a CSV file with
    the columns `username` and/or `email`. Duplicates are an error, not silently merged."""
    rows: list[tuple[int, list[str], str | None]] = []
    if csv_bytes:
        try:
            decoded = csv_bytes.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise InvitationError("The CSV file is not UTF-8 text.") from exc
        reader = csv.DictReader(io.StringIO(decoded))
        columns = {c.strip().lower() for c in reader.fieldnames or []}
        if not columns & {"username", "email"}:
            raise InvitationError("The CSV file needs a header row with username and/or email.")
        for number, row in enumerate(reader, start=2):
            values = {(k or "").strip().lower(): (v or "") for k, v in row.items()}
            fields = [values.get("username", ""), values.get("email", "")]
            if any(f.strip() for f in fields):
                rows.append((number, fields, None))
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip() and not line.lstrip().startswith("#"):
            rows.append((number, _SPLIT.split(line.strip()), line))
    if not rows:
        raise InvitationError("Give at least one person (one per line).")
    if len(rows) > MAX_PEOPLE:
        raise InvitationError(f"At most {MAX_PEOPLE} people at a time ({len(rows)} given).")
    people = [_person(number, fields, typed) for number, fields, typed in rows]
    seen: dict[str, int] = {}
    for person in people:
        key = person.username.lower()
        if key in seen:
            raise InvitationError(
                f"Line {person.line}: {person.username!r} is already on line {seen[key]}."
            )
        seen[key] = person.line
    return people


def _token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _existing_user(person: Person):
    users = get_user_model().objects
    user = users.filter(username__iexact=person.username).first()
    if user is None and person.email:
        matches = list(users.filter(email__iexact=person.email)[:2])
        user = matches[0] if len(matches) == 1 else None
    if user is not None and person.email and user.email and user.email.lower() != person.email:
        raise InvitationError(
            f"Line {person.line}: the account {user.username!r} has another e-mail address; "
            "add it by username alone, or choose another username."
        )
    return user


def _issue(*, study: ReaderStudy, user, role: str, email: str, actor) -> str:
    token = secrets.token_urlsafe(32)
    Invitation.objects.create(
        study=study,
        user=user,
        role=role,
        email=email,
        token_hash=_token_hash(token),
        created_by=actor,
        expires_at=timezone.now() + timedelta(days=settings.INVITATION_TTL_DAYS),
    )
    return token


def _send(*, study: ReaderStudy, email: str, username: str, link: str) -> None:
    send_mail(
        subject=f"You are invited to the reader study {study.title}",
        message=(
            f'Hello {username},\n\nYou were added to the reader study "{study.title}".\n'
            f"Open this link to choose your password and sign in (it works once, for "
            f"{settings.INVITATION_TTL_DAYS} days):\n\n{link}\n\nYour username is {username}.\n"
        ),
        from_email=None,
        recipient_list=[email],
    )


@transaction.atomic
def people_invite(
    *, study: ReaderStudy, people: list[Person], role: str, actor, link_for
) -> list[Added]:
    """Add everyone or no one. `link_for(token)` makes the absolute sign-in URL (the view knows
    the host); e-mails go out only once the whole list is committed."""
    if role not in (Role.READER, Role.EXPERT):
        raise InvitationError("People can be invited as readers or experts.")
    users = get_user_model()
    added: list[Added] = []
    outbox: list[tuple[str, str, str]] = []
    for person in people:
        user = _existing_user(person)
        try:
            if user is not None:
                member = Membership.objects.filter(study=study, user=user, role=role).exists()
                membership_add(study=study, user=user, role=role, actor=actor)
                added.append(Added(user.username, user.email, True, None, False, member))
                continue
            user = users(username=person.username, email=person.email)
            user.set_unusable_password()
            user.save()
            AuditEvent.objects.create(
                study=study,
                actor=actor,
                action="account.create",
                detail={"user": user.username, "via": "invitation"},
            )
            membership_add(study=study, user=user, role=role, actor=actor)
        except StudyError as exc:
            raise InvitationError(f"Line {person.line} ({person.username}): {exc}") from exc
        token = _issue(study=study, user=user, role=role, email=person.email, actor=actor)
        emailed = bool(person.email) and settings.INVITATION_EMAIL
        if emailed:
            outbox.append((person.email, user.username, link_for(token)))
        added.append(Added(user.username, person.email, False, token, emailed))
    for email, username, link in outbox:
        transaction.on_commit(
            lambda e=email, u=username, li=link: _send(study=study, email=e, username=u, link=li)
        )
    return added


def account_taken_up(user) -> str:
    """Why an invitation's account is past its link, in words ("" while the link may still
    open it): it has a usable password (set on a link, by an admin, by a reset) or has signed
    in. From then on only its owner's password opens it: a link, new or old, would set
    another one and lock the owner out (their API token revoked with it)."""
    if user.has_usable_password():
        return f"{user.get_username()} already has a password"
    if user.last_login is not None:
        return f"{user.get_username()} has already signed in"
    return ""


@transaction.atomic
def invitation_renew(*, invitation: Invitation, actor) -> str:
    """A fresh link for someone who lost theirs, while their account is still only the
    link's; the old one stops working."""
    taken = account_taken_up(invitation.user)
    if taken or invitation.used_at is not None:
        why = taken or f"{invitation.user.username} has already used their link"
        raise InvitationError(
            f"No new link: {why}, and a link would set another one. They sign in with their "
            "own password (forgotten: “Forgot your password?” on the sign-in page, or an "
            "administrator resets it)."
        )
    invitation_revoke(invitation=invitation, actor=actor)
    return _issue(
        study=invitation.study,
        user=invitation.user,
        role=invitation.role,
        email=invitation.email,
        actor=actor,
    )


@transaction.atomic
def invitation_revoke(*, invitation: Invitation, actor) -> None:
    if invitation.revoked_at is None and invitation.used_at is None:
        invitation.revoked_at = timezone.now()
        invitation.save(update_fields=["revoked_at"])
        AuditEvent.objects.create(
            study=invitation.study,
            actor=actor,
            action="invitation.revoke",
            detail={"user": invitation.user.username},
        )


def invitation_for_token(token: str) -> Invitation:
    """The open invitation a link stands for, or an error saying in words why it is closed."""
    invitation = (
        Invitation.objects.select_related("user", "study")
        .filter(token_hash=_token_hash(token or ""))
        .first()
    )
    if invitation is None:
        raise InvitationError("This sign-in link is not valid. Ask your PI for a new one.")
    if invitation.used_at is not None:
        raise InvitationError(
            "This sign-in link was already used. Sign in with your username and password."
        )
    if invitation.revoked_at is not None:
        raise InvitationError("This sign-in link was withdrawn. Ask your PI for a new one.")
    if invitation.expires_at <= timezone.now():
        raise InvitationError("This sign-in link has expired. Ask your PI for a new one.")
    if not invitation.user.is_active:
        raise InvitationError("This account is disabled. Ask your PI.")
    if account_taken_up(invitation.user):
        raise InvitationError(
            "This sign-in link no longer works: the account already has a password. Sign in "
            "with your username and password."
        )
    return invitation


@transaction.atomic
def invitation_accept(*, token: str, password: str):
    """Set the person's password and close the link (single use, even under two tabs)."""
    invitation = invitation_for_token(token)
    invitation = Invitation.objects.select_for_update().get(pk=invitation.pk)
    if invitation.used_at is not None:
        raise InvitationError("This sign-in link was already used.")
    # The account row too, checked again under its lock: a password set since the page was
    # opened (an administrator, a reset) closes this link.
    user = get_user_model().objects.select_for_update().get(pk=invitation.user_id)
    if account_taken_up(user):
        raise InvitationError(
            "This sign-in link no longer works: the account already has a password."
        )
    user.set_password(password)
    user.save(update_fields=["password"])
    invitation.used_at = timezone.now()
    invitation.save(update_fields=["used_at"])
    AuditEvent.objects.create(
        study=invitation.study,
        actor=user,
        action="invitation.accept",
        detail={"user": user.username},
    )
    return user
