"""Lists of people as PIs paste them: from a mail client, a spreadsheet or typed by hand.

No database here: each line becomes one or more `Person`s (username and/or e-mail, and a
display name when the line gives one), and every line that cannot is named with why, all at
once, so the PI corrects the list in one go. Whether someone already has an account is the
invitation service's question (readerstudy.services.invitations).

A line may be:
- `jdoe`, `jane.doe@hospital.org`, `jdoe, jane.doe@hospital.org` (also `;`, a tab or spaces
  between them);
- what a mail client copies: `Ben Okafor <ben.okafor@hospital.org>`,
  `"Okafor, Ben" <ben.okafor@hospital.org>`, or several such addresses separated by `;` or `,`;
- a spreadsheet row (cells separated by tabs or semicolons): `Ben Okafor<TAB>ben@h.org`,
  `Ben<TAB>Okafor<TAB>ben@h.org`, `bokafor<TAB>Ben Okafor<TAB>ben@h.org`.
A line starting with `#` is a comment.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass

from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core.exceptions import ValidationError
from django.core.validators import validate_email

from readerstudy.platform.accounts import username_normalized

MAX_PEOPLE = 500
USERNAME_MAX = 150
NAME_MAX = 150  # first and last name together (Django's User has 150 each)
_USERNAME = UnicodeUsernameValidator()
_ANGLE = re.compile(r'^(?:"?(?P<name>[^"<>]*?)"?\s*)?<(?P<address>[^<>]*)>$')
_NOT_USERNAME = re.compile(r"[^\w.@+-]")


class ListError(ValueError):
    """Lines that cannot be read; `problems` says which and why, one sentence each."""

    def __init__(self, problems: list[str]):
        super().__init__(" ".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class Person:
    line: int
    username: str  # typed, or made from the e-mail address (`typed` False)
    email: str
    name: str = ""
    typed: bool = True  # the username was written on the line (not made from the address)


def short(value: str) -> str:
    return value if len(value) <= 60 else value[:57] + "…"


def _segments(line: str) -> list[str]:
    """The line cut at `;`, `,` and tabs outside double quotes and angle brackets."""
    parts, current, quoted, angle = [], [], False, False
    for char in line:
        if char == '"' and not angle:
            quoted = not quoted
        elif char == "<" and not quoted:
            angle = True
        elif char == ">" and not quoted:
            angle = False
        if char in ",;\t" and not quoted and not angle:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return [p.strip() for p in parts if p.strip()]


@dataclass
class _Fields:
    emails: list[str]
    tokens: list[str]  # single words: usernames, or a first and a last name
    names: list[str]  # several words, or a mail client's display name


def _fields(segment: str, into: _Fields) -> None:
    angle = _ANGLE.match(segment)
    if angle:
        into.emails.append(angle["address"].strip())
        if angle["name"] and angle["name"].strip():
            into.names.append(angle["name"].strip())
        return
    words = segment.strip('"').split()
    if "@" in segment:
        into.emails += [w for w in words if "@" in w]
        rest = [w for w in words if "@" not in w]
        if len(rest) == 1:
            into.tokens.append(rest[0])
        elif rest:
            into.names.append(" ".join(rest))
    elif len(words) == 1:
        into.tokens.append(words[0])
    elif words:
        into.names.append(" ".join(words))


def derived_username(email: str) -> str:
    """A username from an address's local part (`ben.okafor@h.org` -> `ben.okafor`)."""
    local = _NOT_USERNAME.sub("", username_normalized(email.split("@", 1)[0]))[:USERNAME_MAX]
    return local or "user"


def _person(line: int, typed_line: str, fields: _Fields) -> Person:
    """One person from one line's fields, or a ListError naming the line."""

    def refuse(why: str) -> ListError:
        return ListError([f"Line {line} ({short(typed_line.strip())!r}): {why}"])

    emails, tokens, names = fields.emails, fields.tokens, fields.names
    if len(tokens) >= 2 and len(emails) == 1 and not names:
        names, tokens = [" ".join(tokens)], []  # First<TAB>Last<TAB>address
    if len(emails) > 1:
        raise refuse("give one e-mail address per person (or one person per address).")
    if len(tokens) > 1 or len(names) > 1:
        raise refuse("give a username, an e-mail address, or both, and at most one name.")
    if not tokens and not emails:
        raise refuse("give a username or an e-mail address for this person.")
    email = emails[0].lower() if emails else ""
    if email:
        try:
            validate_email(email)
        except ValidationError:
            raise refuse(f"{short(email)!r} is not an e-mail address.") from None
    name = names[0] if names else ""
    if len(name) > NAME_MAX:
        raise refuse(f"a name has at most {NAME_MAX} characters.")
    if tokens:
        username = username_normalized(tokens[0])
        try:
            if len(username) > USERNAME_MAX:
                raise ValidationError("too long")
            _USERNAME(username)
        except ValidationError:
            raise refuse(
                f"{short(username)!r} is not a valid username (letters, digits and "
                f"@ . + - _ only; at most {USERNAME_MAX} characters)."
            ) from None
        return Person(line, username, email, name, typed=True)
    return Person(line, derived_username(email), email, name, typed=False)


def _people_of_line(line: int, text: str) -> list[Person]:
    segments = _segments(text)
    parsed = []
    for segment in segments:
        one = _Fields([], [], [])
        _fields(segment, one)
        parsed.append(one)
    # Several addresses, each with its own name (a mail client's recipient list): one person
    # each. Anything else on the line is one person.
    if len(parsed) > 1 and all(len(p.emails) == 1 and not p.tokens for p in parsed):
        return [_person(line, text, p) for p in parsed]
    merged = _Fields([], [], [])
    for p in parsed:
        merged.emails += p.emails
        merged.tokens += p.tokens
        merged.names += p.names
    return [_person(line, text, merged)]


def _csv_rows(csv_bytes: bytes) -> list[tuple[int, str, _Fields]]:
    """(line, the row as typed, its fields) of a CSV with the columns username and/or email
    (and name)."""
    try:
        decoded = csv_bytes.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ListError(["The CSV file is not UTF-8 text."]) from None
    # Universal newlines: a file saved with CR line endings (old Excel for Mac) reads too.
    reader = csv.DictReader(io.StringIO(decoded, newline=None))
    rows = []
    try:
        columns = {(c or "").strip().lower() for c in reader.fieldnames or []}
        if not columns & {"username", "email"}:
            raise ListError(["The CSV file needs a header row with username and/or email."])
        for row in reader:
            values = {(k or "").strip().lower(): (v or "") for k, v in row.items() if k}
            name, username, email = (
                values.get(c, "").strip() for c in ("name", "username", "email")
            )
            if name or username or email:
                fields = _Fields(
                    [email] if email else [], [username] if username else [], [name] if name else []
                )
                rows.append(
                    (reader.line_num, ", ".join(c for c in (name, username, email) if c), fields)
                )
    except csv.Error as exc:
        where = f"line {reader.line_num}" if reader.line_num else "its start"
        raise ListError(
            [
                f"The CSV file cannot be read at {where}: {exc}. A cell may be far too long "
                f"(over {csv.field_size_limit():,} characters) or a quote left open."
            ]
        ) from None
    return rows


def people_parse(*, text: str = "", csv_bytes: bytes | None = None) -> list[Person]:
    """Everyone on the pasted lines and in the CSV file (columns username, email and
    optionally name). Every bad line is named at once (ListError.problems); a person given
    twice is an error, not silently merged."""
    rows: list[tuple[int, str, _Fields | None]] = _csv_rows(csv_bytes) if csv_bytes else []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip() and not line.lstrip().startswith("#"):
            rows.append((number, line, None))
    if not rows:
        raise ListError(["Give at least one person (one per line)."])
    if len(rows) > MAX_PEOPLE:
        raise ListError([f"At most {MAX_PEOPLE} people at a time ({len(rows)} given)."])
    people: list[Person] = []
    problems: list[str] = []
    for number, line, fields in rows:
        try:
            people += (
                _people_of_line(number, line) if fields is None else [_person(number, line, fields)]
            )
        except ListError as exc:
            problems += exc.problems
    problems += _duplicates(people)
    if problems:
        raise ListError(problems)
    return _unique_derived(people)


def _duplicates(people: list[Person]) -> list[str]:
    problems, usernames, emails = [], {}, {}
    for person in people:
        if person.typed:
            key = person.username.lower()
            if key in usernames:
                problems.append(
                    f"Line {person.line}: {person.username!r} is already on line {usernames[key]}."
                )
            usernames.setdefault(key, person.line)
        if person.email:
            if person.email in emails:
                first = emails[person.email]
                problems.append(f"Line {person.line}: {person.email!r} is already on line {first}.")
            emails.setdefault(person.email, person.line)
    return problems


def _unique_derived(people: list[Person]) -> list[Person]:
    """Usernames made from addresses never clash with one another or with a typed one
    (`jane.doe@a.org` and `jane.doe@b.org` become `jane.doe` and `jane.doe2`)."""
    taken = {p.username.lower() for p in people if p.typed}
    out = []
    for person in people:
        if not person.typed:
            username = unused(person.username, taken)
            person = Person(person.line, username, person.email, person.name, typed=False)
        taken.add(person.username.lower())
        out.append(person)
    return out


def unused(username: str, taken) -> str:
    """`username`, or `username2`, `username3` … : the first not in `taken` (lower case)."""
    candidate, n = username, 1
    while candidate.lower() in taken:
        n += 1
        suffix = str(n)
        candidate = username[: USERNAME_MAX - len(suffix)] + suffix
    return candidate
