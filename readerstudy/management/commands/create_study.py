"""python manage.py create_study SLUG --dataset NAME --sample N [...]"""

import json

from django.core.management.base import BaseCommand, CommandError

from readerstudy.imaging import ImagingError
from readerstudy.models import Dataset
from readerstudy.services.studies import StudyError, study_create


def _names(value: str | None) -> list[str]:
    return [v.strip() for v in (value or "").split(",") if v.strip()]


class Command(BaseCommand):
    help = "Sample a reader study from a dataset and derive its display images."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--dataset", required=True)
        parser.add_argument("--sample", type=int, required=True, help="Number of questions.")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--stratify", choices=["task", "category", "none"], default="task")
        parser.add_argument("--one-per-case", action="store_true")
        parser.add_argument("--title", default="")
        parser.add_argument("--readers", help="Comma-separated usernames.")
        parser.add_argument("--experts", help="Comma-separated usernames.")
        parser.add_argument("--pis", help="Comma-separated usernames.")
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, **opts):
        try:
            dataset = Dataset.objects.get(name=opts["dataset"])
        except Dataset.DoesNotExist as exc:
            raise CommandError(f"no dataset named {opts['dataset']!r}") from exc
        try:
            created = study_create(
                slug=opts["slug"],
                dataset=dataset,
                n=opts["sample"],
                seed=opts["seed"],
                stratify=opts["stratify"],
                one_per_case=opts["one_per_case"],
                title=opts["title"],
                readers=_names(opts["readers"]),
                experts=_names(opts["experts"]),
                pis=_names(opts["pis"]),
            )
        except (StudyError, ImagingError) as exc:
            raise CommandError(f"Study not created. {exc}") from exc
        if opts["json"]:
            payload = {
                "slug": created.study.slug,
                "question_ids": created.question_ids,
                "per_task": created.per_task,
                "images_derived": created.images_derived,
            }
            self.stdout.write(json.dumps(payload, indent=2))
            return
        self.stdout.write(
            self.style.SUCCESS(f"Created study {created.study.slug!r}")
            + f" with {len(created.question_ids)} questions"
            f" ({created.images_derived} display images derived)."
        )
        for task, count in created.per_task.items():
            self.stdout.write(f"  {task}: {count}")
