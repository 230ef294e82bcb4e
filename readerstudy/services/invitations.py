"""Bringing people into a study from the browser: accounts, memberships and one-time links.

A PI pastes a list (or uploads a CSV) of usernames and/or e-mail addresses, in the forms mail
clients and spreadsheets give (readerstudy.invite_lists). People who already have an account
are added to the study at once; everyone else gets an account with no usable password and a
one-time sign-in link on which they choose their own password. The whole list is checked before
anything is written: every line that cannot be added is named, and nobody is added.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.mail import send_mail
from django.db import transaction
from django.utils import timezone

from readerstudy import invite_lists
from readerstudy.invite_lists import ListError, Person, derived_username, unused
from readerstudy.models import AuditEvent, Invitation, Membership, ReaderStudy, Role
from readerstudy.services.studies import StudyError, membership_add

__all__ = ["InvitationError", "Person", "people_invite", "people_parse"]


class InvitationError(ListError):
    """A list of people that cannot be added as given; `problems` says which line and why."""

    def __init__(self, problems: list[str] | str):
        super().__init__([problems] if isinstance(problems, str) else problems)


def people_parse(*, text: str = "", csv_bytes: bytes | None = None) -> list[Person]:
    """Everyone on the pasted lines and in the CSV file (readerstudy.invite_lists); every bad
    line named at once."""
    try:
        return invite_lists.people_parse(text=text, csv_bytes=csv_bytes)
    except ListError as exc:
        raise InvitationError(exc.problems) from None


@dataclass(frozen=True)
class Added:
    username: str
    email: str
    existing: bool
    link_token: str | None  # the secret, shown to the PI once; None for existing accounts
    emailed: bool
    already_member: bool = False  # already had this role in the study: nothing changed
    name: str = ""  # as the list gave it, or the existing account's


def _token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _existing_user(person: Person):
    """The account the line means, None for a new one, or InvitationError when the line
    would add someone other than the PI meant. A typed username is that account, or a new
    one, never the account that happens to hold the address; an address alone is its account
    (several accounts share it: say so)."""
    users = get_user_model().objects
    if person.typed:
        user = users.filter(username__iexact=person.username).first()
        if user is not None and person.email and user.email and user.email.lower() != person.email:
            raise InvitationError(
                f"Line {person.line}: the account {user.username!r} has another e-mail "
                "address; add it by username alone, or choose another username."
            )
        if user is None and person.email:
            holder = users.filter(email__iexact=person.email).first()
            if holder is not None:
                raise InvitationError(
                    f"Line {person.line}: {person.email} is the e-mail address of the account "
                    f"{holder.username!r}, not of {person.username!r}. To add that person, "
                    f"write {holder.username} (or the address alone); to create the account "
                    f"{person.username!r}, give it another address."
                )
        return user
    matches = list(users.filter(email__iexact=person.email)[:3])
    if len(matches) > 1:
        names = ", ".join(repr(u.username) for u in matches[:2])
        raise InvitationError(
            f"Line {person.line}: several accounts have the address {person.email} "
            f"({names}…): write the username of the one you mean."
        )
    return matches[0] if matches else None


def _split_name(name: str) -> tuple[str, str]:
    """(first, last) from "Ben Okafor" or "Okafor, Ben"."""
    if "," in name:
        last, _, first = name.partition(",")
        return first.strip()[:150], last.strip()[:150]
    first, _, last = name.strip().rpartition(" ")
    return (first, last) if first else (last[:150], "")


def _new_username(person: Person, taken: set[str]) -> str:
    """A username made from the address, free in the database and in this list
    (`jane.doe2` when `jane.doe` is someone else's): the PI did not choose it, so it never
    means an existing account. `taken`: the list's usernames so far (lower case)."""
    if person.typed:
        return person.username
    stem = derived_username(person.email)
    existing = get_user_model().objects.filter(username__istartswith=stem)
    return unused(stem, taken | {u.lower() for u in existing.values_list("username", flat=True)})


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
    problems: list[str] = []
    found: dict[int, object] = {}
    for index, person in enumerate(people):  # every line checked before anything is written
        try:
            found[index] = _existing_user(person)
        except InvitationError as exc:
            problems += exc.problems
    if problems:
        raise InvitationError(problems)
    taken = {p.username.lower() for p in people if p.typed}
    for index, person in enumerate(people):
        user = found[index]
        try:
            if user is not None:
                member = Membership.objects.filter(study=study, user=user, role=role).exists()
                membership_add(study=study, user=user, role=role, actor=actor)
                name = user.get_full_name()
                added.append(Added(user.username, user.email, True, None, False, member, name))
                continue
            first, last = _split_name(person.name) if person.name else ("", "")
            user = users(
                username=_new_username(person, taken),
                email=person.email,
                first_name=first,
                last_name=last,
            )
            user.set_unusable_password()
            user.save()
            taken.add(user.username.lower())
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
        added.append(
            Added(user.username, person.email, False, token, emailed, False, user.get_full_name())
        )
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
