from django.apps import AppConfig


class ReaderStudyConfig(AppConfig):
    name = "readerstudy"
    verbose_name = "Reader studies"
