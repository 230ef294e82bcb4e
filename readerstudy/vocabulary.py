"""The study's vocabulary, defined once: answer letters, ratings, review flags and decisions.

Models use these choices for their fields and database constraints; forms, serializers and the
templates take their choices from here, and the reader's keyboard shortcuts are rendered from
`SHORTCUTS` into `data-key` attributes so the JavaScript never re-states them. The pure
statistics package keeps its own copy of the letters (it imports no Django); a test pins it to
`LETTERS`.

Adding an answer field (say, "image quality: good, fair, poor"): add its choices here with
their shortcut keys and an entry in `ANSWER_FIELDS`, then see docs/architecture.md ("Adding an
answer field") for the short list of files that follow (the form, the API, the service and the
exports take the list from here).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import models


class Letter(models.TextChoices):
    """The four options of a ReXVQA question."""

    A = "A", "A"
    B = "B", "B"
    C = "C", "C"
    D = "D", "D"


LETTERS: tuple[str, ...] = tuple(Letter.values)


class Arm(models.TextChoices):
    """A reading arm: readers alone, or with an AI model's answer on screen."""

    UNAIDED = "unaided", "Unaided"
    AIDED = "aided", "Aided"


class AidMode(models.TextChoices):
    """How the AI's answer is shown in the aided arm."""

    CONCURRENT = "concurrent", "concurrent (shown with the case)"
    SECOND_READ = "second-read", "second read (shown after an unaided answer)"


# The arm layouts a study may have, in reading order before counterbalancing.
ARM_LAYOUTS: dict[str, tuple[str, ...]] = {
    "unaided": (Arm.UNAIDED,),
    "aided": (Arm.AIDED,),
    "unaided,aided": (Arm.UNAIDED, Arm.AIDED),
}

# What the aided arm says when the model has no usable answer for a question.
NO_USABLE_AID = "The AI gave no usable answer for this question."


class StudyKind(models.TextChoices):
    """What a study is for. A research study's answers are the data of its analysis; a
    practice set shows each reader the key and the explanation after every answer, and its
    answers are marked practice (annotation.Answer.practice) so no research analysis counts
    them."""

    RESEARCH = "research", "Research study"
    PRACTICE = "practice", "Practice set"


class ResultsVisibility(models.TextChoices):
    """When a research study's reader may open their debrief (their answers beside the key,
    the explanation and the panel). Never by default; "closed" waits until nobody is reading
    any more (every reader finished, or the PI closed reading), so that no key can pass to a
    colleague still reading. Whatever the setting, blinding by person holds
    (readerstudy.blinding): nothing opens while the person reads the same X-rays blind."""

    NEVER = "never", "Never"
    OWN_FINAL = "own_final", "When the reader's own reading is final"
    CLOSED = (
        "closed",
        "When the study's reading is closed (every reader finished, or closed by a PI)",
    )


# "Practise my misses": the set comes back this many days after each sitting.
PRACTICE_INTERVALS: dict[int, str] = {1: "1 day", 7: "1 week", 30: "1 month"}
# Unseen questions of the same task and category a PI may let a misses set add per miss.
MAX_UNSEEN_PER_MISS = 3


class WindowPreset(models.TextChoices):
    """The viewer's window presets, in the order of their keys (Shift+1 ... Shift+5).
    "default" is the image's own window: its DICOM window when that is a reading window,
    else "auto" (readerstudy.imaging.derive.window_presets)."""

    DEFAULT = "default", "Default"
    SOFT = "soft", "Soft tissue"
    LUNG = "lung", "Lung"
    BONE = "bone", "Bone"
    AUTO = "auto", "Auto"


class Difficulty(models.TextChoices):
    EASY = "easy", "Easy"
    MEDIUM = "medium", "Medium"
    HARD = "hard", "Hard"


class Alignment(models.TextChoices):
    """Does the question fit this image?"""

    YES = "yes", "Yes"
    PARTLY = "partly", "Partly"
    NO = "no", "No"


class ReviewFlag(models.TextChoices):
    """Problems the ReXVQA expert review found in questions."""

    MULTIPLE_VALID = "multiple_valid", "Multiple valid answers"
    COMPARISON = "comparison", "Unnecessary comparison content"
    CLINICALLY_INVALID = "clinically_invalid", "Clinically invalid"
    HALLUCINATED = "hallucinated", "Finding not supported by the report"
    IMAGE_MISMATCH = "image_mismatch", "Image does not match the question"
    OTHER = "other", "Other"


class Decision(models.TextChoices):
    ACCEPT = "accept", "Accept"
    REVISE = "revise", "Revise"
    REJECT = "reject", "Reject"


class ConfidenceScale(models.TextChoices):
    """Whether a study asks readers how sure they are of each answer, and on which scale
    (ReaderStudy.confidence_scale; CONFIDENCE_SCALES describes each). The rating is always
    the reader's confidence that *their answer is right*: on a binary question it makes the
    ROC rating with the answer (Scale.roc_rating), on any question its calibration."""

    NONE = "none", "No confidence rating"
    FIVE = "1-5", "1-5, a label on every point"
    PERCENT = "0-100", "0-100 %, the chance the answer is right"


@dataclass(frozen=True)
class Scale:
    """One confidence scale: its whole-number points `lowest`..`highest`, the labels a
    reader sees (every point of an ordinal scale, the ends of a fine one), and the question
    the page asks. `ordinal`: each point is a level with a key of its own; otherwise a fine
    scale (a probability in per cent) typed or stepped with the arrow keys."""

    lowest: int
    highest: int
    labels: dict[int, str]
    prompt: str
    ordinal: bool

    @property
    def points(self) -> range:
        return range(self.lowest, self.highest + 1)

    def refusal(self) -> str:
        """What a reader is told when a rating is missing or off the scale."""
        return f"Rate your confidence with a whole number from {self.lowest} to {self.highest}."

    def roc_rating(self, *, present: bool, confidence: int) -> float:
        """A binary question's ROC rating from the reader's answer and confidence: higher means
        more sure the finding is present. On the fine scale, the probability (per cent) that
        the finding is present (100 - confidence for an answer of "absent"); on an ordinal
        one, 2 x its points: "certain absent" lowest, then less sure "absent", then "present"
        from the least sure to "certain present" (1-10 on a 1-5 scale), as ROC studies order
        a confidence-in-the-answer scale."""
        if not self.ordinal:
            return float(confidence if present else self.highest + self.lowest - confidence)
        levels = self.highest - self.lowest + 1
        if present:
            return float(levels + confidence - self.lowest + 1)
        return float(self.highest - confidence + 1)

    @property
    def rule(self) -> str:
        """`roc_rating` in words: what every ROC output (methods.md, README.txt, the page)
        says the ratings are."""
        if not self.ordinal:
            return (
                "rating = the reader's probability (%) that the finding is present: the "
                "confidence after the 'present' option, "
                f"{self.highest + self.lowest} − confidence after an 'absent' one"
            )
        levels = self.highest - self.lowest + 1
        sure = self.labels.get(self.highest, str(self.highest))
        return (
            f"rating on a {2 * levels}-point scale, the answer deciding the half and the "
            f"confidence c the distance from the middle: 'present' = {levels} + (c − "
            f"{self.lowest}) + 1, 'absent' = {self.highest} − c + 1 (1: absent, {sure}; "
            f"{2 * levels}: present, {sure})"
        )


CONFIDENCE_SCALES: dict[str, Scale] = {
    ConfidenceScale.FIVE: Scale(
        1,
        5,
        {1: "Guessing", 2: "Unsure", 3: "Fairly sure", 4: "Confident", 5: "Certain"},
        "How sure are you of your answer?",
        ordinal=True,
    ),
    ConfidenceScale.PERCENT: Scale(
        0,
        100,
        {0: "surely wrong", 100: "surely right"},
        "How likely is your answer right (0-100 %)?",
        ordinal=False,
    ),
}
# Every value any scale allows: the database constraint on Answer.confidence.
CONFIDENCE_BOUNDS: tuple[int, int] = (
    min(scale.lowest for scale in CONFIDENCE_SCALES.values()),
    max(scale.highest for scale in CONFIDENCE_SCALES.values()),
)


def confidence_scale(name: str) -> Scale | None:
    """The scale a study's `confidence_scale` names; None when it asks for no rating."""
    return CONFIDENCE_SCALES.get(name)


def _same(value: str) -> str:
    return value


def _whole(value: str) -> int | str | None:
    """A confidence as submitted: None when empty, a whole number, else the text (refused by
    the check against the study's scale)."""
    text = value.strip()
    if not text:
        return None
    return int(text) if re.fullmatch(r"[+-]?[0-9]{1,6}", text) else text


@dataclass(frozen=True)
class AnswerField:
    """One field of a reader's answer, described once: the reading page's form, the API's
    serializers, the answer service's checks and the answers export are built from these.

    `noun`: what the field is called where an answer is summed up ("Confidence: 2 Unsure"),
    as `label` may be the question the reader answers;
    `choices`: the allowed values (None: free text of at most `max_length` characters);
    `error`: what a reader is told when a value is refused; `clean`: how a submitted value is
    normalised before it is checked (the letter, typed in either case). `scaled`: a point of
    the study's confidence scale (a whole number, None when not given), required exactly when
    the study has a scale and refused when it has none (Scale.refusal says why)."""

    name: str
    choices: type[models.TextChoices] | None
    error: str
    label: str | None = None
    required: bool = False
    max_length: int = 10_000
    clean: Callable[[str], Any] = _same
    scaled: bool = False
    noun: str = ""


ANSWER_FIELDS: tuple[AnswerField, ...] = (
    AnswerField(
        "choice",
        Letter,
        "Choose one of the options A-D.",
        required=True,
        clean=lambda value: value.strip().upper(),
    ),
    AnswerField(
        "confidence",
        None,
        "This study asks for no confidence rating.",
        label="Confidence",
        clean=_whole,
        scaled=True,
        noun="Confidence",
    ),
    AnswerField(
        "difficulty", Difficulty, "Difficulty must be easy, medium or hard.", noun="Difficulty"
    ),
    AnswerField(
        "alignment",
        Alignment,
        "Image alignment must be yes, partly or no.",
        label="Does the question fit this image?",
        noun="Fits the image",
    ),
    AnswerField(
        "comment",
        None,
        "The comment is too long (10,000 characters at most).",
        clean=str.strip,
    ),
)
ANSWER_FIELD_NAMES: tuple[str, ...] = tuple(field.name for field in ANSWER_FIELDS)

# The expert's four 1-5 quality ratings (ExpertReview fields).
RATING_FIELDS = (
    "clinical_quality",
    "explanation_clarity",
    "factual_correctness",
    "image_alignment",
)
RATING_RANGE = range(1, 6)

# Reader keyboard shortcuts: field -> value -> keys (the first is shown on screen).
SHORTCUTS: dict[str, dict[str, tuple[str, ...]]] = {
    "choice": {
        letter: (str(number), letter.lower()) for number, letter in enumerate(LETTERS, start=1)
    },
    "difficulty": {Difficulty.EASY: ("e",), Difficulty.MEDIUM: ("m",), Difficulty.HARD: ("h",)},
    "alignment": {Alignment.YES: ("y",), Alignment.PARTLY: ("p",), Alignment.NO: ("n",)},
}

# The reading page's own keys besides the answer's (rendered into the markup like SHORTCUTS):
# `c` and `m` are taken (option C, medium difficulty), so the comment is `t` ("type"); Pause is
# `k`, as in video players; `r` opens the review page (all cases and the final submit, where
# the focus starts on "I have finished": Space, Enter). The viewer's keys are
# static/js/viewer-keys.js's (KEYS).
# `s` ("sure") moves into a fine confidence scale's box, to type the number (arrows step it).
PAGE_SHORTCUTS: dict[str, str] = {"comment": "t", "pause": "k", "review": "r", "confidence": "s"}

# An ordinal confidence scale's keys: its digits (1-5). On a study with such a scale the digits
# rate confidence, so the options keep only their letters (a-d) as keys (`answer_shortcuts`).
CONFIDENCE_SHORTCUTS: dict[str, tuple[str, ...]] = {
    str(point): (str(point),) for point in CONFIDENCE_SCALES[ConfidenceScale.FIVE].points
}


def answer_shortcuts(scale: str) -> dict[str, dict[str, tuple[str, ...]]]:
    """The reading page's answer keys (field -> value -> keys) under a study's confidence
    scale `scale` (a ConfidenceScale value)."""
    found = confidence_scale(scale)
    if found is None or not found.ordinal:
        return SHORTCUTS
    letters_only = {
        letter: tuple(key for key in keys if not key.isdigit())
        for letter, keys in SHORTCUTS["choice"].items()
    }
    return {**SHORTCUTS, "choice": letters_only, "confidence": CONFIDENCE_SHORTCUTS}


# The results pages' keys (a reader's debrief and a case of it in the viewer), rendered into
# data-key attributes like the reading page's; static/js/results.js reads them from the markup.
# None is a viewer key (static/js/viewer-keys.js KEYS).
RESULTS_SHORTCUTS: dict[str, str] = {
    "misses": "m",  # to "my misses" (the first one focused: Enter opens it in the viewer)
    "practise": "p",  # to "practise my misses"
    "prev": "ArrowLeft",  # the miss before, in the viewer
    "next": "ArrowRight",  # the next miss
    "back": "b",  # back to the results
}

# Expert review keyboard shortcuts, rendered into `data-keys` attributes like the reader's.
# A digit sets the first quality not yet rated (or the one with the focus); "d" accepts the
# defaults below for everything still unset; Enter saves and opens the next question.
REVIEW_SHORTCUTS: dict[str, dict[str, tuple[str, ...]]] = {
    "flags": {
        ReviewFlag.MULTIPLE_VALID: ("u",),
        ReviewFlag.COMPARISON: ("c",),
        ReviewFlag.CLINICALLY_INVALID: ("k",),
        ReviewFlag.HALLUCINATED: ("s",),
        ReviewFlag.IMAGE_MISMATCH: ("x",),
        ReviewFlag.OTHER: ("o",),
    },
    "rating": {str(value): (str(value),) for value in RATING_RANGE},
    "difficulty": SHORTCUTS["difficulty"],
    "decision": {Decision.ACCEPT: ("a",), Decision.REVISE: ("v",), Decision.REJECT: ("r",)},
}
REVIEW_DEFAULTS_KEY = "d"

# What "accept the defaults" fills in for a question judged fine: a middle-high rating and
# medium difficulty...
REVIEW_DEFAULTS: dict[str, str] = {
    **{name: "4" for name in RATING_FIELDS},
    "difficulty": Difficulty.MEDIUM,
}
# ...and for one with a problem (a flag checked, or one of these decisions): only what the
# expert judged — the ratings a checked flag speaks against, and the difficulty. The other
# ratings stay "not rated": a 4 nobody gave would be data.
# "Revise" says the question needs a correction: a problem, like a reject.
PROBLEM_DECISIONS: tuple[str, ...] = (Decision.REJECT, Decision.REVISE)
REVIEW_PROBLEM_DEFAULTS: dict[str, str] = {"difficulty": Difficulty.MEDIUM}
# A review of a question judged fine (accepted, nothing flagged) rates all four qualities;
# with a problem, ratings are optional.
# The rating a checked flag speaks against.
FLAG_RATING_DEFAULTS: dict[str, dict[str, str]] = {
    ReviewFlag.IMAGE_MISMATCH: {"image_alignment": "1"},
    ReviewFlag.HALLUCINATED: {"factual_correctness": "2"},
    ReviewFlag.CLINICALLY_INVALID: {"clinical_quality": "2"},
}


def labelled(choices: type[models.TextChoices]) -> dict[str, str]:
    """value -> human label, for exports and pages that show stored codes."""
    return dict(choices.choices)


# ---------- corrections, adjudication and key versions ----------


class ErrorType(models.TextChoices):
    """What a proposed correction says is wrong with a question: the fixed taxonomy every
    form, API, page and export of a correction speaks (after MMLU-Redux's and the ReXVQA
    expert review's categories)."""

    WRONG_KEY = "wrong_key", "Wrong key"
    SEVERAL_VALID = "several_valid", "Several valid answers"
    NO_VALID = "no_valid", "No valid answer"
    UNCLEAR_QUESTION = "unclear_question", "Unclear question"
    UNCLEAR_OPTIONS = "unclear_options", "Unclear options"
    COMPARISON = "comparison", "Unnecessary comparison content"
    IMAGE_MISMATCH = "image_mismatch", "Image does not match"
    OTHER = "other", "Other"


class AdjudicationRule(models.TextChoices):
    """Who turns a proposed correction into the key, set per study."""

    PI = "pi", "A PI decides"
    EXPERTS = "experts", "N of the study's experts agree"


class ProposalStatus(models.TextChoices):
    OPEN = "open", "Open"
    ACCEPTED = "accepted", "Accepted"
    REJECTED = "rejected", "Rejected"
    WITHDRAWN = "withdrawn", "Withdrawn"


class ProposalKind(models.TextChoices):
    CORRECTION = "correction", "Correction"
    REVERSAL = "reversal", "Reversal of a decision"


class VersionChange(models.TextChoices):
    """What a version of a question changed against the one before it. Only words shown to
    readers (the stem, the options) make a new wording: a version that changes only the key or
    the accepted answers re-scores every answer, one that changes the words leaves earlier
    answers scored against the words their readers saw (readerstudy.keys)."""

    ORIGINAL = "original", "As imported"
    KEY = "key", "Key or accepted answers"
    WORDING = "wording", "Words shown to readers"
    EXPLANATION = "explanation", "Explanation only"


class KeyPolicy(models.TextChoices):
    """Which keys score answers (readerstudy.keys.KeyBook)."""

    ORIGINAL = "original", "Original keys (as imported)"
    ADJUDICATED = "adjudicated", "Keys as adjudicated"


# The keys every output scores by unless asked otherwise (the analysis's `key` switch, its API
# parameter and export flag, a reader's debrief and practice feedback): the adjudicated ones.
# Until a correction is accepted for a question its adjudicated key is its imported one
# (version 1), so this one default is "adjudicated once any correction is accepted, else the
# original keys", whatever the study; each output says which it was.
DEFAULT_KEY_POLICY: str = KeyPolicy.ADJUDICATED


class WordingRule(models.TextChoices):
    """Under adjudicated keys: whether an answer given to earlier words keeps the key of those
    words (the default) or is scored against the latest version all the same."""

    AS_SHOWN = "as_shown", "Each answer against the words its reader saw"
    LATEST = "latest", "Every answer against the latest version"


# The fields of a question a correction may change, in the order forms and exports show them;
# WORDING_FIELDS are those readers see.
OPTION_FIELDS: tuple[str, ...] = tuple(f"option_{letter.lower()}" for letter in LETTERS)
WORDING_FIELDS: tuple[str, ...] = ("text", *OPTION_FIELDS)
KEY_FIELDS: tuple[str, ...] = ("correct", "accepted")
VERSION_FIELDS: tuple[str, ...] = (*WORDING_FIELDS, *KEY_FIELDS, "explanation")
VERSION_FIELD_LABELS: dict[str, str] = {
    "text": "Question",
    "option_a": "Option A",
    "option_b": "Option B",
    "option_c": "Option C",
    "option_d": "Option D",
    "correct": "Key",
    "accepted": "Accepted answers",
    "explanation": "Explanation",
}

# Every set of accepted answers a version may hold, written as its letters in order ("B",
# "BC", ...): the key among them (a database constraint checks both).
ACCEPTED_SETS: tuple[str, ...] = tuple(
    "".join(letter for index, letter in enumerate(LETTERS) if mask >> index & 1)
    for mask in range(1, 2 ** len(LETTERS))
)

# The review form's correction keys (static/js/expert.js reads them from the markup): `v`
# (Revise) opens the correction and its keys until Esc. In it a letter is the new key (as a
# reader chooses), Shift + a letter toggles a further accepted answer, a digit the error type
# (in the taxonomy's order), `t` moves into the words to edit them.
CORRECTION_SHORTCUTS: dict[str, dict[str, tuple[str, ...]]] = {
    "key": {letter: (letter.lower(),) for letter in LETTERS},
    "accepted": {letter: (letter,) for letter in LETTERS},  # Shift + the letter
    "error_type": {value: (str(number),) for number, value in enumerate(ErrorType.values, start=1)},
}
CORRECTION_PAGE_KEYS: dict[str, str] = {"edit": "t", "leave": "Escape"}
# A proposal's page: agree / accept and disagree / reject, as the review's decision keys.
PROPOSAL_SHORTCUTS: dict[str, str] = {"yes": "a", "no": "r"}
