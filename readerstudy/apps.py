from django.apps import AppConfig


class ReaderStudyConfig(AppConfig):
    name = "readerstudy"
    verbose_name = "Reader studies"

    def ready(self) -> None:
        from django.conf import settings
        from django.contrib.auth import get_user_model
        from django.db.models.signals import post_save
        from PIL import Image

        from readerstudy.platform.password_hooks import end_tokens_of_disabled_accounts

        # Pillow's decompression-bomb guard agrees with the pixel cap (it warns above the
        # limit and refuses above twice it; readerstudy.imaging turns the warning into a
        # refusal). Set on Pillow here, not through readerstudy.imaging: that loads pydicom,
        # which a process that never opens an image (export_analysis, a worker) need not carry.
        Image.MAX_IMAGE_PIXELS = settings.MAX_IMAGE_PIXELS
        post_save.connect(
            end_tokens_of_disabled_accounts,
            sender=get_user_model(),
            dispatch_uid="readerstudy.end_tokens_of_disabled_accounts",
        )
