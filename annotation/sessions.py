"""Where a reader is in a study's design: which session (1, or 2 of a crossover), in which
arm, and when session 2 opens (the washout after they finished session 1).

A study without a design has one session in the unaided arm, and this costs no query.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from django.db.models import QuerySet
from django.utils import timezone

from annotation.models import Answer, ReaderCompletion
from readerstudy.design.assignments import assignment_for
from readerstudy.design.rules import DESIGN_FIELDS
from readerstudy.locks import design_lock
from readerstudy.models import ReaderAssignment, ReaderStudy
from readerstudy.vocabulary import Arm


@dataclass(frozen=True)
class Reading:
    session: int
    sessions: int
    arm: str
    aid_mode: str  # "" in the unaided arm
    assignment: ReaderAssignment | None
    opens_at: datetime | None = None  # session 2: the end of the washout
    is_open: bool = True
    layout: str = ""  # layout_stamp: what a page's case numbers and letters were made under

    @property
    def aided(self) -> bool:
        return self.arm == Arm.AIDED

    @property
    def store_key(self) -> str:
        """Suffix of the page's local draft store: session 2 never sees session 1's drafts."""
        return f":s{self.session}" if self.session > 1 else ""


LEGACY = Reading(session=1, sessions=1, arm=Arm.UNAIDED, aid_mode="", assignment=None)

# The study's fields a reader's reading depends on (reading_of, layout_stamp): the design,
# the order setting and the seed it draws from.
READING_FIELDS = (*DESIGN_FIELDS, "random_order", "seed")
UNSTAMPED = ("washout_days", "confidence_scale")


def layout_stamp(study: ReaderStudy, session: int, assignment: ReaderAssignment | None) -> str:
    """A short stamp of everything that decides which case a number is and which option a
    letter is on this reader's screen: the design (arms, aid, groups, anchor, shuffling), the
    order setting, the reader's assignment and session. A PI may change the design until
    the first answer (the Design page); a page, a draft or an unsent answer made under the
    old one would otherwise land on another case or another option. Not the washout nor the
    confidence scale: they move no case and no letter (the page says the scale it asked the
    rating on apart, and an answer from another scale's page is refused in words:
    annotation.services.scale_check)."""
    parts = (
        *(getattr(study, name) for name in READING_FIELDS if name not in UNSTAMPED),
        session,
        (assignment.first_arm, assignment.reader_group, assignment.order_seed)
        if assignment
        else None,
    )
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:12]


def hold_design(study: ReaderStudy) -> None:
    """Inside a transaction that saves a reader's work (an answer, a finish): wait for a
    design change in flight, then read the study's reading fields as they now stand; a change
    waits in turn until this transaction ends (readerstudy.locks)."""
    design_lock(study.pk, shared=True)
    study.refresh_from_db(fields=[*READING_FIELDS, "reading_closed_at"])


def reading_of(study: ReaderStudy, reader, now: datetime | None = None) -> Reading:
    """The reader's current session. Session 2 is current once session 1 is finished; it is
    open when the washout has passed since that finish."""
    if not study.designed:
        return replace(LEGACY, layout=layout_stamp(study, 1, None))
    assignment = assignment_for(study=study, reader=reader)
    arms = study.arm_list
    session, opens_at, is_open = 1, None, True
    if len(arms) > 1:
        first = (
            ReaderCompletion.objects.filter(study=study, reader=reader, session=1)
            .values_list("finished_at", flat=True)
            .first()
        )
        if first is not None:
            session = 2
            opens_at = session_opens(study, first)
            is_open = (now or timezone.now()) >= opens_at
    arm = assignment.arm_of(session)
    return Reading(
        session=session,
        sessions=len(arms),
        arm=arm,
        aid_mode=study.aid_mode if arm == Arm.AIDED else "",
        assignment=assignment,
        opens_at=opens_at,
        is_open=is_open,
        layout=layout_stamp(study, session, assignment),
    )


def moment_words(when: datetime) -> str:
    """A reader's session moment (when it opens, when it was finished) as every page, message
    and the API's words say it, with the time zone: "Thursday 3 December 2026 at 03:29 UTC".
    Templates use it as the `moment` filter (annotation_tags)."""
    local = timezone.localtime(when)
    zone = timezone.get_current_timezone_name()
    return f"{local:%A} {local.day} {local:%B %Y} at {local:%H:%M} {zone}"


def washout_message(reading: Reading) -> str:
    """Why nothing can be answered yet, said alike on the reading and home pages and by the
    API: the session and when it opens."""
    return (
        f"Your second session ({reading.arm}) opens on {moment_words(reading.opens_at)}, "
        "after the study's washout. Nothing can be answered before then."
    )


def session_opens_words(study: ReaderStudy, opens_at: datetime | None) -> str:
    """When a reader's session 2 opens, in plain words: the date once session 1 is finished,
    else the rule ("when session 1 is finished", "7 days after session 1 is finished")."""
    if opens_at is not None:
        return moment_words(opens_at)
    if not study.washout_days:
        return "when session 1 is finished"
    days = study.washout_days
    return f"{days} day{'s' if days != 1 else ''} after session 1 is finished"


def session_opens(study: ReaderStudy, finished_at: datetime | None) -> datetime | None:
    """When session 2 opens for a reader who finished session 1 at `finished_at`."""
    if finished_at is None or not study.crossover:
        return None
    return finished_at + timedelta(days=study.washout_days)


# Which of a reader's answers count when readers are counted (the expert queue, the item
# analysis, the evidence panel, the review page's "what readers said"): the rule lives here,
# once, so annotation's pages and analysis count the same readers.


def counted_arm(study: ReaderStudy) -> str:
    """The arm whose answers count: the study's first arm. In a crossover that is the unaided
    session: each reader once per question, alone (their aided answers lean on the model's,
    and counting both sessions would count one reader twice)."""
    return study.arm_list[0]


def counted_answers(study: ReaderStudy) -> QuerySet[Answer]:
    """The study's answers that count (`counted_arm`), one per reader and question."""
    return Answer.objects.filter(item__study=study, arm=counted_arm(study))


def counted_scope(study: ReaderStudy) -> str:
    """`counted_arm` in words for a two-arm study's pages; empty for a one-arm study."""
    arms = study.arm_list
    if len(arms) < 2:
        return ""
    return (
        f"Each reader counts once per question, from their {counted_arm(study)} session: "
        f"readers read every case twice ({' and '.join(arms)})"
    )
