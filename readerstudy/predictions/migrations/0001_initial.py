"""AI models and predictions join this app as they are: the tables analysis.0001 made, taken
over in the migration state only (SeparateDatabaseAndState: nothing is written; analysis.0003
lets go of them). 0002 then gives the tables this app's names."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("analysis", "0002_raterlabel"),
        ("readerstudy", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="AIModel",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        ("name", models.CharField(max_length=200)),
                        ("imported_at", models.DateTimeField(auto_now=True)),
                        ("source_file", models.CharField(blank=True, max_length=500)),
                        (
                            "dataset",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="ai_models",
                                to="readerstudy.dataset",
                            ),
                        ),
                    ],
                    options={
                        "verbose_name": "AI model",
                        "ordering": ["dataset", "name"],
                        "db_table": "analysis_aimodel",
                        "constraints": [
                            models.UniqueConstraint(
                                fields=("dataset", "name"), name="aimodel_unique_name"
                            )
                        ],
                    },
                ),
                migrations.CreateModel(
                    name="Prediction",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        (
                            "letter",
                            models.CharField(
                                blank=True, help_text="Empty: failed extraction.", max_length=1
                            ),
                        ),
                        ("raw_response", models.TextField(blank=True)),
                        (
                            "rule",
                            models.CharField(
                                blank=True, help_text="Extraction rule that matched.", max_length=40
                            ),
                        ),
                        (
                            "model",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="predictions",
                                to="predictions.aimodel",
                            ),
                        ),
                        (
                            "question",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="predictions",
                                to="readerstudy.question",
                            ),
                        ),
                    ],
                    options={
                        "ordering": ["model", "question"],
                        "db_table": "analysis_prediction",
                        "constraints": [
                            models.UniqueConstraint(
                                fields=("model", "question"), name="prediction_unique"
                            ),
                            models.CheckConstraint(
                                condition=models.Q(("letter__in", ["A", "B", "C", "D", ""])),
                                name="prediction_letter",
                            ),
                        ],
                    },
                ),
            ],
            database_operations=[],
        ),
    ]
