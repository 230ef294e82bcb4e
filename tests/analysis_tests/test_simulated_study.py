"""A whole study, simulated through the platform's services (analysis.simulation), stopped
at points of the reading and analysed the way the worker does (analysis.preparation.prepare: the
job, its tables, every figure in every format, the ZIP) under the policy switches: every job
succeeds, every table, figure and file comes out, every count equals the count made again
from the answers (simulated_checks), every interval lies in its range around its estimate,
every CSV opens in pandas, and the package files give the page's aided - unaided in R.

The suite runs a covering selection (IN_SUITE); `make bench` runs the whole sweep of
designs x stop points x a pairwise covering of the switches
(benchmarks/simulated_study_bench.py sets SIMULATED_STUDY_SWEEP=full). A problem of any
kind fails the case, naming the check that found it."""

from __future__ import annotations

import io
import itertools
import json
import os
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from analysis import preparation
from analysis.cache import StudyAnalysis
from analysis.exports import figure_builders
from analysis.pipeline import AnalysisSettings
from analysis.simulation import DESIGNS, STOPS, Simulation, simulate
from readerstudy.models import BackgroundJob, JobStatus
from tests.analysis_tests import simulated_checks as checks

pytestmark = pytest.mark.django_db

FULL = os.environ.get("SIMULATED_STUDY_SWEEP") == "full"


# The policy switches (AnalysisSettings; the analysis page's form, analysis.forms).
SWITCHES: dict[str, tuple] = {
    "missing": ("wrong", "exclude"),
    "include_excluded": (False, True),
    "exclude_rejected": (True, False),
    "exclude_fast": (False, True),
    "ci_method": ("wilson", "clopper-pearson"),
    "scale": ("answer", "correct"),
    "holm_family": ("ai_vs_reader", "all_pairs"),
}


def pairwise_policies() -> list[dict]:
    """Six policies covering every pair of values of every two switches: each switch is a
    column of six 0/1 entries with three ones and a 0 first (any two such distinct columns
    hold 00, 01, 10 and 11 in some row), the first row being the default policy."""
    columns = [c for c in itertools.product((0, 1), repeat=6) if sum(c) == 3 and c[0] == 0][
        : len(SWITCHES)
    ]
    return [
        {name: SWITCHES[name][col[row]] for name, col in zip(SWITCHES, columns, strict=True)}
        for row in range(6)
    ]


POLICIES = pairwise_policies()


@dataclass(frozen=True)
class Case:
    design: str
    stop: str
    policy: int  # index into POLICIES
    readers: int = 4
    xrays: int = 8
    seed: int = 1
    downloads: bool = True  # the PNG/PDF figures, the XLSX and the ZIP too (the slow part)
    r: bool = False  # run the package files in R as well

    @property
    def id(self) -> str:
        return f"{self.design}-{self.stop}-p{self.policy}"


def param(case: Case):
    """The case as a parameter (marked `roracle` where it runs the R packages)."""
    return pytest.param(case, marks=[pytest.mark.roracle] if case.r else [], id=case.id)


# The suite's selection: every design, every stop point and both values of every switch at
# least once, in five analyses; the ZIP and R on the finished crossover (the others draw the
# page's figures only: PNG, PDF and the ZIP are most of an analysis's time).
IN_SUITE = [
    Case(
        "crossover",
        "all-finished",
        0,
        r=True,
    ),
    Case(
        "split-plot-anchor",
        "arm-half-read",
        1,
        downloads=False,
    ),
    Case(
        "second-read",
        "one-reader-finished",
        2,
        downloads=False,
    ),
    Case("single", "before", 3, downloads=False),
    Case(
        "split-plot",
        "arm-half-read",
        4,
        downloads=False,
    ),
]


def sweep() -> list[Case]:
    """Designs x stop points, each under half the pairwise policies (by the parity of design,
    stop and policy numbers, so each policy meets every design at two stop points and every
    stop point in two or three designs)."""
    out = []
    for index, (design, stop) in enumerate(itertools.product(DESIGNS, STOPS)):
        d, s = divmod(index, len(STOPS))
        for policy in range(len(POLICIES)):
            if (d + s + policy) % 2:
                continue
            out.append(
                Case(
                    design,
                    stop,
                    policy,
                    readers=5,
                    xrays=12,
                    seed=index,
                    r=stop == "all-finished",
                )
            )
    return out


PARAMS = [param(c) for c in (sweep() if FULL else IN_SUITE)]


def simulated(case: Case, media_root: Path):
    sim = Simulation(
        slug=f"sim-{case.design}",
        design=case.design,
        readers=case.readers,
        xrays=case.xrays,
        seed=case.seed,
        stop=case.stop,
        questions_per_xray=(2, 4),
    )
    return simulate(sim, media_root / "simulated-source")


def analysed(study, policy: AnalysisSettings) -> tuple[StudyAnalysis, BackgroundJob]:
    """The analysis as the worker computes it: the job queued by `preparation.prepare`, run by the
    test's immediate task backend (TASKS_URL=immediate://) through `job_run`."""
    analysis = StudyAnalysis(study, policy)
    job = preparation.prepare(analysis)
    job.refresh_from_db()
    return StudyAnalysis(study, policy), job


def r_problems(body: bytes, result, tmp_path: Path, split_plot: bool) -> dict[str, list[str]]:
    """MRMCaov and RJafroc on the ZIP's files print the page's random-readers aided -
    unaided, sign included, to 1e-8 (MRMCaov: its SE, df and p too, but for a split-plot
    study, whose own recipe is checked in tests/design_tests/test_roracle_zip.py)."""
    try:  # where the R-oracle helper lives after issue 32's move, and before it
        from tests.roracle import require, rscript
    except ImportError:
        from tests.analysis_tests.roc.r_oracle import require, rscript

    require("MRMCaov")
    require("RJafroc")
    archive = zipfile.ZipFile(io.BytesIO(body))
    folder = tmp_path / "mrmc"
    folder.mkdir()
    present = set(archive.namelist())
    for name in ("mrmcaov.csv", "rjafroc.xlsx"):
        if f"mrmc/{name}" in present:
            (folder / name).write_bytes(archive.read(f"mrmc/{name}"))
    table = result.table("mrmc_difference")
    if "difference" not in table.columns:  # not estimable yet: said in a note, nothing to run
        return {}
    page = table[table["analysis"].str.contains("random", case=False)].iloc[0]
    # The page's comparison, test − reference ("aided − unaided"; a second read's "final
    # answer (after the AI) − first answer (before the AI)"): the files name the test
    # reading by the first word of its label.
    first = str(page["comparison"]).split("−")[0].strip()
    rjafroc = (folder / "rjafroc.xlsx").exists()  # not written for a split-plot study
    out = rscript(
        "-e",
        f"d <- read.csv('{folder / 'mrmcaov.csv'}'); "
        "accuracy <- function(truth, rating) mean(rating); "
        "s <- summary(MRMCaov::mrmc(accuracy(truth, rating), treatment, reader, case, "
        "data = d))$test_diffs; "
        "cat(sprintf('MRMCaov|%s|%.12f|%.12f|%.12f|%.12f\\n', s$Comparison, s$Estimate, "
        "s$StdErr, s$df, s[['p-value']]))",
        *(
            [
                "-e",
                f"ds <- RJafroc::DfReadDataFile('{folder / 'rjafroc.xlsx'}', "
                "newExcelFileFormat = TRUE); "
                "x <- RJafroc::St(ds, FOM = 'AFROC1', method = 'OR')$RRRC$ciDiffTrt; "
                "cat(sprintf('RJafroc|%s|%.12f\\n', rownames(x), x$Estimate))",
            ]
            if rjafroc
            else []
        ),
    )
    problems: dict[str, list[str]] = {"r": [], "rjafroc": []}
    expected = float(page["difference"])
    for line in out.splitlines():
        package, label, *values = line.split("|")
        numbers = [float(v) for v in values]
        if package == "MRMCaov":
            sign = 1 if first.startswith(label.split(" - ")[0].strip()) else -1
            page_values = [sign * expected, page["se"], page["df"], page["p_value"]]
            if split_plot:
                # MRMCaov has no split-plot design: on the whole file it gives the estimate
                # but not the SE, df or p, as mrmc/README.txt says; the README's per-group
                # recipe gives those, checked to 1e-8 in tests/design_tests/test_roracle_zip.py.
                numbers, page_values = numbers[:1], page_values[:1]
            if any(abs(a - float(b)) > 1e-8 for a, b in zip(numbers, page_values, strict=True)):
                problems["r"].append(
                    f"MRMCaov prints {label} (estimate, SE, df, p) {numbers}; the page's "
                    f"aided - unaided: {page_values}"
                )
        elif package == "RJafroc":
            # RJafroc names the difference trt<first>-trt<second>.
            sign = 1 if first.startswith(label.removeprefix("trt").split("-trt")[0]) else -1
            if abs(numbers[0] - sign * expected) > 1e-8:
                problems["rjafroc"].append(
                    f"RJafroc prints {label} = {numbers[0]:.6f}; the page's aided - unaided "
                    f"is {expected:.6f}"
                )
    if rjafroc and not any(line.startswith("RJafroc|") for line in out.splitlines()):
        problems["r"].append(f"RJafroc printed no difference: {out[-500:]}")
    return problems


@pytest.mark.parametrize("case", PARAMS)
def test_simulated_study(case: Case, settings, tmp_path):
    settings.ANALYSIS_PREPARE_DOWNLOADS = case.downloads
    made = simulated(case, Path(settings.MEDIA_ROOT))
    policy = AnalysisSettings(
        **POLICIES[case.policy],
        fast_answer_ms=settings.FAST_ANSWER_MS,
        time_cap_ms=settings.MAX_CASE_TIME_MS,
    )
    analysis, job = analysed(made.study, policy)
    found: dict[str, list[str]] = {}

    def report(kind: str, problems: list[str]) -> None:
        if problems:
            found.setdefault(kind, []).extend(problems)

    failed_figure = "'yerr' must not contain negative values" in job.error
    if job.status != JobStatus.DONE:
        report("figure" if failed_figure else "job", [f"job {job.status}: {job.error}"])
    result = analysis.result
    rows = checks.Rows.of(made.study)
    usernames = (
        dict(zip(result.raters["rater"], result.raters["username"], strict=True))
        if (not result.raters.empty)
        else {}
    )
    accuracy = checks.count_problems(result, rows, usernames)
    report("counted-arm-readers", [p for p in accuracy if "have not read it" in p])
    report("counts", [p for p in accuracy if "have not read it" not in p])
    report(
        "flow-before" if result.responses.empty else "counts", checks.flow_problems(result, rows)
    )
    arm = checks.arm_problems(result, rows, _reader_names(made.study))
    report("arm-readers", [p for p in arm if "not read that arm" in p])
    report("counts", [p for p in arm if "not read that arm" not in p])
    intervals = checks.interval_problems(
        {**result.tables(), "kappa_pairs_answer": result.kappa_pairs.get("answer")}
    )
    report("panel-ci", [p for p in intervals if p.startswith("reader_panel")])
    rounding = [p for p in intervals if checks.by_rounding(p)]
    report("wilson-rounding", rounding)
    report("mcnemar-ci", [p for p in intervals if p.startswith("mcnemar")])
    report(
        "intervals",
        [
            p
            for p in intervals
            if p not in rounding and not p.startswith(("reader_panel", "mcnemar"))
        ],
    )
    if result.design_error:
        report("design", [result.design_error])
    figures = list(figure_builders(result))
    if job.status == JobStatus.DONE:
        report(
            "figures",
            [
                f"no SVG of {name}"
                for name in figures
                if analysis.lookup(f"figure:{name}:svg") is None
            ],
        )
    body = analysis.lookup("zip")
    if case.downloads and not result.accuracy.empty:
        if body is None:
            report("figure" if failed_figure else "zip", ["no ZIP was prepared"])
        else:
            if os.environ.get("SIMULATED_STUDY_KEEP"):  # a folder to keep the ZIPs in
                keep = Path(os.environ["SIMULATED_STUDY_KEEP"])
                keep.mkdir(parents=True, exist_ok=True)
                (keep / f"{case.id}.zip").write_bytes(body)
            report("zip", checks.zip_problems(body, result, figures))
            report("responses", checks.responses_problems(body, rows))
            if case.r and result.design:
                for kind, problems in r_problems(
                    body, result, tmp_path, split_plot=bool(made.study.reader_groups)
                ).items():
                    report(kind, problems)
    if os.environ.get("SIMULATED_STUDY_REPORT"):  # a JSON-lines file: what each case met
        with open(os.environ["SIMULATED_STUDY_REPORT"], "a") as out:
            out.write(json.dumps({"case": case.id, "found": found}) + "\n")
    if found:
        pytest.fail(
            "\n".join(f"{kind}: {problem}" for kind, ps in found.items() for problem in ps),
            pytrace=False,
        )


def _reader_names(study) -> dict[str, str]:
    """Display name -> username of every reader who answered, as the design tables name
    them (analysis.rater_names, the one naming rule)."""
    from analysis.rater_names import display_names, joined_readers, reader_key, study_labels
    from annotation.models import Answer

    readers = dict(
        Answer.objects.filter(item__study=study)
        .values_list("reader_id", "reader__username")
        .distinct()
    )
    by_key = {reader_key(pk): name for pk, name in readers.items()}
    return {
        r.name: by_key[r.rater_id]
        for r in display_names(set(readers.items()), (), study_labels(study), joined_readers(study))
    }


def test_policies_cover_every_pair_of_switch_values():
    for a, b in itertools.combinations(SWITCHES, 2):
        seen = {(p[a], p[b]) for p in POLICIES}
        assert seen == set(itertools.product(SWITCHES[a], SWITCHES[b])), (a, b)


def test_in_suite_selection_covers_designs_stops_and_switch_values():
    assert {c.design for c in IN_SUITE} == set(DESIGNS)
    assert {c.stop for c in IN_SUITE} == set(STOPS)
    for name, values in SWITCHES.items():
        assert {POLICIES[c.policy][name] for c in IN_SUITE} == set(values), name


def test_simulate_study_command_makes_readers_of_their_stated_accuracy(settings):
    """The command's study is made of what the services wrote (answers in the database) and
    is the same from the same seed; each reader's share right alone lies within the 99.9%
    binomial range of the accuracy the command states."""
    from io import StringIO

    from django.core.management import call_command
    from scipy.stats import binom

    from annotation.models import Answer

    out = StringIO()
    args = ["--design", "single", "--readers", "3", "--xrays", "20", "--missing", "0"]
    call_command("simulate_study", "cmd-a", *args, "--seed", "5", stdout=out)
    call_command("simulate_study", "cmd-b", *args, "--seed", "5", stdout=StringIO())
    text = out.getvalue()
    assert "Simulated study 'cmd-a'" in text and "Design: " in text

    def answers(slug):
        return sorted(
            (u.split("-r")[1], q.split("-x")[1], c)
            for u, q, c in Answer.objects.filter(item__study__slug=slug).values_list(
                "reader__username", "item__question__source_id", "choice"
            )
        )

    assert answers("cmd-a") == answers("cmd-b") and answers("cmd-a")
    for reader in range(1, 4):
        stated = float(text.split(f"cmd-a-r{reader}: accuracy ")[1].split()[0])
        rows = Answer.objects.filter(
            item__study__slug="cmd-a", reader__username=f"cmd-a-r{reader}"
        ).values_list("choice", "item__question__correct")
        right = sum(choice == key for choice, key in rows)
        low, high = binom.interval(0.999, len(rows), stated)
        assert low <= right <= high, (reader, right, len(rows), stated)


def test_simulate_study_command_refuses_in_words():
    from django.core.management import CommandError, call_command

    with pytest.raises(CommandError, match="split-plot groups need at least 3 readers"):
        call_command(
            "simulate_study", "bad", "--design", "split-plot", "--groups", "3", "--readers", "2"
        )
