"""Made-up ReXVQA files: the one writer of the shape `readerstudy.rexvqa` reads, for the demo,
the simulated study, the benchmarks and the tests.

A file made here has the released file's fields, names and folder layout (images under
`deid_png/<patient>/<accession>/studies/<uid>/series/<uid>/instances/`, JSON under
`metadata/`, image paths relative to the JSON's folder), so whatever imports it takes the
path a PI's real file takes.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from readerstudy.vocabulary import LETTERS


def instance_path(
    *, patient: str, accession: str, study_uid: str, series_uid: str, instance: str
) -> str:
    """An image's path in ReXVQA's layout, which the DICOMweb import reads the UIDs from."""
    return (
        f"deid_png/{patient}/{accession}/studies/{study_uid}/series/{series_uid}/"
        f"instances/{instance}"
    )


def labelled(options: Sequence[str]) -> list[str]:
    """Options as the released file writes them: "A. text", in the declared letters' order."""
    return [f"{letter}. {text}" for letter, text in zip(LETTERS, options, strict=True)]


def record(
    *,
    question: str,
    options: Sequence[str],
    correct: str,
    task: str,
    study_id: str,
    images: Sequence[str],
    views: Sequence[str],
    modality: str | None = "CR",
    **fields: Any,
) -> dict[str, Any]:
    """One question record. `options` are the texts without letters; `images` are paths in
    the images root, written relative to the JSON's folder ("../deid_png/..."); `fields` are
    further ReXVQA fields by their names in the file (PatientAge, Findings, ...).
    `modality=None` leaves ImageModality out, as some released records do."""
    made: dict[str, Any] = {
        "question": question,
        "options": labelled(options),
        "correct_answer": correct,
        "task_name": task,
        "study_id": study_id,
        **fields,
        "ImagePath": [f"../{path}" for path in images],
        "ImageViewPosition": list(views),
    }
    if modality is not None:
        made["ImageModality"] = [modality] * len(images)
    return made


def place_image(source: Path, target: Path, *, link: bool = True) -> None:
    """Put an image at target: a hard link when asked and the file system allows (one
    radiograph serves many cases without copying its bytes), a copy otherwise (a caller that
    may change the file copies, so the source stays as it is); an image already there is kept."""
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists():
        return
    if link:
        try:
            os.link(source, target)
            return
        except OSError:
            pass
    shutil.copyfile(source, target)


def write_png(target: Path, *, side: int = 32, shade: int = 128) -> Path:
    """A small uniform 8-bit radiograph: quick to derive, and its shade makes its pixels (and
    so its identity for blinding) its own."""
    from PIL import Image

    target.parent.mkdir(parents=True, exist_ok=True)
    Image.new("L", (side, side), color=shade).save(target)
    return target


def write_file(
    root: Path, records: Mapping[str, Any], *, name: str, indent: int | None = None
) -> Path:
    """Write records as root/metadata/<name>.json, beside the images root, and return its path."""
    path = root / "metadata" / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(records, indent=indent))
    return path
