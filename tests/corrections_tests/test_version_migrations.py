"""The data migrations of issue 35, from the state before them: every question imported
earlier gets version 1 (its content as imported, the Question row unchanged) and every answer
given earlier is recorded as shown version 1."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [
    ("readerstudy", "0012_study_learning_practice_plans"),
    ("annotation", "0006_answer_practice_mark"),
]
AFTER = [
    ("readerstudy", "0014_every_question_at_version_1"),
    ("annotation", "0009_answer_question_version_required"),
]


def test_questions_and_answers_before_versions_are_at_version_1(migrator):
    # Back from the migrated database to just before them: Django unapplies exactly these
    # (apply_initial_migration's broad plan could keep readerstudy's new ones applied).
    old = migrator.apply_tested_migration(BEFORE)
    assert "questionversion" not in old.apps.get_app_config("readerstudy").models
    User = old.apps.get_model("auth", "User")
    Dataset = old.apps.get_model("readerstudy", "Dataset")
    Case = old.apps.get_model("readerstudy", "Case")
    Question = old.apps.get_model("readerstudy", "Question")
    ReaderStudy = old.apps.get_model("readerstudy", "ReaderStudy")
    StudyQuestion = old.apps.get_model("readerstudy", "StudyQuestion")
    Answer = old.apps.get_model("annotation", "Answer")
    dataset = Dataset.objects.create(name="before versions")
    case = Case.objects.create(dataset=dataset, study_id="x1")
    study = ReaderStudy.objects.create(slug="old", title="Old", dataset=dataset)
    reader = User.objects.create(username="old_reader")
    keys = {"q1": "A", "q2": "C"}
    for position, (source_id, key) in enumerate(keys.items()):
        question = Question.objects.create(
            dataset=dataset,
            case=case,
            source_id=source_id,
            text=f"{source_id}?",
            option_a="a",
            option_b="b",
            option_c="c",
            option_d="d",
            correct=key,
            explanation=f"because {source_id}",
            task="presence",
        )
        item = StudyQuestion.objects.create(study=study, question=question, position=position)
        Answer.objects.create(item=item, reader=reader, choice="B")

    new = migrator.apply_tested_migration(AFTER)
    Question = new.apps.get_model("readerstudy", "Question")
    QuestionVersion = new.apps.get_model("readerstudy", "QuestionVersion")
    Answer = new.apps.get_model("annotation", "Answer")
    rows = QuestionVersion.objects.order_by("question__source_id").values_list(
        "question__source_id", "number", "correct", "accepted", "wording", "change", "explanation"
    )
    assert list(rows) == [
        ("q1", 1, "A", "A", 1, "original", "because q1"),
        ("q2", 1, "C", "C", 1, "original", "because q2"),
    ]
    assert {q.correct for q in Question.objects.all()} == {"A", "C"}  # unchanged
    shown = Answer.objects.values_list("item__question__source_id", "question_version__number")
    assert sorted(shown) == [("q1", 1), ("q2", 1)]
    for answer in Answer.objects.select_related("item", "question_version"):
        assert answer.question_version.question_id == answer.item.question_id
    migrator.reset()
