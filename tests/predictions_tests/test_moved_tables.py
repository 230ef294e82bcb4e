"""AI models and predictions moved from the analysis app to their own without losing a row: a
database holding models, predictions and what refers to them (a rater's name, the aided arm's
snapshot, a permission on AI models) is migrated from the state before the move to the newest,
and everything is found again, with the same ids, and new rows still fit beside them.

Run on SQLite and, with DATABASE_URL, on PostgreSQL (a renamed table keeps its identity
sequence there, so the next id is the one after the largest kept)."""

import pytest
from django.db import IntegrityError, connection, transaction
from django.db.migrations.executor import MigrationExecutor

from readerstudy.predictions.models import AIModel, Prediction

# The state before the move: the analysis app still holding the models, no predictions app.
BEFORE = [("analysis", "0002_raterlabel"), ("predictions", None)]

pytestmark = pytest.mark.django_db(transaction=True)


def _back_to_before() -> object:
    """Unapply the move (and anything after it in these apps), newest first; the apps of the
    state reached. Each migration is unapplied from the state of its own ancestors, which is
    all its operations touch: the executor's own backwards pass would copy the whole project's
    state once per migration of the project (16 s here, against 0.4 s)."""
    executor = MigrationExecutor(connection)
    loader = executor.loader
    for migration, _ in executor.migration_plan(BEFORE):
        executor.unapply_migration(
            loader.project_state((migration.app_label, migration.name), at_end=False), migration
        )
    applied = [key for key in executor.recorder.applied_migrations() if key in loader.graph.nodes]
    return loader.project_state(applied).apps


def _forward_to_newest():
    """Every app migrated to its newest migration; the apps of that state."""
    executor = MigrationExecutor(connection)
    return executor.migrate(executor.loader.graph.leaf_nodes()).apps


def _fill(apps) -> dict:
    """Rows of the old state: two models' predictions (one failed extraction), a study whose
    aided arm shows one of them, the PI's name for it, and a group allowed to change models."""
    dataset = apps.get_model("readerstudy", "Dataset").objects.create(name="moved")
    case = apps.get_model("readerstudy", "Case").objects.create(dataset=dataset, study_id="c1")
    questions = [
        apps.get_model("readerstudy", "Question").objects.create(
            dataset=dataset,
            case=case,
            source_id=f"q{i}",
            text=f"Question {i}?",
            option_a="left",
            option_b="right",
            option_c="both",
            option_d="neither",
            correct="A",
            task="presence",
        )
        for i in range(3)
    ]
    ai_model = apps.get_model("analysis", "AIModel")
    prediction = apps.get_model("analysis", "Prediction")
    shown = ai_model.objects.create(dataset=dataset, name="shown", source_file="shown.csv")
    other = ai_model.objects.create(dataset=dataset, name="other")
    prediction.objects.create(model=shown, question=questions[0], letter="A", raw_response="A")
    prediction.objects.create(
        model=shown, question=questions[1], letter="", raw_response="unsure", rule="failed"
    )
    prediction.objects.create(
        model=other, question=questions[0], letter="B", raw_response="<answer>B</answer>"
    )
    study = apps.get_model("readerstudy", "ReaderStudy").objects.create(
        slug="moved",
        title="Moved",
        dataset=dataset,
        arms="unaided,aided",
        aid_model="shown",
        aid_mode="concurrent",
    )
    item = apps.get_model("readerstudy", "StudyQuestion").objects.create(
        study=study, question=questions[0], position=0
    )
    apps.get_model("readerstudy", "ItemAid").objects.create(
        item=item, model_name="shown", letter="A", option_text="left", usable=True
    )
    apps.get_model("analysis", "RaterLabel").objects.create(
        study=study, rater=f"model:{shown.pk}", label="Shown model"
    )
    content_type, _ = apps.get_model("contenttypes", "ContentType").objects.get_or_create(
        app_label="analysis", model="aimodel"
    )
    permission, _ = apps.get_model("auth", "Permission").objects.get_or_create(
        content_type=content_type, codename="change_aimodel", defaults={"name": "Can change"}
    )
    group = apps.get_model("auth", "Group").objects.create(name="model keepers")
    group.permissions.add(permission)
    return {
        "models": set(ai_model.objects.values_list("pk", "dataset_id", "name", "source_file")),
        "predictions": set(
            prediction.objects.values_list(
                "pk", "model_id", "question_id", "letter", "raw_response", "rule"
            )
        ),
        "shown": shown.pk,
        "question": questions[2].pk,
        "permission": permission.pk,
    }


def test_models_and_predictions_survive_the_move_with_their_ids():
    try:
        before = _fill(_back_to_before())
    finally:
        apps = _forward_to_newest()

    assert AIModel._meta.db_table == "predictions_aimodel"
    tables = set(connection.introspection.table_names())
    assert {"predictions_aimodel", "predictions_prediction"} <= tables
    assert not {"analysis_aimodel", "analysis_prediction"} & tables
    assert (
        set(AIModel.objects.values_list("pk", "dataset_id", "name", "source_file"))
        == (before["models"])
    )
    assert (
        set(
            Prediction.objects.values_list(
                "pk", "model_id", "question_id", "letter", "raw_response", "rule"
            )
        )
        == before["predictions"]
    )
    shown = AIModel.objects.get(pk=before["shown"])
    assert [p.failed for p in shown.predictions.order_by("question__source_id")] == [False, True]

    label = apps.get_model("analysis", "RaterLabel").objects.get()
    assert label.rater == f"model:{shown.pk}"
    aid = apps.get_model("readerstudy", "ItemAid").objects.get()
    assert (aid.model_name, aid.letter, aid.usable) == (shown.name, "A", True)
    group = apps.get_model("auth", "Group").objects.get(name="model keepers")
    assert [(p.pk, p.content_type.app_label, p.codename) for p in group.permissions.all()] == [
        (before["permission"], "predictions", "change_aimodel")
    ]

    # New rows take ids after the kept ones; the table's constraints still hold.
    added = AIModel.objects.create(dataset_id=shown.dataset_id, name="added")
    assert added.pk > max(pk for pk, *_ in before["models"])
    new = Prediction.objects.create(model=added, question_id=before["question"], letter="C")
    assert new.pk > max(pk for pk, *_ in before["predictions"])
    with pytest.raises(IntegrityError), transaction.atomic():
        Prediction.objects.create(model=added, question_id=before["question"], letter="D")
