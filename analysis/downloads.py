"""An analysis's downloads: each figure in each format (remembering a figure that cannot be
drawn, and why), and the export ZIP with its README's study and data version. Drawn by the
analysis job (analysis.preparation.prepare_work) into the shared cache under the analysis's
(study, data version, policy) key (`analysis.cache`); a page or a download reads them there.
"""

from __future__ import annotations

import datetime as dt
import logging

from analysis.cache import StudyAnalysis
from analysis.exports import ExportInfo, analysis_zip, figure_failure_words
from analysis.figure_formats import FORMATS
from analysis.figures import figure_builders

log = logging.getLogger(__name__)


def figure(analysis: StudyAnalysis, name: str, fmts) -> dict[str, bytes] | None:
    """Figure `name` in each of `fmts`; None if the analysis has no such figure, or if it
    cannot be drawn: then `figure_failure` says why (remembered with the analysis, so it is
    not tried again for the same data, policy and code), and every table, the other figures
    and the ZIP still come out without it."""
    from analysis.plots import figure_bytes  # matplotlib: drawing processes only

    builders = figure_builders(analysis.result)
    if name not in builders or figure_failure(analysis, name) is not None:
        return None
    # Asked for every format at once (the ZIP): the drawing is not needed afterwards.
    keep = not set(fmts) >= set(FORMATS)
    try:
        return analysis.figure_formats(name, builders[name], figure_bytes, fmts, keep=keep)
    except Exception as error:
        log.exception("figure %s of study %s could not be drawn", name, analysis.study.pk)
        analysis.store(f"figure-failed:{name}", figure_failure_words(error))
        return None


def figure_failure(analysis: StudyAnalysis, name: str) -> str | None:
    """Why figure `name` could not be drawn, in words; None if it was not found to fail."""
    return analysis.lookup(f"figure-failed:{name}")


def failed_figures(analysis: StudyAnalysis) -> dict[str, str]:
    """Every figure of the analysis that could not be drawn: name -> why."""
    found = {name: figure_failure(analysis, name) for name in figure_builders(analysis.result)}
    return {name: why for name, why in found.items() if why is not None}


def export_info(analysis: StudyAnalysis) -> ExportInfo:
    """The study and data version an export is of, dated today (UTC): README.txt's first
    lines and every download's file name."""
    study = analysis.study
    return ExportInfo(
        study.slug,
        study.title,
        analysis.version,
        dt.datetime.now(dt.UTC).date(),
        practice=study.practice,
    )


def build_zip(analysis: StudyAnalysis) -> bytes:
    result = analysis.result
    drawn = {name: figure(analysis, name, FORMATS) for name in figure_builders(result)}
    failed = failed_figures(analysis)
    info = export_info(analysis)
    body = analysis_zip(result, figure=lambda name, fmt: drawn[name][fmt], info=info, failed=failed)
    analysis.store("zip", body)
    return body
