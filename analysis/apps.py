from django.apps import AppConfig


class AnalysisConfig(AppConfig):
    name = "analysis"
    verbose_name = "Analysis"

    def ready(self) -> None:
        from readerstudy.signals import study_data_changed

        study_data_changed.connect(refresh_later, dispatch_uid="analysis-refresh")


def refresh_later(sender=None, **kwargs) -> None:
    """analysis.preparation.refresh_later, imported when a study's data first changes: imported at
    start-up, the analysis (pandas and the pipeline) would load into every process, those
    that never analyse (migrate, an import, a worker before its first analysis job) too."""
    from analysis.preparation import refresh_later

    refresh_later(sender, **kwargs)
