"""A reader's viewer preferences in a study: the window preset each modality opens at.

The viewer asks for the preset the reader chose last (per modality) before the study's own
default window; the reading page records every choice here, so it holds in every session and
arm of the study, after a sign-out and on another computer (models.ReadingPreference).
"""

from __future__ import annotations

from django.db import transaction

from annotation.models import ReadingPreference
from readerstudy.models import ReaderStudy
from readerstudy.vocabulary import WindowPreset

MODALITY_MAX = ReadingPreference._meta.get_field("modality").max_length


class PreferenceRejected(ValueError):
    """Not a preset or modality the viewer knows; the message says which."""


def reading_presets(study: ReaderStudy, reader) -> dict[str, str]:
    """modality -> the preset the reader chose last for it in this study."""
    return dict(
        ReadingPreference.objects.filter(study=study, reader=reader).values_list(
            "modality", "preset"
        )
    )


@transaction.atomic
def reading_preset_set(*, study: ReaderStudy, reader, modality: str, preset: str) -> None:
    """Remember `preset` for the reader's images of `modality` in `study` (the last wins)."""
    modality = (modality or "").strip() or "image"
    if preset not in WindowPreset.values:
        raise PreferenceRejected(
            f"{preset[:20]!r} is not a window preset (one of {', '.join(WindowPreset.values)})."
        )
    if len(modality) > MODALITY_MAX:
        raise PreferenceRejected(f"A modality has at most {MODALITY_MAX} characters.")
    ReadingPreference.objects.update_or_create(
        study=study, reader=reader, modality=modality, defaults={"preset": preset}
    )
