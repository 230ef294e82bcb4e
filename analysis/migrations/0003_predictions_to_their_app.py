"""AI models and predictions leave the analysis's state for the predictions app's (which took
them over in predictions.0001); their tables and rows stay as they are."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("analysis", "0002_raterlabel"),
        ("predictions", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(name="Prediction"),
                migrations.DeleteModel(name="AIModel"),
            ],
            database_operations=[],
        ),
    ]
