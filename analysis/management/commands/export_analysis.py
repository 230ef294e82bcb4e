"""python manage.py export_analysis SLUG --out DIR [--missing wrong|exclude] [--scale ...]"""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from analysis.exports import write_analysis
from analysis.pipeline import AnalysisSettings, analyse
from analysis.selectors import study_responses
from readerstudy.models import ReaderStudy


class Command(BaseCommand):
    help = "Write accuracy tables, kappa matrices and heatmaps, responses and a report.xlsx."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--out", type=Path, required=True)
        parser.add_argument("--missing", choices=["wrong", "exclude"], default="wrong")
        parser.add_argument("--scale", choices=["answer", "correct"], default="answer")
        parser.add_argument("--kappa-range", choices=["-1,1", "0,1"], default="-1,1")
        parser.add_argument("--ci", choices=["wilson", "clopper-pearson"], default="wilson")
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
        )
        result = analyse(study_responses(study), settings)
        if result.accuracy.empty:
            raise CommandError("nothing to analyse: the study has no questions left")
        written = write_analysis(result, opts["out"])
        self.stdout.write(self.style.SUCCESS(f"Wrote {len(written)} files to {opts['out']}"))
        self.stdout.write(f"Policy: {settings.describe()}")
