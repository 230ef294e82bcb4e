from django.apps import AppConfig


class ReaderStudyConfig(AppConfig):
    name = "readerstudy"
    verbose_name = "Reader studies"

    def ready(self) -> None:
        from django.conf import settings
        from django.contrib.auth import get_user_model
        from django.db.models.signals import post_save

        from readerstudy.imaging import set_pillow_limit
        from readerstudy.password_hooks import end_tokens_of_disabled_accounts

        set_pillow_limit(settings.MAX_IMAGE_PIXELS)
        post_save.connect(
            end_tokens_of_disabled_accounts,
            sender=get_user_model(),
            dispatch_uid="readerstudy.end_tokens_of_disabled_accounts",
        )
