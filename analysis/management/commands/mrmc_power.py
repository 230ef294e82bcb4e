"""python manage.py mrmc_power SLUG [--effect 0.05] [--power 0.8] [--alpha 0.05] [--missing ...]

Readers x X-rays a new aided-vs-unaided study needs, with SLUG (finished or running) as the
pilot: its Obuchowski-Rockette variance components (Hillis-Obuchowski-Berbaum 2011). The same
table as the analysis page's power section and the API's `power`.
"""

from django.core.management.base import BaseCommand, CommandError

from analysis.design_frame import design_frame
from analysis.forms import PowerForm
from analysis.policy import AnalysisSettings
from analysis.stats import AnalysisInputError, DesignPolicy, design_results, power_table
from analysis.switches import add_flags
from readerstudy.models import ReaderStudy
from readerstudy.platform.spreadsheets import frame_csv


class Command(BaseCommand):
    help = (
        "Readers x X-rays needed to detect an aided - unaided accuracy difference with a given "
        "power, from a two-arm study used as the pilot (CSV on stdout, headed by the method)."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug")
        # The power section's question (as the page's and the API's), and the analysis
        # policy's switches the pilot's estimate rests on.
        policy = [AnalysisSettings.switch(name) for name in ("alpha", "missing")]
        add_flags(parser, [*PowerForm.QUESTION, *policy])

    def handle(self, *args, **opts):
        try:
            study = ReaderStudy.objects.get(slug=opts["slug"])
        except ReaderStudy.DoesNotExist as exc:
            raise CommandError(f"no study {opts['slug']!r}") from exc
        if not study.aid_model:
            raise CommandError(
                f"{study.slug!r} has no aided arm: a pilot needs aided and unaided readings"
            )
        frame = design_frame(study)
        if frame.empty:
            raise CommandError(f"{study.slug!r} has no answers yet: nothing to take as a pilot")
        try:
            results = design_results(
                frame, DesignPolicy(missing=opts["missing"], alpha=opts["alpha"])
            )
        except AnalysisInputError as exc:
            raise CommandError(str(exc)) from exc
        if results["result"] is None:
            raise CommandError(f"no pilot estimate: {results['design']}")
        effect, target = opts["effect"], opts["power"]
        table = power_table(results, effect, target, opts["alpha"])
        if list(table.data.columns) == ["note"]:  # e.g. a split-plot pilot
            raise CommandError(f"no power table: {table.data['note'].iloc[0]}")
        header = [f"pilot: {study.slug}: {results['design']}", *table.header_lines()]
        self.stdout.write(frame_csv(table.data, header_lines=header), ending="")
