"""Every answer given before versions existed was shown version 1 of its question."""

from django.db import migrations


def answers_shown_version_1(apps, schema_editor):
    Answer = apps.get_model("annotation", "Answer")
    QuestionVersion = apps.get_model("readerstudy", "QuestionVersion")
    first = dict(
        QuestionVersion.objects.filter(number=1).values_list("question_id", "pk").iterator()
    )
    pending = Answer.objects.filter(question_version__isnull=True)
    batch = []
    for answer in pending.only("pk", "item__question_id").select_related("item").iterator():
        answer.question_version_id = first[answer.item.question_id]
        batch.append(answer)
        if len(batch) >= 2000:
            Answer.objects.bulk_update(batch, ["question_version"])
            batch = []
    Answer.objects.bulk_update(batch, ["question_version"])


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0007_corrections_votes_and_answer_version"),
        ("readerstudy", "0014_every_question_at_version_1"),
    ]

    operations = [migrations.RunPython(answers_shown_version_1, migrations.RunPython.noop)]
