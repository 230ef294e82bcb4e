from django.apps import AppConfig


class PredictionsConfig(AppConfig):
    """AI models and their predictions on a dataset's questions: the domain below the reading
    (a design's aided arm shows them) and the analysis (which scores them)."""

    name = "readerstudy.predictions"
    label = "predictions"
    verbose_name = "AI models and predictions"
