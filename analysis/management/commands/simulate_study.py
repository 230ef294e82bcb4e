"""python manage.py simulate_study SLUG [--design crossover] [--readers 6] [--xrays 60] ...

A whole reader study made through the platform's services (analysis.simulation): a dataset
imported from a generated ReXVQA file, an AI model's predictions, the study and its design,
simulated readers of known accuracy and AI reliance, an expert's rejections and a PI's
exclusions, stopped at a chosen point of the reading. For demos and for trying the analysis.
"""

from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from analysis.simulation import DESIGNS, STOPS, Simulation, SimulationError, simulate
from readerstudy.design.rules import DesignError
from readerstudy.imaging import ImagingError
from readerstudy.rexvqa import RexvqaError
from readerstudy.selectors import design_sentence
from readerstudy.services.studies import StudyError
from readerstudy.vocabulary import ConfidenceScale


class Command(BaseCommand):
    help = "Simulate a whole reader study (readers of known accuracy and AI reliance)."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--design", choices=list(DESIGNS), default="crossover")
        parser.add_argument("--stop", choices=list(STOPS), default="all-finished")
        parser.add_argument("--readers", type=int, default=6)
        parser.add_argument("--xrays", type=int, default=60)
        parser.add_argument("--questions", default="3,4", help="Per X-ray: LOW,HIGH.")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--ai-accuracy", type=float, default=0.8)
        parser.add_argument("--washout-days", type=int, default=14)
        parser.add_argument("--groups", type=int, default=2, help="Split-plot designs.")
        parser.add_argument("--missing", type=float, default=0.05)
        parser.add_argument("--rejected", type=int, default=2)
        parser.add_argument("--excluded", type=int, default=1)
        parser.add_argument(
            "--confidence-scale",
            choices=list(ConfidenceScale.values),
            default=ConfidenceScale.NONE,
            help="Readers rate every answer on this scale.",
        )
        parser.add_argument(
            "--binary",
            type=float,
            default=0.0,
            help="Share of yes/no questions declared binary (ROC tasks), 0-1.",
        )
        parser.add_argument(
            "--pi", default="", help="Also make this existing user a PI of the study."
        )

    def handle(self, *args, **opts):
        try:
            low, high = (int(v) for v in opts["questions"].split(","))
        except ValueError as exc:
            raise CommandError("--questions takes LOW,HIGH, e.g. 3,4") from exc
        sim = Simulation(
            slug=opts["slug"],
            design=opts["design"],
            readers=opts["readers"],
            xrays=opts["xrays"],
            questions_per_xray=(low, high),
            seed=opts["seed"],
            stop=opts["stop"],
            ai_accuracy=opts["ai_accuracy"],
            washout_days=opts["washout_days"],
            groups=opts["groups"],
            missing=opts["missing"],
            rejected=opts["rejected"],
            excluded=opts["excluded"],
            confidence=opts["confidence_scale"],
            binary=opts["binary"],
        )
        root = Path(settings.MEDIA_ROOT) / "simulated-source" / sim.slug
        try:
            made = simulate(sim, root, extra_pi=opts["pi"])
        except (SimulationError, StudyError, DesignError, RexvqaError, ImagingError) as exc:
            raise CommandError(f"Study not simulated. {exc}") from exc
        study = made.study
        self.stdout.write(
            self.style.SUCCESS(f"Simulated study {study.slug!r}")
            + f": {study.items.count()} questions, {made.answers} answers, "
            f"{made.finished_sessions} sessions finished (stopped at {sim.stop})."
        )
        self.stdout.write(f"Design: {design_sentence(study)}")
        for reader in made.readers:
            self.stdout.write(
                f"  {reader.username}: accuracy {reader.accuracy:.2f} alone, takes the AI's "
                f"answer {reader.reliance:.0%} of the time when aided"
            )
        self.stdout.write(
            f"PI {made.pi.username}, expert {made.expert.username} (no password set: use "
            "`manage.py changepassword` or --pi); "
            f"{len(made.rejected)} questions rejected by the expert, {len(made.excluded)} "
            "excluded by the PI."
        )
