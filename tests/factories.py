"""factory_boy factories for the core domain (used by every app's tests)."""

import factory
from django.contrib.auth import get_user_model

from readerstudy.models import (
    Case,
    Dataset,
    Image,
    Membership,
    Question,
    ReaderStudy,
    Role,
    StudyQuestion,
    Task,
)
from readerstudy.vocabulary import LETTERS

PASSWORD = "correct-horse-battery"


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"user{n}")

    @factory.post_generation
    def password(self, create, extracted, **kwargs):
        self.set_password(extracted or PASSWORD)
        if create:
            self.save(update_fields=["password"])


class DatasetFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Dataset

    name = factory.Sequence(lambda n: f"dataset {n}")


class CaseFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Case

    dataset = factory.SubFactory(DatasetFactory)
    study_id = factory.Sequence(lambda n: f"study-{n}")
    patient_age = 58
    patient_sex = "F"
    indication = "Cough."
    findings = "Normal chest."
    impression = "No acute disease."


class ImageFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Image

    case = factory.SubFactory(CaseFactory)
    position = 0
    view_position = "PA"
    modality = "CR"
    source_path = "/nonexistent/source.png"
    display = factory.Sequence(lambda n: f"display/aa/{n:064d}.png")
    thumbnail = factory.Sequence(lambda n: f"thumbs/aa/{n:064d}.png")
    width = 64
    height = 48
    bits_stored = 8


class QuestionFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Question
        skip_postgeneration_save = True

    dataset = factory.SubFactory(DatasetFactory)
    case = factory.SubFactory(CaseFactory, dataset=factory.SelfAttribute("..dataset"))
    source_id = factory.Sequence(lambda n: f"q{n:05d}")
    text = factory.Sequence(lambda n: f"Question number {n}?")
    option_a = "First option"
    option_b = "Second option"
    option_c = "Third option"
    option_d = "Fourth option"
    correct = "B"
    explanation = "Because."
    task = Task.PRESENCE
    category = "Lung"

    @factory.post_generation
    def versions(self, create, extracted, **kwargs):
        """Version 1, as every import writes it (readerstudy.question_versions). The question
        is new, so it has none: saved at once, without `ensure_first_version`'s three lookups
        (run for every question of every test, they cost ~20 s of the suite's CPU)."""
        if create:
            from readerstudy.services.versions import first_version

            first_version(self).save()


class ReaderStudyFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = ReaderStudy

    slug = factory.Sequence(lambda n: f"study-{n}")
    title = factory.Sequence(lambda n: f"Study {n}")
    dataset = factory.SubFactory(DatasetFactory)
    random_order = False


class StudyQuestionFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = StudyQuestion

    study = factory.SubFactory(ReaderStudyFactory)
    question = factory.SubFactory(QuestionFactory, dataset=factory.SelfAttribute("..study.dataset"))
    position = factory.Sequence(lambda n: n)


class MembershipFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Membership

    study = factory.SubFactory(ReaderStudyFactory)
    user = factory.SubFactory(UserFactory)
    role = Role.READER


def build_study(n_questions: int = 4, *, images_per_case: int = 1, **study_kwargs) -> ReaderStudy:
    """A study with n questions, each on its own case with images."""
    study = ReaderStudyFactory(**study_kwargs)
    tasks = list(Task)
    for i in range(n_questions):
        case = CaseFactory(dataset=study.dataset)
        for position in range(images_per_case):
            ImageFactory(
                case=case, position=position, view_position=["PA", "LATERAL"][position % 2]
            )
        question = QuestionFactory(
            dataset=study.dataset,
            case=case,
            task=tasks[i % len(tasks)],
            correct=LETTERS[i % len(LETTERS)],
        )
        StudyQuestionFactory(study=study, question=question, position=i)
    return study


def touch_display_files() -> None:
    """Empty files where the factories' images say their display images are, so that a
    service that derives images (study creation, a practice set) finds them derived."""
    from pathlib import Path

    from django.conf import settings

    root = Path(settings.MEDIA_ROOT)
    for display in Image.objects.exclude(display="").values_list("display", flat=True):
        (root / display).parent.mkdir(parents=True, exist_ok=True)
        (root / display).touch()


def imported_as(question: Question, **fields) -> Question:
    """`question` as if imported with `fields` (text, options, key, explanation): the Question
    row and its version 1, which hold the same (readerstudy.question_versions)."""
    from readerstudy.question_versions import QuestionVersion

    for name, value in fields.items():
        setattr(question, name, value)
    question.save()
    words = {k: v for k, v in fields.items() if k != "case"}
    if "correct" in words:
        words["accepted"] = words["correct"]
    QuestionVersion.objects.filter(question=question, number=1).update(**words)
    return question
