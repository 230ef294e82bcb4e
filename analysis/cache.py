"""Compute a study's analysis once per data version and reuse it for the page, its figures,
the downloads, the ZIP and the API.

The version stamp changes whenever anything the analysis reads changes: answers (count, last
id, last update), predictions (count, last id: a replacement creates new rows), exclusions
(which questions, with which reasons), the raters with their display names (the PI's labels,
model names, usernames), the study's questions and their key versions (an accepted
correction or its reversal, readerstudy.keys).
The code is part of the stamp too: `CODE_VERSION` is a hash of the analysis package's source,
taken at start-up, so a deploy that changes a statistic or a column is a new version with
nothing to bump by hand; the page's cached HTML is keyed by its templates' content as well.
The policy is part of every key. Entries live in Django's cache (`CACHES["default"]`; a
shared backend such as Redis or the file cache lets workers share them), and are only ever
looked up under the current stamp, so a stale entry is never served.
"""

from __future__ import annotations

import functools
import gc
import hashlib
import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

from django.core.cache import cache
from django.db.models import Count, Max
from django.template.loader import get_template

from analysis.design_frame import design_frame
from analysis.pipeline import (
    AnalysisResult,
    AnalysisSettings,
    analyse,
    attach_confidence,
    attach_design,
)
from analysis.selectors import (
    model_probabilities,
    present_options,
    study_facts,
    study_questions,
    study_raters,
    study_responses,
)
from analysis.stats import power_table
from annotation.models import Answer, ExpertReview
from readerstudy.models import Membership, ReaderStudy, StudyQuestion
from readerstudy.predictions.models import Prediction
from readerstudy.question_versions import QuestionVersion
from readerstudy.vocabulary import Decision

# One INFO line per analysis computed and per figure drawn or rendered, naming the study,
# data version and policy: how an operator (and benchmarks/scale) sees work done twice.
log = logging.getLogger(__name__)


def source_version(root: Path, pattern: str) -> str:
    """A short hash of the files under `root` that match `pattern`: their paths and bytes."""
    digest = hashlib.sha256()
    for path in sorted(root.rglob(pattern)):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


# The analysis code as it is at start-up (every module of this package, the statistics
# included): part of every data version, so cached results never outlive the code.
CODE_VERSION = source_version(Path(__file__).resolve().parent, "*.py")


def template_version(name: str) -> str:
    """A hash of the templates in the folder of template `name` (it and what it includes)."""
    return source_version(Path(get_template(name).origin.name).parent, "*.html")


@functools.cache
def cached_template_version(name: str) -> str:
    """`template_version`, read once per process (templates change with a deploy)."""
    return template_version(name)


TIMEOUT = 24 * 3600
DRAWN_KEEP = 8  # figures kept drawn in this process, waiting for their other formats

# A drawn figure (a matplotlib object: not for a shared cache) is kept until all its formats
# are stored, so the page's SVG and the ZIP's PNG and PDF lay it out once. A figure object
# is not safe to save from two threads at once: each figure is drawn under a lock of its own
# (one of a fixed set), so a request and the background preparation (analysis.preparation)
# never draw the same figure twice, and two different figures can still be drawn side by side.
_drawn: OrderedDict[str, object] = OrderedDict()
_drawn_lock = threading.Lock()
_FIGURE_LOCKS = tuple(threading.Lock() for _ in range(16))


def _figure_lock(key: str) -> threading.Lock:
    return _FIGURE_LOCKS[int(key[-8:], 16) % len(_FIGURE_LOCKS)]


def _take_drawn(key: str):
    with _drawn_lock:
        return _drawn.pop(key, None)


def _keep_drawn(key: str, figure) -> None:
    with _drawn_lock:
        _drawn[key] = figure
        while len(_drawn) > DRAWN_KEEP:
            _drawn.popitem(last=False)


def data_version(study: ReaderStudy) -> str:
    """A short hash of everything the analysis of `study` reads (a handful of aggregates)."""
    answers = Answer.objects.filter(item__study=study).aggregate(
        n=Count("id"), last=Max("id"), updated=Max("updated_at")
    )
    items = StudyQuestion.objects.filter(study=study)
    questions = items.aggregate(n=Count("id"), last=Max("id"), at=Max("excluded_at"))
    excluded = list(items.filter(excluded=True).order_by("id").values_list("id", "excluded_reason"))
    # Expert rejections decide which questions are analysed (policy exclude_rejected).
    # The Methods section reports seniority and reading conditions.
    seniority = list(
        Membership.objects.filter(study=study).order_by("id").values_list("id", "seniority")
    )
    conditions = (
        study.random_order,
        study.allow_revision,
        study.show_indication,
        study.lock_on_finish,
    )
    # The confidence scale and which questions are binary decide the ROC and calibration tables.
    confidence = (study.confidence_scale, sorted(present_options(study).items()))
    rejected = list(
        ExpertReview.objects.filter(item__study=study, decision=Decision.REJECT)
        .order_by("item_id", "expert_id")
        .values_list("item_id", "expert_id")
    )
    # The keys: a correction accepted (or reversed) for any of the study's questions, in this
    # study or another holding it, is a new version (readerstudy.keys).
    versions = QuestionVersion.objects.filter(question__study_items__study=study).aggregate(
        n=Count("id", distinct=True), last=Max("id"), at=Max("created_at")
    )
    predictions = Prediction.objects.filter(
        model__dataset=study.dataset, question__study_items__study=study
    ).aggregate(n=Count("id"), last=Max("id"))
    # Every rater with the name the tables show: the PI's labels, and a model or a user
    # renamed in the admin.
    raters = study_raters(study)
    stamp = repr(
        (
            CODE_VERSION,
            study.pk,
            study.created_at,
            answers,
            questions,
            excluded,
            rejected,
            seniority,
            conditions,
            confidence,
            predictions,
            raters,
            versions,
        )
    )
    return hashlib.sha256(stamp.encode()).hexdigest()[:24]


def _key(study: ReaderStudy, version: str, settings: AnalysisSettings, what: str) -> str:
    raw = f"{study.pk}:{version}:{settings.key()}:{what}"
    return "analysis:" + hashlib.sha256(raw.encode()).hexdigest()


class StudyAnalysis:
    """The analysis of one study under one policy at the current data version."""

    def __init__(self, study: ReaderStudy, settings: AnalysisSettings, version: str | None = None):
        """`version`: a data version named by a link (a figure on a page drawn at that
        version), to look up what was stored under it; by default the current one."""
        self.study = study
        self.settings = settings
        self.version = version or data_version(study)
        self._result: AnalysisResult | None = None

    def key(self, what: str) -> str:
        """The cache key of `what` for this study, data version and policy."""
        return _key(self.study, self.version, self.settings, what)

    def _what(self, what: str) -> str:
        """`what` of this study, version and policy, for the log."""
        policy = hashlib.sha256(self.settings.key().encode()).hexdigest()[:12]
        return f"{what} study={self.study.pk} version={self.version} policy={policy}"

    def has(self, what: str) -> bool:
        return cache.has_key(self.key(what))

    def lookup(self, what: str):
        return cache.get(self.key(what))

    def store(self, what: str, value, timeout: int = TIMEOUT) -> None:
        cache.set(self.key(what), value, timeout)

    def forget(self, what: str) -> None:
        cache.delete(self.key(what))

    def cached(self, what: str, build: Callable[[], object]):
        value = self.lookup(what)
        if value is None:
            value = build()
            self.store(what, value)
        return value

    @property
    def result(self) -> AnalysisResult:
        if self._result is None:
            self._result = self.cached("result", self._analyse)
        return self._result

    def design_power(self, effect: float, target: float):
        """The power section (readers x X-rays needed to detect `effect` with `target` power,
        this study as the pilot) as a DesignTable; None for a study without design results."""
        result = self.result
        if result.design is None:
            return None
        return self.cached(
            f"power:{effect!r}:{target!r}",
            lambda: power_table(result.design, effect, target, self.settings.alpha),
        )

    def _analyse(self) -> AnalysisResult:
        log.info("analysed %s pid=%s", self._what("result"), os.getpid())
        key = self.settings.key_policy
        responses = study_responses(self.study, key=key)
        result = analyse(
            responses, self.settings, study_facts(self.study), study_questions(self.study, key=key)
        )
        if self.study.aid_model:  # aided vs unaided, on the design frame, same policy
            # Every question (the responses export lists the excluded ones too, marked);
            # attach_design leaves out what the policy leaves out.
            frame = design_frame(self.study, include_excluded=True, key=key)
            result.arm_answers = frame
            attach_design(result, frame)
        scale = self.study.scale
        if scale is not None:  # ROC, AUC and calibration: a study with a confidence scale only
            attach_confidence(
                result, scale, present_options(self.study), model_probabilities(self.study)
            )
        return result

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
        if keep and all(body is not None for body in out.values()):
            return out  # warm: nothing to draw, nothing to let go
        key = self.key(f"drawn:{name}")
        with _figure_lock(key):
            # Another thread may have drawn them while this one waited for the lock.
            out = {fmt: self.lookup(f"figure:{name}:{fmt}") for fmt in fmts}
            missing = [fmt for fmt, body in out.items() if body is None]
            if not missing and keep:
                return out
            figure = _take_drawn(key)
            if missing:
                if figure is None:
                    log.info("drew %s pid=%s", self._what(f"figure:{name}"), os.getpid())
                    figure = build()
                for fmt in missing:
                    log.info("rendered %s pid=%s", self._what(f"figure:{name}:{fmt}"), os.getpid())
                    out[fmt] = render(figure, fmt)
                    self.store(f"figure:{name}:{fmt}", out[fmt])
            if keep and figure is not None:
                _keep_drawn(key, figure)
            elif figure is not None:
                # Let go with its 300 dpi rasters (the kappa heatmaps': 70 MB once saved as PNG
                # and PDF) now: a figure is a web of references only the cycle collector frees.
                del figure
                gc.collect()
        return out
