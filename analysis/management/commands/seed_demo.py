"""python manage.py seed_demo [--password PW] [--dicomweb URL ...]: demo data and users.

Idempotent. With --dicomweb (used by `make demo-pacs`), the demo file's images are fetched
from that DICOMweb server into the dataset "ReXVQA demo (PACS)" and the study "demo-pacs".
"""

import secrets
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from analysis.demo import AIDED_SLUG, seed_aided_study, seed_predictions, seed_rated_study
from analysis.demo import MODELS as MODEL_NAMES
from annotation.demo import PRACTICE_READERS, seed_practice, simulate_readers
from readerstudy import demo, demo_roc
from readerstudy.management.dicomweb_options import add_image_source_arguments, dicomweb_config
from readerstudy.models import Dataset, ReaderStudy, Role
from readerstudy.rexvqa import RexvqaError
from readerstudy.services.importing import rexvqa_import
from readerstudy.services.studies import membership_add, study_create


class Command(BaseCommand):
    help = (
        "Create the demo dataset, studies and users (reader1-3, expert1, pi1; reader4-6 read "
        "the AI-assisted study, reader7-10 the rated one)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--password", help="Password for every demo user (default: random).")
        add_image_source_arguments(parser)

    def handle(self, *args, **opts):
        password = opts["password"] or secrets.token_urlsafe(9)
        root = Path(settings.MEDIA_ROOT) / "demo-source"
        json_path = demo.write_demo_files(root)
        dicomweb = dicomweb_config(opts)
        dataset_name = demo.PACS_DATASET_NAME if dicomweb else demo.DATASET_NAME
        slug = demo.PACS_STUDY_SLUG if dicomweb else demo.STUDY_SLUG
        try:
            summary = rexvqa_import(path=json_path, dataset_name=dataset_name, dicomweb=dicomweb)
        except RexvqaError as exc:
            raise CommandError(f"Demo import failed, nothing was written. {exc}") from exc
        self.stdout.write(
            f"Demo dataset: {summary.questions_created} questions new, "
            f"{summary.questions_unchanged} already there."
        )
        User = get_user_model()
        with transaction.atomic():
            users = {}
            for username in [*demo.USERS, *demo.AIDED_READERS, *demo_roc.RATED_READERS]:
                user, _ = User.objects.get_or_create(username=username)
                user.set_password(password)
                user.save()
                users[username] = user
            users["pi1"].user_permissions.add(Permission.objects.get(codename="add_readerstudy"))
        dataset = Dataset.objects.get(name=dataset_name)
        study = ReaderStudy.objects.filter(slug=slug).first()
        if study is None:
            created = study_create(
                slug=slug,
                dataset=dataset,
                n=dataset.questions.count(),
                seed=7,
                title="Demo reader study: chest X-ray MCQs",
                instructions=(
                    "Answer each question from the images. Rate how hard it was and whether "
                    "the question fits the image. Keys: 1-4 or A-D choose, Enter submits, "
                    "? lists every shortcut."
                ),
            )
            study = created.study
        for username, role in demo.USERS.items():
            membership_add(study=study, user=users[username], role=role)
        membership_add(study=study, user=users["pi1"], role=Role.EXPERT)
        answered = simulate_readers(study, users)
        predictions = seed_predictions(dataset)
        self.stdout.write(
            f"Simulated readers reader2 and reader3 ({answered} new answers); "
            f"{predictions} AI predictions from {len(MODEL_NAMES)} demo models."
        )
        if not dicomweb:
            aided, aided_answers = seed_aided_study(dataset, users)
            first, *simulated = demo.AIDED_READERS
            self.stdout.write(
                f"AI-assisted study {aided.slug!r}: {' and '.join(simulated)} read both "
                f"sessions ({aided_answers} new answers); {first} is left to try it."
            )
            rated_import = rexvqa_import(
                path=demo_roc.write_rated_file(root), dataset_name=demo_roc.RATED_DATASET_NAME
            )
            rated_dataset = Dataset.objects.get(name=demo_roc.RATED_DATASET_NAME)
            seed_predictions(rated_dataset, probabilities=True)
            rated, rated_answers = seed_rated_study(rated_dataset, users)
            first, *simulated = demo_roc.RATED_READERS
            self.stdout.write(
                f"Rated study {rated.slug!r} (confidence 1-5 with every answer; "
                f"{rated_import.binary} binary questions): {', '.join(simulated)} read it "
                f"({rated_answers} new answers); {first} is left to try it."
            )
            teaching = rexvqa_import(
                path=demo.write_teaching_file(root), dataset_name=demo.TEACHING_DATASET_NAME
            )
            practice, sat = seed_practice(
                Dataset.objects.get(name=demo.TEACHING_DATASET_NAME), users
            )
            fresh, sitter = PRACTICE_READERS
            self.stdout.write(
                f"Practice set {practice.slug!r} ({practice.items.count()} questions from the "
                f"teaching file, {teaching.questions_created} questions new): {fresh} to try "
                f"it, {sitter} sat it 8 days ago{f' ({sat} answers)' if sat else ''} and their "
                "misses are due again."
            )
        self.stdout.write(self.style.SUCCESS("Demo ready."))  # the server prints its own address
        self.stdout.write("Logins (username / password):")
        for username, role in demo.USERS.items():
            self.stdout.write(f"  {username:8} / {password}   ({role})")
        if not dicomweb:
            for username in demo.AIDED_READERS:
                self.stdout.write(f"  {username:8} / {password}   (reader of {AIDED_SLUG})")
            for username in demo_roc.RATED_READERS:
                self.stdout.write(
                    f"  {username:8} / {password}   (reader of {demo_roc.RATED_SLUG})"
                )
