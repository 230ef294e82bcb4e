"""Compute a study's analysis once per data version and reuse it for the page, its figures,
the downloads, the ZIP and the API.

The version stamp changes whenever anything the analysis reads changes: answers (count, last
id, last update), predictions (count, last id: a replacement creates new rows), exclusions
(which questions, with which reasons), the PI's display names, and the study's questions.
The policy is part of every key. Entries live in Django's cache (`CACHES["default"]`; a
shared backend such as Redis or the file cache lets workers share them), and are only ever
looked up under the current stamp, so a stale entry is never served.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable

from django.core.cache import cache
from django.db.models import Count, Max

from analysis.models import Prediction, RaterLabel
from analysis.pipeline import AnalysisResult, AnalysisSettings, analyse
from analysis.selectors import study_responses
from annotation.models import Answer
from readerstudy.models import ReaderStudy, StudyQuestion

CODE_VERSION = "analysis-3"  # bump when the pipeline's output changes shape
TIMEOUT = 24 * 3600
DRAWN_KEEP = 8  # figures kept drawn in this process, waiting for their other formats

# A drawn figure (a matplotlib object: not for a shared cache) is kept until all its formats
# are stored, so the page's SVG and the ZIP's PNG and PDF lay it out once. One lock: a
# figure object is not safe to save from two threads at once.
_drawn: OrderedDict[str, object] = OrderedDict()
DRAWING = threading.Lock()


def data_version(study: ReaderStudy) -> str:
    """A short hash of everything the analysis of `study` reads (a handful of aggregates)."""
    answers = Answer.objects.filter(item__study=study).aggregate(
        n=Count("id"), last=Max("id"), updated=Max("updated_at")
    )
    items = StudyQuestion.objects.filter(study=study)
    questions = items.aggregate(n=Count("id"), last=Max("id"), at=Max("excluded_at"))
    excluded = list(items.filter(excluded=True).order_by("id").values_list("id", "excluded_reason"))
    predictions = Prediction.objects.filter(
        model__dataset=study.dataset, question__study_items__study=study
    ).aggregate(n=Count("id"), last=Max("id"))
    labels = sorted(RaterLabel.objects.filter(study=study).values_list("rater", "label"))
    stamp = repr(
        (
            CODE_VERSION,
            study.pk,
            study.created_at,
            answers,
            questions,
            excluded,
            predictions,
            labels,
        )
    )
    return hashlib.sha256(stamp.encode()).hexdigest()[:24]


def _key(study: ReaderStudy, version: str, settings: AnalysisSettings, what: str) -> str:
    raw = f"{study.pk}:{version}:{settings.key()}:{what}"
    return "analysis:" + hashlib.sha256(raw.encode()).hexdigest()


class StudyAnalysis:
    """The analysis of one study under one policy at the current data version."""

    def __init__(self, study: ReaderStudy, settings: AnalysisSettings):
        self.study = study
        self.settings = settings
        self.version = data_version(study)
        self._result: AnalysisResult | None = None

    def lookup(self, what: str):
        return cache.get(_key(self.study, self.version, self.settings, what))

    def store(self, what: str, value) -> None:
        cache.set(_key(self.study, self.version, self.settings, what), value, TIMEOUT)

    def cached(self, what: str, build: Callable[[], object]):
        value = self.lookup(what)
        if value is None:
            value = build()
            self.store(what, value)
        return value

    @property
    def result(self) -> AnalysisResult:
        if self._result is None:
            self._result = self.cached(
                "result", lambda: analyse(study_responses(self.study), self.settings)
            )
        return self._result

    def figure_formats(
        self,
        name: str,
        build: Callable[[], object],
        render: Callable[[object, str], bytes],
        fmts,
        *,
        keep: bool,
    ) -> dict[str, bytes]:
        """Figure `name` in each of `fmts`: from the cache, the missing ones from one drawing.
        `keep`: other formats may be asked for later, so keep the drawing in this process."""
        out = {fmt: self.lookup(f"figure:{name}:{fmt}") for fmt in fmts}
        missing = [fmt for fmt, body in out.items() if body is None]
        if not missing and keep:
            return out  # warm: nothing to draw, nothing to let go
        key = _key(self.study, self.version, self.settings, f"drawn:{name}")
        with DRAWING:
            figure = _drawn.pop(key, None)
            if missing:
                figure = figure or build()
                for fmt in missing:
                    out[fmt] = render(figure, fmt)
                    self.store(f"figure:{name}:{fmt}", out[fmt])
            if keep and figure is not None:
                _drawn[key] = figure
                while len(_drawn) > DRAWN_KEEP:
                    _drawn.popitem(last=False)
        return out
