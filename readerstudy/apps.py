from django.apps import AppConfig


class ReaderStudyConfig(AppConfig):
    name = "readerstudy"
    verbose_name = "Reader studies"

    def ready(self) -> None:
        from django.conf import settings

        from readerstudy.imaging import set_pillow_limit

        set_pillow_limit(settings.MAX_IMAGE_PIXELS)
