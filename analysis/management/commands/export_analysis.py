"""python manage.py export_analysis SLUG --out DIR [policy flags: --missing wrong|exclude ...]"""

import datetime as dt
import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from analysis import policy
from analysis.cache import data_version
from analysis.design_frame import design_frame
from analysis.exports import ExportInfo, analysis_files, write_files
from analysis.pipeline import analyse, attach_design
from analysis.selectors import study_facts, study_responses
from analysis.stats import AnalysisInputError
from analysis.switches import add_flags, from_flags
from readerstudy.models import ReaderStudy


class Command(BaseCommand):
    help = (
        "Write every analysis table (plain CSV), the figures (PNG, SVG, PDF), report.xlsx, "
        "policy.json and README.txt (what each table rests on)."
    )
    # The system checks load the URLconf, and with it every view and the imaging stack
    # (pydicom): 50 MB that an export, which reads the database and writes files, never uses.
    requires_system_checks = []

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--out", type=Path, required=True)
        # The policy's flags (analysis.policy.SWITCHES with a `flag`), defaults as the page's.
        add_flags(parser, policy.SWITCHES)

    def handle(self, *args, **opts):
        try:
            study = ReaderStudy.objects.get(slug=opts["slug"])
        except ReaderStudy.DoesNotExist as exc:
            raise CommandError(f"no study {opts['slug']!r}") from exc
        settings = from_flags(policy.settings_class(), opts)
        try:
            responses = study_responses(study, key=settings.key_policy)
            result = analyse(responses, settings, study_facts(study))
            if study.aid_model:  # aided vs unaided and the MRMC-package files, like the ZIP
                frame = design_frame(
                    study,
                    include_excluded=result.settings.include_excluded,
                    key=settings.key_policy,
                )
                attach_design(result, frame)
        except AnalysisInputError as exc:
            raise CommandError(str(exc)) from exc
        if result.accuracy.empty:
            raise CommandError("nothing to analyse: the study has no questions left")
        info = ExportInfo(
            study.slug, study.title, data_version(study), dt.datetime.now(dt.UTC).date()
        )
        files = analysis_files(result, info=info)
        key_words = result.key_version
        del result  # the long frames go once the tables are written, before the figures
        written = write_files(files, opts["out"])
        self.stdout.write(self.style.SUCCESS(f"Wrote {len(written)} files to {opts['out']}"))
        self.stdout.write(f"Policy: {json.dumps(settings.policy())}")
        self.stdout.write(f"Key version: {key_words}")
