"""Every question imported before versions existed gets its version 1: its content as
imported (the Question row, which stays as it is)."""

from django.db import migrations

BATCH = 2000
FIELDS = ("text", "option_a", "option_b", "option_c", "option_d", "correct", "explanation")


def questions_at_version_1(apps, schema_editor):
    Question = apps.get_model("readerstudy", "Question")
    QuestionVersion = apps.get_model("readerstudy", "QuestionVersion")
    pending = Question.objects.filter(versions__isnull=True).order_by("pk").values("pk", *FIELDS)
    batch = []
    for row in pending.iterator(chunk_size=BATCH):
        batch.append(
            QuestionVersion(
                question_id=row["pk"],
                number=1,
                wording=1,
                change="original",
                accepted=row["correct"],
                **{name: row[name] for name in FIELDS},
            )
        )
        if len(batch) >= BATCH:
            QuestionVersion.objects.bulk_create(batch)
            batch = []
    QuestionVersion.objects.bulk_create(batch)


class Migration(migrations.Migration):
    dependencies = [("readerstudy", "0013_question_versions_and_adjudication_rule")]

    operations = [migrations.RunPython(questions_at_version_1, migrations.RunPython.noop)]
