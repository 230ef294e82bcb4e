"""Signals across layers: a lower layer says what happened, a higher one decides what to do.

`study_data_changed(study=...)` is sent after a commit that changes what a study's analysis
reads (answers, exclusions, predictions, display names); the analysis app schedules its
debounced re-analysis on it (analysis.preparation.refresh_later). No business logic hangs on it.
"""

from __future__ import annotations

from django.db import transaction
from django.dispatch import Signal

study_data_changed = Signal()


def data_changed(study) -> None:
    """Send `study_data_changed` for `study` once the current transaction commits."""
    transaction.on_commit(lambda: study_data_changed.send(sender=type(study), study=study))
