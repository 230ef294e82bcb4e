"""python manage.py create_study SLUG --dataset NAME --sample N [design options]"""

import json

from django.core.management.base import BaseCommand, CommandError

from readerstudy.design.rules import Design, DesignError, aid_mode_or_default
from readerstudy.design.services import designed_study_create
from readerstudy.imaging import ImagingError
from readerstudy.models import Dataset
from readerstudy.selectors import design_sentence
from readerstudy.services.studies import StudyError, study_create
from readerstudy.vocabulary import ARM_LAYOUTS, AidMode, ConfidenceScale


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
        design = parser.add_argument_group("design (see the README's PI guide)")
        design.add_argument(
            "--arms",
            default="unaided",
            help=f"Reading arms: {', '.join(ARM_LAYOUTS)} (two arms: a crossover).",
        )
        design.add_argument("--aid-model", default="", help="The AI model the aided arm shows.")
        design.add_argument("--aid-mode", default="", help=f"One of: {', '.join(AidMode.values)}.")
        design.add_argument("--washout-days", type=int, default=0)
        design.add_argument("--groups", type=int, default=0, help="Split-plot groups (0: none).")
        design.add_argument("--anchor", type=int, default=0, help="Questions every group reads.")
        design.add_argument("--shuffle-options", action="store_true")
        design.add_argument(
            "--confidence-scale",
            default=ConfidenceScale.NONE,
            choices=ConfidenceScale.values,
            help="Readers rate their confidence with every answer on this scale (none: not asked).",
        )

    def handle(self, *args, **opts):
        try:
            dataset = Dataset.objects.get(name=opts["dataset"])
        except Dataset.DoesNotExist as exc:
            raise CommandError(f"no dataset named {opts['dataset']!r}") from exc
        design = Design(
            arms=opts["arms"],
            aid_model=opts["aid_model"],
            aid_mode=aid_mode_or_default(opts["arms"], opts["aid_mode"]),
            washout_days=opts["washout_days"],
            groups=opts["groups"],
            anchor=opts["anchor"],
            shuffle_options=opts["shuffle_options"],
            confidence_scale=opts["confidence_scale"],
        )
        try:
            created, designed = designed_study_create(
                design=design,
                create=lambda: study_create(
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
                ),
            )
        except (StudyError, ImagingError, DesignError) as exc:
            raise CommandError(f"Study not created. {exc}") from exc
        if opts["json"]:
            payload = {
                "slug": created.study.slug,
                "question_ids": created.question_ids,
                "per_task": created.per_task,
                "images_derived": created.images_derived,
                "design": design_sentence(created.study),
                "aid_missing": designed.aid_missing,
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
        self.stdout.write(f"Design: {design_sentence(created.study)}")
        if designed.aid_missing:
            self.stdout.write(
                f"  The AI gave no usable answer for {designed.aid_missing} questions: the "
                "aided arm says so on those."
            )
