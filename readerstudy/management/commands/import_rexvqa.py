"""python manage.py import_rexvqa FILE [--dataset NAME] [--images-root DIR | --dicomweb URL ...]"""

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from readerstudy.management.dicomweb_options import add_image_source_arguments, dicomweb_config
from readerstudy.rexvqa import RexvqaError
from readerstudy.services.importing import ImportSummary, rexvqa_import


def write_summary(command: BaseCommand, summary: ImportSummary, as_json: bool) -> None:
    if as_json:
        command.stdout.write(json.dumps(summary.as_dict(), indent=2))
        return
    s = summary
    command.stdout.write(
        command.style.SUCCESS(f"Imported into dataset {s.dataset!r}: ")
        + f"questions {s.questions_created} new / {s.questions_unchanged} unchanged; "
        f"cases {s.cases_created} / {s.cases_unchanged}; "
        f"images {s.images_created} / {s.images_unchanged}."
    )
    for task, count in s.per_task.items():
        command.stdout.write(f"  {task}: {count}")
    if s.binary or s.binary_declared:
        changed = (
            f" ({s.binary_declared} already imported declared anew)" if s.binary_declared else ""
        )
        command.stdout.write(f"  binary (finding present / absent): {s.binary}{changed}")


class Command(BaseCommand):
    help = "Import a ReXVQA question file (all or nothing). Re-importing changes nothing."

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path)
        parser.add_argument("--dataset", default=None, help="Dataset name (default: file stem).")
        add_image_source_arguments(
            parser, root_help="Folder holding deid_png/ (default: parent of the file's folder)."
        )
        parser.add_argument("--json", action="store_true", help="Print a JSON summary.")

    def handle(self, *args, **opts):
        path: Path = opts["file"]
        name = opts["dataset"] or path.stem
        progress = not opts["json"] and self.stderr.isatty()
        dicomweb = dicomweb_config(opts)
        try:
            summary = rexvqa_import(
                path=path,
                dataset_name=name,
                images_root=opts["images_root"],
                dicomweb=dicomweb,
                progress=progress,
            )
        except RexvqaError as exc:
            raise CommandError(f"Import failed, nothing was written. {exc}") from exc
        write_summary(self, summary, opts["json"])
