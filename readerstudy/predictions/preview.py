"""What an upload of AI predictions would do, before it does it: the browser's preview.

Beside the import (`services.predictions_import`), not inside it: the preview reads the same
file with the same parser, matches the same questions, runs the same extraction and finds the
same studies, and writes nothing. The import itself stays one transaction, run only
when the PI confirms, on the file stored at preview time (`upload_store`), so what was
previewed is what is imported: a changed file, a preview confirmed twice and a model that
someone else imported since the preview are refused (`preview_confirm`).
"""

from __future__ import annotations

import hashlib
import shutil
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from django.db import transaction

from readerstudy.models import Dataset, ReaderStudy
from readerstudy.predictions.extraction import extract_letter
from readerstudy.predictions.files import (
    PredictionImportError,
    problem_lines,
    read_predictions,
    unknown_ids,
)
from readerstudy.predictions.models import AIModel
from readerstudy.predictions.services import (
    FAILED,
    PredictionSummary,
    _check_scope,
    failed_row,
    predictions_import,
    question_lookup,
    studies_showing_questions,
)


@dataclass
class PredictionPreview:
    model: str
    dataset: str
    rows: int = 0
    matched: int = 0  # rows whose question id is a question of the dataset
    in_study: int = 0  # of those, questions of the study the upload came through
    unknown_count: int = 0
    failed_extractions: int = 0
    failed_rows: list[dict] = field(default_factory=list)  # where no letter was found
    rules: dict[str, int] = field(default_factory=dict)
    existing: int = 0  # predictions the model has now (replaced when confirmed)
    studies: list[ReaderStudy] = field(default_factory=list)  # every study it would change
    # Why it cannot be confirmed as it is: every problem of the file (each kind with its
    # rows, prediction_files.problem_lines), and a model that exists without "Replace".
    problems: list[str] = field(default_factory=list)
    # The model as previewed ("" if it did not exist): a confirmation after someone else
    # imported it is refused (`preview_confirm`), so what was previewed is what is replaced.
    model_state: str = ""

    @property
    def importable(self) -> bool:
        return not self.problems


def predictions_preview(
    *,
    dataset: Dataset,
    model_name: str,
    content: bytes,
    replace: bool = False,
    actor=None,
    through: ReaderStudy | None = None,
) -> PredictionPreview:
    """The import's outcome without the import. A file that cannot be read raises
    PredictionImportError; an uploader who is not a PI of every study it would change,
    PredictionForbidden (as the import would); ids outside the dataset and a model that
    exists without `replace` are listed in `problems` next to the counts."""
    model_name = model_name.strip()
    if not model_name:
        raise PredictionImportError("a model name is required")
    parsed = read_predictions(content)
    questions = {qid: (pk, options) for qid, (pk, *options) in question_lookup(dataset).items()}
    rows = parsed.rows
    preview = PredictionPreview(model=model_name, dataset=dataset.name, rows=parsed.size)
    unknown = unknown_ids(rows, questions)
    preview.unknown_count = len(unknown)
    matched = [(questions[row.question_id], row) for row in rows if row.question_id in questions]
    preview.matched = len(matched)
    rules: Counter[str] = Counter()
    for (_, options), row in matched:
        rule = extract_letter(row.text, options).rule
        rules[rule] += 1
        if rule == FAILED:
            preview.failed_rows.append(failed_row(row))
    preview.rules = dict(sorted(rules.items()))
    preview.failed_extractions = rules.get(FAILED, 0)
    shown = {pk for (pk, _), _ in matched}
    if through is not None:
        preview.in_study = through.items.filter(question_id__in=shown).count()
    model = AIModel.objects.filter(dataset=dataset, name=model_name).first()
    if model is not None:
        earlier = set(model.predictions.values_list("question_id", flat=True))
        preview.existing = len(earlier)
        preview.model_state = model_state(model)
        shown |= earlier
    preview.studies = studies_showing_questions(dataset, shown)
    if actor is not None:
        _check_scope(actor, model_name, preview.studies)
    preview.problems += problem_lines(parsed.problems + unknown, dataset.name)
    if model is not None and not replace:
        preview.problems.append(
            f"Model {model_name!r} already has {preview.existing} predictions: tick "
            "“Replace” to overwrite them, or choose another model name."
        )
    return preview


def model_state(model: AIModel | None) -> str:
    """When the model's predictions were last imported ("" for no model): every import saves
    the model, so a different value means someone imported or replaced them since."""
    return model.imported_at.isoformat() if model is not None else ""


def preview_confirm(
    *, dataset: Dataset, claim: dict, actor, through: ReaderStudy
) -> PredictionSummary:
    """Import the previewed file (`claim`: the signed token's contents), once.

    The stored file is claimed first (`upload_claim`): a token sent twice, or by two tabs at
    once, imports once. Then, with the model's row locked, the model must be as previewed:
    if another PI imported or replaced it since, confirming would replace what the preview
    never showed, or a model that did not exist would be overwritten; refused. The file is
    removed whatever happens: a refused preview is uploaded again."""
    content = upload_claim(claim["file"], claim["sha256"])
    try:
        with transaction.atomic():
            current = (
                AIModel.objects.select_for_update()
                .filter(dataset=dataset, name=claim["model"])
                .first()
            )
            if model_state(current) != claim.get("state", ""):
                raise PredictionImportError(
                    f"model {claim['model']!r} changed since your preview (someone imported "
                    "its predictions meanwhile): upload the file again to see what confirming "
                    "would do now"
                )
            return predictions_import(
                dataset=dataset,
                model_name=claim["model"],
                content=content,
                source=claim["name"],
                # A model that did not exist at preview time is never replaced.
                replace=claim["replace"] and current is not None,
                actor=actor,
                through=through,
            )
    finally:
        upload_discard(claim["file"])


# The uploaded file, stored at preview time under MEDIA_ROOT (shared by every web server).


def _folder() -> Path:
    return Path(settings.MEDIA_ROOT) / "uploads" / "predictions"


# A preview confirmed later than this is refused; its file is then removed at the next upload.
PREVIEW_MAX_AGE = 60 * 60


def upload_store(content: bytes, name: str) -> tuple[str, str]:
    """Store the file for the confirmation: (path under the uploads folder, SHA-256).
    Files of previews nobody confirmed in time go first."""
    _forget_abandoned()
    token = uuid.uuid4().hex
    folder = _folder() / token
    folder.mkdir(parents=True)
    safe = Path(name).name or "predictions"
    (folder / safe).write_bytes(content)
    return f"{token}/{safe}", hashlib.sha256(content).hexdigest()


def _forget_abandoned() -> None:
    if not _folder().is_dir():
        return
    cutoff = time.time() - PREVIEW_MAX_AGE
    for folder in _folder().iterdir():
        try:
            stale = folder.stat().st_mtime < cutoff
        except OSError:
            continue
        if stale:
            shutil.rmtree(folder, ignore_errors=True)


CLAIMED = ".confirming"  # suffix of a stored preview's folder once a confirmation took it


def upload_claim(path: str, digest: str) -> bytes:
    """The stored file, taken for one confirmation: its folder is renamed (atomic, also on a
    shared MEDIA_ROOT), so a second confirmation of the same preview finds nothing. Refused
    (PredictionImportError) if it is gone, taken, or no longer the file previewed."""
    token, _, name = path.partition("/")
    folder = _folder() / Path(token).name
    claimed = folder.with_name(folder.name + CLAIMED)
    try:
        if not Path(token).name or folder.name.endswith(CLAIMED):
            raise FileNotFoundError(path)
        folder.rename(claimed)
    except OSError as exc:
        raise PredictionImportError(
            "this preview was confirmed already (or is being confirmed), or its file is "
            "gone: upload the file again"
        ) from exc
    # Taken by this confirmation: removed here if refused (nobody else may take it now).
    try:
        content = (claimed / Path(name).name).read_bytes()
    except OSError as exc:
        shutil.rmtree(claimed, ignore_errors=True)
        raise PredictionImportError("the previewed file is gone: upload it again") from exc
    if hashlib.sha256(content).hexdigest() != digest:
        shutil.rmtree(claimed, ignore_errors=True)
        raise PredictionImportError("the file changed after the preview: upload it again")
    return content


def upload_discard(path: str) -> None:
    token = Path(path.partition("/")[0]).name
    if token:
        shutil.rmtree(_folder() / token, ignore_errors=True)
        shutil.rmtree(_folder() / f"{token}{CLAIMED}", ignore_errors=True)
