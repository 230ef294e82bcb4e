from django.apps import AppConfig


class AnalysisConfig(AppConfig):
    name = "analysis"
    verbose_name = "Analysis and AI predictions"

    def ready(self) -> None:
        from analysis.tasks import refresh_later
        from readerstudy.signals import study_data_changed

        study_data_changed.connect(refresh_later, dispatch_uid="analysis-refresh")
