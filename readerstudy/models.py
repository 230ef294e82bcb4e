"""Core domain: question banks, imaging studies (cases), images, questions, reader studies.

Invariants live in database constraints so that no code path (import, admin, API, shell) can
store a question without four options or with a correct option outside A-D.
"""

from __future__ import annotations

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q

from readerstudy.vocabulary import (
    ARM_LAYOUTS,
    LETTERS,
    MAX_UNSEEN_PER_MISS,
    PRACTICE_INTERVALS,
    AdjudicationRule,
    AidMode,
    Arm,
    ConfidenceScale,
    ResultsVisibility,
    Scale,
    StudyKind,
    WindowPreset,
    confidence_scale,
)


class Task(models.TextChoices):
    """The five ReXVQA task types; labels are the names used in the released files."""

    PRESENCE = "presence", "Presence Assessment"
    NEGATION = "negation", "Negation Assessment"
    DIFFERENTIAL = "differential", "Differential Diagnosis"
    LOCATION = "location", "Location and Distribution Assessment"
    GEOMETRIC = "geometric", "Geometric Information Assessment"


class Sex(models.TextChoices):
    FEMALE = "F", "Female"
    MALE = "M", "Male"
    OTHER = "O", "Other"
    UNKNOWN = "", "Unknown"


class Dataset(models.Model):
    """A question bank, e.g. "ReXVQA test"."""

    name = models.CharField(max_length=200, unique=True)
    description = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Case(models.Model):
    """One imaging study. Findings and impression are the source report: never shown to readers."""

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="cases")
    study_id = models.CharField(max_length=200)
    study_instance_uid = models.CharField(max_length=200, blank=True)
    patient_id = models.CharField(max_length=200, blank=True)
    patient_age = models.PositiveSmallIntegerField(null=True, blank=True)
    patient_sex = models.CharField(max_length=1, choices=Sex.choices, blank=True)
    study_date = models.CharField(max_length=32, blank=True)
    indication = models.TextField(blank=True)
    findings = models.TextField(blank=True)
    impression = models.TextField(blank=True)

    class Meta:
        ordering = ["dataset", "study_id"]
        constraints = [
            models.UniqueConstraint(fields=["dataset", "study_id"], name="case_unique_study_id"),
        ]
        # The same X-ray in another dataset is found by these (readerstudy.blinding).
        indexes = [models.Index(fields=["study_instance_uid"], name="case_study_uid")]

    def __str__(self) -> str:
        return self.study_id


class Image(models.Model):
    """One view of a case: the source file as imported and the display PNG derived from it."""

    case = models.ForeignKey(Case, on_delete=models.CASCADE, related_name="images")
    position = models.PositiveSmallIntegerField(default=0)
    view_position = models.CharField(max_length=32, blank=True)
    modality = models.CharField(max_length=16, blank=True)
    source_path = models.CharField(max_length=1000, help_text="Resolved absolute path.")
    source_uri = models.CharField(
        max_length=1000,
        blank=True,
        help_text="Where a fetched image came from (DICOMweb URL and UIDs); blank for files.",
    )
    display = models.CharField(max_length=300, blank=True, help_text="Path under MEDIA_ROOT.")
    thumbnail = models.CharField(max_length=300, blank=True, help_text="Path under MEDIA_ROOT.")
    width = models.PositiveIntegerField(null=True, blank=True)
    height = models.PositiveIntegerField(null=True, blank=True)
    bits_stored = models.PositiveSmallIntegerField(null=True, blank=True)
    # Full depth, for sources deeper than 8 bits: the modality-LUT output as 16-bit codes in an
    # 8-bit RGB PNG (R = high byte, G = low byte); stored value = offset + scale * code.
    depth = models.CharField(
        max_length=300, blank=True, help_text="Full-depth PNG under MEDIA_ROOT (R=high, G=low)."
    )
    value_offset = models.FloatField(null=True, blank=True)
    value_scale = models.FloatField(null=True, blank=True)
    value_min = models.FloatField(null=True, blank=True, help_text="Lowest stored value.")
    value_max = models.FloatField(null=True, blank=True, help_text="Highest stored value.")
    monochrome1 = models.BooleanField(
        default=False, help_text="High values are dark: the viewer inverts the full-depth data."
    )
    dicom_windows = models.JSONField(
        default=list, blank=True, help_text="The header's windows: [[center, width, name], ...]."
    )
    window_presets = models.JSONField(
        default=dict, blank=True, help_text="Viewer presets in stored units: {name: [c, w]}."
    )

    class Meta:
        ordering = ["case", "position"]
        constraints = [
            models.UniqueConstraint(fields=["case", "position"], name="image_unique_position"),
        ]
        indexes = [models.Index(fields=["display"], name="image_display")]

    def __str__(self) -> str:
        return f"{self.case.study_id} {self.view_position or '?'}"

    @property
    def view_label(self) -> str:
        return (self.view_position or "View").upper()


class Question(models.Model):
    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="questions")
    case = models.ForeignKey(Case, on_delete=models.PROTECT, related_name="questions")
    source_id = models.CharField(max_length=200, help_text="Question id in the source file.")
    text = models.TextField()
    option_a = models.TextField()
    option_b = models.TextField()
    option_c = models.TextField()
    option_d = models.TextField()
    correct = models.CharField(max_length=1)
    explanation = models.TextField(blank=True)
    task = models.CharField(max_length=20, choices=Task.choices)
    category = models.CharField(max_length=200, blank=True)
    subcategory = models.CharField(max_length=200, blank=True)
    klass = models.CharField("class", max_length=200, blank=True)
    # A binary question (finding present or absent): the option that says "present". Its
    # readers' answers and confidence make ROC ratings (Scale.roc_rating): any other option
    # answered means "absent". Empty: not a binary question.
    present_option = models.CharField(
        max_length=1,
        blank=True,
        help_text="A binary question: the option (A-D) that means the finding is present.",
    )

    class Meta:
        ordering = ["dataset", "source_id"]
        constraints = [
            models.UniqueConstraint(fields=["dataset", "source_id"], name="question_unique_source"),
            models.CheckConstraint(
                condition=Q(correct__in=LETTERS), name="question_correct_in_range"
            ),
            models.CheckConstraint(
                condition=~Q(option_a="") & ~Q(option_b="") & ~Q(option_c="") & ~Q(option_d=""),
                name="question_four_options",
            ),
            models.CheckConstraint(condition=Q(task__in=Task.values), name="question_task_known"),
            models.CheckConstraint(
                condition=Q(present_option__in=[*LETTERS, ""]), name="question_present_option"
            ),
        ]
        indexes = [models.Index(fields=["dataset", "task"])]

    def __str__(self) -> str:
        return self.source_id

    @property
    def options(self) -> list[str]:
        return [self.option_a, self.option_b, self.option_c, self.option_d]

    @property
    def labelled_options(self) -> list[tuple[str, str]]:
        return list(zip(LETTERS, self.options, strict=True))

    @property
    def binary(self) -> bool:
        return bool(self.present_option)


# The longest break reminder a PI may set (8 h of reading): model, constraint and forms.
MAX_BREAK_MINUTES = 480


class ReaderStudy(models.Model):
    slug = models.SlugField(max_length=100, unique=True)
    title = models.CharField(max_length=300)
    dataset = models.ForeignKey(Dataset, on_delete=models.PROTECT, related_name="studies")
    instructions = models.TextField(blank=True)
    closing_text = models.TextField(
        blank=True, default="Thank you: your answers are recorded. You may close this window."
    )
    random_order = models.BooleanField(
        default=True, help_text="Each reader gets their own deterministic random order."
    )
    allow_revision = models.BooleanField(
        default=True, help_text="Readers may go back and change answers before finishing."
    )
    show_indication = models.BooleanField(
        default=True, help_text="Show the indication, age and sex to readers."
    )
    lock_on_finish = models.BooleanField(
        default=True, help_text="Final submit locks the reader's answers."
    )
    draft_days = models.PositiveSmallIntegerField(
        default=14,
        validators=[MinValueValidator(1), MaxValueValidator(365)],
        help_text="Unsubmitted drafts are kept in the reader's or expert's browser this many "
        "days at most (and never past sign-out).",
    )
    default_window = models.CharField(
        max_length=8,
        choices=WindowPreset.choices,
        default=WindowPreset.DEFAULT,
        help_text="The window preset each case opens at, until a reader chooses another "
        "(their choice then sticks for them in every session and arm of this study).",
    )
    break_minutes = models.PositiveSmallIntegerField(
        default=60,
        validators=[MaxValueValidator(MAX_BREAK_MINUTES)],
        help_text="Readers are reminded to take a break after this many minutes of reading "
        "without a pause; 0: never.",
    )
    seed = models.BigIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # The design (set by readerstudy.design.services.study_design_set; frozen once anyone has
    # answered).
    # The defaults are a single unaided arm: every study made before designs existed.
    arms = models.CharField(
        max_length=20,
        default="unaided",
        help_text="The reading arms: unaided, aided, or unaided,aided (crossover).",
    )
    aid_model = models.CharField(
        max_length=200, blank=True, help_text="The AI model shown in the aided arm (its name)."
    )
    aid_mode = models.CharField(max_length=12, choices=AidMode.choices, blank=True)
    washout_days = models.PositiveIntegerField(
        default=0, help_text="Days between finishing the first session and opening the second."
    )
    reader_groups = models.PositiveSmallIntegerField(
        default=0, help_text="Split-plot groups of readers and cases; 0: everyone reads all."
    )
    anchor_size = models.PositiveIntegerField(
        default=0, help_text="Questions every group reads (split-plot anchor set)."
    )
    shuffle_options = models.BooleanField(
        default=False, help_text="Each reader sees the four options in their own order."
    )
    confidence_scale = models.CharField(
        max_length=8,
        choices=ConfidenceScale.choices,
        default=ConfidenceScale.NONE,
        help_text="Readers rate how sure they are of every answer on this scale (none: not "
        "asked). Fixed once anyone has answered.",
    )
    # Learning: what the study is for, and what its readers get back.
    kind = models.CharField(
        max_length=10,
        choices=StudyKind.choices,
        default=StudyKind.RESEARCH,
        help_text="Set at creation: a practice set shows the key after each answer.",
    )
    results_visibility = models.CharField(
        max_length=10,
        choices=ResultsVisibility.choices,
        default=ResultsVisibility.NEVER,
        help_text="When a reader may open their debrief (research studies).",
    )
    results_show_ai = models.BooleanField(
        default=False, help_text="The debrief shows the AI models' answers and accuracy."
    )
    misses_unseen = models.PositiveSmallIntegerField(
        default=0,
        validators=[MaxValueValidator(MAX_UNSEEN_PER_MISS)],
        help_text="“Practise my misses” adds up to this many unseen questions of the same task "
        "and category per missed question (0: the misses only).",
    )
    reading_closed_at = models.DateTimeField(
        null=True, blank=True, help_text="A PI closed reading: no more answers from anyone."
    )
    reading_closed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # A sitting of a personal practice plan ("practise my misses"), numbered from 1.
    plan = models.ForeignKey(
        "PracticePlan", null=True, blank=True, on_delete=models.CASCADE, related_name="sittings"
    )
    sitting = models.PositiveSmallIntegerField(default=0)
    # Who turns a proposed correction into the key (annotation.corrections): a PI, or
    # `adjudication_votes` of the study's experts agreeing.
    adjudication = models.CharField(
        max_length=10, choices=AdjudicationRule.choices, default=AdjudicationRule.PI
    )
    adjudication_votes = models.PositiveSmallIntegerField(
        default=2, help_text="With the experts' rule: how many agreeing experts make a key."
    )

    class Meta:
        ordering = ["-created_at"]
        verbose_name_plural = "reader studies"
        constraints = [
            models.CheckConstraint(condition=Q(kind__in=StudyKind.values), name="study_kind"),
            models.CheckConstraint(
                condition=Q(kind=StudyKind.RESEARCH)
                | Q(arms="unaided", reader_groups=0, allow_revision=False),
                name="study_practice_single_arm_final_answers",
            ),
            models.CheckConstraint(
                condition=Q(results_visibility__in=ResultsVisibility.values),
                name="study_results_visibility",
            ),
            models.CheckConstraint(
                condition=Q(misses_unseen__lte=MAX_UNSEEN_PER_MISS), name="study_misses_unseen"
            ),
            models.CheckConstraint(
                condition=Q(plan__isnull=True, sitting=0)
                | Q(plan__isnull=False, sitting__gte=1, kind=StudyKind.PRACTICE),
                name="study_plan_sitting",
            ),
            models.CheckConstraint(condition=Q(arms__in=list(ARM_LAYOUTS)), name="study_arms"),
            models.CheckConstraint(
                condition=(Q(arms="unaided", aid_mode="", aid_model=""))
                | (
                    Q(arms__in=["aided", "unaided,aided"], aid_mode__in=AidMode.values)
                    & ~Q(aid_model="")
                ),
                name="study_aided_arm_has_model",
            ),
            models.CheckConstraint(condition=Q(washout_days__gte=0), name="study_washout"),
            models.CheckConstraint(
                condition=Q(confidence_scale__in=ConfidenceScale.values),
                name="study_confidence_scale",
            ),
            models.CheckConstraint(
                condition=Q(default_window__in=WindowPreset.values), name="study_default_window"
            ),
            models.CheckConstraint(
                condition=Q(break_minutes__lte=MAX_BREAK_MINUTES), name="study_break_minutes"
            ),
            models.CheckConstraint(
                condition=~Q(reader_groups=1), name="study_groups_none_or_two_plus"
            ),
            models.CheckConstraint(
                condition=Q(anchor_size=0) | Q(reader_groups__gte=2), name="study_anchor_groups"
            ),
            models.CheckConstraint(
                condition=Q(adjudication__in=AdjudicationRule.values)
                & Q(adjudication_votes__gte=1),
                name="study_adjudication_rule",
            ),
        ]

    def __str__(self) -> str:
        return self.title

    @property
    def arm_list(self) -> tuple[str, ...]:
        return ARM_LAYOUTS[self.arms]

    @property
    def scale(self) -> Scale | None:
        """The confidence scale readers rate on; None when the study asks for none."""
        return confidence_scale(self.confidence_scale)

    @property
    def crossover(self) -> bool:
        return len(self.arm_list) > 1

    @property
    def practice(self) -> bool:
        return self.kind == StudyKind.PRACTICE

    @property
    def designed(self) -> bool:
        """True when readers need an assignment (arm order, group, order seed)."""
        return (
            self.crossover
            or self.reader_groups > 0
            or self.shuffle_options
            or (Arm.AIDED in self.arm_list)
        )


class PracticePlan(models.Model):
    """A person's own practice set ("practise my misses"): the questions they missed in a
    debriefed study or a practice set (and, as its PI allows, unseen questions of the same
    task and category), offered again `interval_days` after each sitting. Each sitting is a
    practice study of its own (ReaderStudy.plan, .sitting), so its answers and accuracy are
    kept per return."""

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="practice_plans"
    )
    source = models.ForeignKey(
        "ReaderStudy",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="practice_plans",
        help_text="The study whose misses the plan holds.",
    )
    dataset = models.ForeignKey(Dataset, on_delete=models.PROTECT, related_name="+")
    title = models.CharField(max_length=300)
    questions = models.ManyToManyField(Question, related_name="+")
    interval_days = models.PositiveSmallIntegerField(choices=sorted(PRACTICE_INTERVALS.items()))
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(interval_days__in=list(PRACTICE_INTERVALS)),
                name="practiceplan_interval",
            ),
            models.UniqueConstraint(
                fields=["owner", "source"],
                condition=Q(source__isnull=False),
                name="practiceplan_one_per_source",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.owner}: {self.title}"


class StudyQuestion(models.Model):
    """A question in a reader study, in the study's order; may be excluded from analysis."""

    study = models.ForeignKey(ReaderStudy, on_delete=models.CASCADE, related_name="items")
    question = models.ForeignKey(Question, on_delete=models.PROTECT, related_name="study_items")
    position = models.PositiveIntegerField()
    excluded = models.BooleanField(default=False)
    excluded_reason = models.TextField(blank=True)
    excluded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    excluded_at = models.DateTimeField(null=True, blank=True)
    # Split-plot: the group of readers that reads this item, or the anchor everyone reads.
    case_group = models.PositiveSmallIntegerField(null=True, blank=True)
    anchor = models.BooleanField(default=False)

    class Meta:
        ordering = ["study", "position"]
        constraints = [
            models.UniqueConstraint(fields=["study", "question"], name="studyq_unique_question"),
            models.UniqueConstraint(fields=["study", "position"], name="studyq_unique_position"),
            models.CheckConstraint(
                condition=Q(anchor=False) | Q(case_group__isnull=True),
                name="studyq_anchor_has_no_group",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.study.slug}#{self.position}"


class Role(models.TextChoices):
    READER = "reader", "Reader"
    EXPERT = "expert", "Expert"
    PI = "pi", "PI"


class Membership(models.Model):
    study = models.ForeignKey(ReaderStudy, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    role = models.CharField(max_length=10, choices=Role.choices)
    # Optional: training year or seniority ("PGY-3", "attending, 10 y"); reported in the
    # Methods and participants section and usable as a grouping of readers.
    seniority = models.CharField(max_length=60, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["study", "role", "user__username"]
        constraints = [
            models.UniqueConstraint(fields=["study", "user", "role"], name="membership_unique"),
            models.CheckConstraint(condition=Q(role__in=Role.values), name="membership_role"),
        ]

    def __str__(self) -> str:
        return f"{self.user} {self.role} of {self.study.slug}"


class AuditEvent(models.Model):
    """Who did what and when, for actions that change a study's meaning (roles, exclusions)."""

    study = models.ForeignKey(
        ReaderStudy, null=True, blank=True, on_delete=models.CASCADE, related_name="audit"
    )
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    action = models.CharField(max_length=64)
    detail = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.created_at:%Y-%m-%d %H:%M} {self.actor} {self.action}"


class ItemAid(models.Model):
    """The AI's answer to one study question as the aided arm shows it: a snapshot.

    Written when a design is set (readerstudy.design.services), so that the reading pages show
    the answer the design was set with, whatever predictions are imported later. `usable`
    False: the model had no prediction for the question or its answer could not be extracted.
    """

    item = models.OneToOneField(StudyQuestion, on_delete=models.CASCADE, related_name="aid")
    model_name = models.CharField(max_length=200)
    letter = models.CharField(max_length=1, blank=True)
    option_text = models.TextField(blank=True, help_text="The option's text as imported.")
    rationale = models.TextField(blank=True, help_text="The model's own words, when it gave any.")
    usable = models.BooleanField()

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=(Q(usable=True, letter__in=LETTERS) & ~Q(option_text=""))
                | Q(usable=False, letter="", option_text=""),
                name="itemaid_usable_has_letter",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.model_name} on {self.item}: {self.letter or 'no usable answer'}"


class ReaderAssignment(models.Model):
    """A reader's place in a study's design, decided once and recorded: which arm they read
    first (counterbalancing), their split-plot group, and the seed of their case and option
    orders."""

    study = models.ForeignKey(ReaderStudy, on_delete=models.CASCADE, related_name="assignments")
    reader = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="assignments"
    )
    first_arm = models.CharField(max_length=10, choices=Arm.choices)
    reader_group = models.PositiveSmallIntegerField(null=True, blank=True)
    order_seed = models.BigIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["study", "created_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["study", "reader"], name="assignment_unique"),
            models.CheckConstraint(
                condition=Q(first_arm__in=Arm.values), name="assignment_first_arm"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.reader} in {self.study.slug}: {self.first_arm} first"

    def arm_of(self, session: int) -> str:
        """The arm of session 1 or 2 for this reader."""
        arms = self.study.arm_list
        if len(arms) == 1:
            return arms[0]
        first = self.first_arm
        return first if session == 1 else next(a for a in arms if a != first)


class JobStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"


class JobKind(models.TextChoices):
    ANALYSIS = "analysis", "Analysis and downloads"
    QUESTION_BANK = "question_bank", "Question bank import"
    STUDY_IMAGES = "study_images", "Study images"


class BackgroundJob(models.Model):
    """One piece of background work, keyed by what it computes (`key`), so asking twice
    finds the same job. The task backend (django-tasks) runs it; this row is what people
    see (status, error in words, result) and what makes a killed worker's job run again
    (readerstudy.jobs). Progress and heartbeat live in the shared cache: an import writes
    them from inside its transaction."""

    key = models.CharField(max_length=200, unique=True)
    kind = models.CharField(max_length=20, choices=JobKind.choices)
    study = models.ForeignKey(
        ReaderStudy, null=True, blank=True, on_delete=models.CASCADE, related_name="jobs"
    )
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    label = models.CharField(max_length=200, blank=True)
    params = models.JSONField(default=dict, blank=True)  # what the task needs besides the key
    status = models.CharField(max_length=10, choices=JobStatus.choices, default=JobStatus.QUEUED)
    attempt = models.PositiveIntegerField(default=0)
    task_id = models.CharField(max_length=64, blank=True)
    error = models.TextField(blank=True)
    result = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["study", "-created_at"])]
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=JobStatus.values), name="backgroundjob_status_valid"
            )
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} ({self.status})"


class Invitation(models.Model):
    """A one-time sign-in link for a person a PI brought into a study.

    Only a hash of the link's secret is stored, so a database dump cannot sign anyone in; the
    link works once, until it expires or the PI revokes it.
    """

    study = models.ForeignKey(ReaderStudy, on_delete=models.CASCADE, related_name="invitations")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="invitations"
    )
    role = models.CharField(max_length=10, choices=Role.choices)
    email = models.EmailField(blank=True)
    token_hash = models.CharField(max_length=64, unique=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(condition=Q(role__in=Role.values), name="invitation_role"),
        ]

    def __str__(self) -> str:
        return f"invitation of {self.user} to {self.study.slug}"


# Versions of a question live in their own module; imported here so Django finds the model.
from readerstudy.question_versions import QuestionVersion  # noqa: E402, F401
