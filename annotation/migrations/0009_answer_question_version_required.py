import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("annotation", "0008_answers_shown_version_1")]

    operations = [
        migrations.AlterField(
            model_name="answer",
            name="question_version",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.PROTECT,
                related_name="answers",
                to="readerstudy.questionversion",
            ),
        ),
    ]
