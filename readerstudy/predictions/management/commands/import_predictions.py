"""python manage.py import_predictions --dataset NAME --model NAME FILE [--replace] [--json]"""

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from readerstudy.models import Dataset
from readerstudy.predictions.services import PredictionImportError, predictions_import_file


class Command(BaseCommand):
    help = "Import one AI model's predictions (CSV or ReXVQA inference JSON), all or nothing."

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path)
        parser.add_argument("--dataset", required=True)
        parser.add_argument("--model", required=True, help="Model name shown in the analysis.")
        parser.add_argument(
            "--replace", action="store_true", help="Replace this model's earlier predictions."
        )
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, **opts):
        try:
            dataset = Dataset.objects.get(name=opts["dataset"])
        except Dataset.DoesNotExist as exc:
            raise CommandError(f"no dataset named {opts['dataset']!r}") from exc
        try:
            summary = predictions_import_file(
                dataset=dataset,
                model_name=opts["model"],
                path=opts["file"],
                replace=opts["replace"],
            )
        except PredictionImportError as exc:
            raise CommandError(f"Import failed, nothing was written. {exc}") from exc
        if opts["json"]:
            self.stdout.write(json.dumps(summary.as_dict(), indent=2))
            return
        self.stdout.write(
            self.style.SUCCESS(f"Imported {summary.predictions} predictions for {summary.model!r}")
            + f"; failed extractions: {summary.failed_extractions}."
        )
