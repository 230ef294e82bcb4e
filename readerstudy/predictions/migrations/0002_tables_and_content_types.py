"""The tables take this app's names (ALTER TABLE ... RENAME: the rows, their ids and the
foreign keys to them stay), and the models' content types follow them, so that permissions
given on AI models and predictions and the admin's history of them are kept."""

from django.db import migrations

MODELS = ("aimodel", "prediction")


def _relabel(apps, old: str, new: str) -> None:
    """Content types of MODELS from app `old` to app `new`, where `new` has none yet (a fresh
    database has none at all: they are made after the migrations)."""
    content_type = apps.get_model("contenttypes", "ContentType")
    for model in MODELS:
        if not content_type.objects.filter(app_label=new, model=model).exists():
            content_type.objects.filter(app_label=old, model=model).update(app_label=new)


def forwards(apps, schema_editor) -> None:
    _relabel(apps, "analysis", "predictions")


def backwards(apps, schema_editor) -> None:
    _relabel(apps, "predictions", "analysis")


class Migration(migrations.Migration):
    dependencies = [
        ("analysis", "0003_predictions_to_their_app"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("predictions", "0001_initial"),
    ]

    operations = [
        migrations.AlterModelTable(name="aimodel", table=None),
        migrations.AlterModelTable(name="prediction", table=None),
        migrations.RunPython(forwards, backwards),
    ]
