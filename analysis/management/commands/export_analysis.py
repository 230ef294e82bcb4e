"""python manage.py export_analysis SLUG --out DIR [--missing wrong|exclude] [--scale ...]"""

import datetime as dt
import json
from pathlib import Path

from django.conf import settings as django_settings
from django.core.management.base import BaseCommand, CommandError

from analysis.cache import data_version
from analysis.design_frame import design_frame
from analysis.exports import ExportInfo, analysis_files, write_files
from analysis.key_version import KEY_POLICIES
from analysis.pipeline import AnalysisSettings, analyse, attach_design
from analysis.selectors import study_facts, study_responses
from analysis.stats import AnalysisInputError
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
        parser.add_argument("--missing", choices=["wrong", "exclude"], default="wrong")
        parser.add_argument("--scale", choices=["answer", "correct"], default="answer")
        parser.add_argument("--kappa-range", choices=["-1,1", "0,1"], default="-1,1")
        parser.add_argument("--ci", choices=["wilson", "clopper-pearson"], default="wilson")
        parser.add_argument("--alpha", type=float, default=0.05, help="1 - CI level")
        parser.add_argument("--bootstrap", type=int, default=1000, help="replicates")
        parser.add_argument("--seed", type=int, default=0, help="bootstrap seed")
        parser.add_argument(
            "--ni-margin", type=float, default=0.05, help="aided vs unaided NI margin (accuracy)"
        )
        parser.add_argument(
            "--include-rejected",
            action="store_true",
            help="Count questions an expert rejected (default: leave them out).",
        )
        parser.add_argument(
            "--holm-family", choices=["ai_vs_reader", "all_pairs"], default="ai_vs_reader"
        )
        parser.add_argument(
            "--exclude-fast",
            action="store_true",
            help="Leave out answers faster than FAST_ANSWER_MS (default: flag and keep them).",
        )
        parser.add_argument(
            "--key",
            choices=list(KEY_POLICIES),
            default=AnalysisSettings.key_policy,
            help="Which keys score the answers (default: adjudicated; until a correction is "
            "accepted they are the imported ones).",
        )
        parser.add_argument(
            "--include-excluded",
            action="store_true",
            help="Count questions the PI excluded (default: leave them out).",
        )

    def handle(self, *args, **opts):
        try:
            study = ReaderStudy.objects.get(slug=opts["slug"])
        except ReaderStudy.DoesNotExist as exc:
            raise CommandError(f"no study {opts['slug']!r}") from exc
        settings = AnalysisSettings(
            missing=opts["missing"],
            scale=opts["scale"],
            vrange=opts["kappa_range"],
            include_excluded=opts["include_excluded"],
            ci_method=opts["ci"],
            alpha=opts["alpha"],
            n_boot=opts["bootstrap"],
            seed=opts["seed"],
            ni_margin=opts["ni_margin"],
            exclude_rejected=not opts["include_rejected"],
            holm_family=opts["holm_family"],
            time_cap_ms=django_settings.MAX_CASE_TIME_MS,
            fast_answer_ms=django_settings.FAST_ANSWER_MS,
            exclude_fast=opts["exclude_fast"],
            key_policy=opts["key"],
        )
        if not 0 < settings.alpha < 1 or settings.n_boot < 1:
            raise CommandError("--alpha must be between 0 and 1 and --bootstrap at least 1")
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
