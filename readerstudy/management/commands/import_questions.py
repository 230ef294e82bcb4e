"""manage.py import_questions FILE.csv|FILE.xlsx --dataset NAME [--images-root D|--dicomweb URL]"""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from readerstudy.management.commands.import_rexvqa import write_summary
from readerstudy.management.dicomweb_options import add_image_source_arguments, dicomweb_config
from readerstudy.rexvqa import RexvqaError
from readerstudy.services.importing import question_bank_import


class Command(BaseCommand):
    help = (
        "Import a question bank spreadsheet (.csv or .xlsx; columns in docs/cli.md and "
        "docs/question_bank_template.csv). All or nothing; re-importing changes nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path)
        parser.add_argument("--dataset", required=True, help="Dataset (question bank) name.")
        add_image_source_arguments(
            parser, root_help="Folder the image_paths are relative to (default: the file's folder)."
        )
        parser.add_argument("--json", action="store_true", help="Print a JSON summary.")

    def handle(self, *args, **opts):
        path: Path = opts["file"]
        dicomweb = dicomweb_config(opts)
        try:
            summary = question_bank_import(
                path=path,
                dataset_name=opts["dataset"],
                images_root=opts["images_root"],
                dicomweb=dicomweb,
                progress=not opts["json"] and self.stderr.isatty(),
            )
        except FileNotFoundError as exc:
            raise CommandError(
                f"Import failed, nothing was written. file not found: {path}"
            ) from exc
        except RexvqaError as exc:
            raise CommandError(f"Import failed, nothing was written. {exc}") from exc
        write_summary(self, summary, opts["json"])
