"""Helpers for the tests that run the ZIP's own R commands (test_roracle_zip.py,
test_roracle_acceptance.py): studies read through the services, the ZIP and the page's
numbers, the README's R commands run by MRMCaov and RJafroc, and the comparison."""

from __future__ import annotations

import io
import json
import math
import random
import zipfile
from pathlib import Path

from django.urls import reverse

from annotation import selectors
from annotation.services import answer_submit, reader_finish
from annotation.sessions import reading_of
from readerstudy.models import ReaderStudy, Role
from readerstudy.services.studies import membership_add
from tests import roracle
from tests.factories import (
    CaseFactory,
    ImageFactory,
    QuestionFactory,
    ReaderStudyFactory,
    StudyQuestionFactory,
    UserFactory,
)

TOLERANCE = 1e-8
SUMMARY_R = roracle.ROC_RESULTS / "mrmcaov_summary.R"
# After the README's own commands: their objects as JSON (mrmcaov_summary.R's writer).
MRMCAOV_OUT = f"""
source("{SUMMARY_R}")
out <- list()
for (n in Filter(exists, c("random_readers", "fixed_readers", "fit")))
  out[[n]] <- summary_json(get(n))
if (exists("split_plot")) out$split_plot <- frame_json(split_plot)
write_reference(out, "mrmcaov.json")
"""
RJAFROC_OUT = f"""
source("{SUMMARY_R}")
tab <- function(x) frame_json(as.data.frame(x))
write_reference(list(
  means = tab(random_readers$FOMs$trtMeans), diffs = tab(random_readers$FOMs$trtMeanDiffs),
  rrrc = tab(random_readers$RRRC$ciDiffTrt), rrrc_tests = tab(random_readers$RRRC$FTests),
  varcom = tab(random_readers$ANOVA$VarCom), tranova = tab(random_readers$ANOVA$TRanova),
  frrc = tab(fixed_readers$FRRC$ciDiffTrt), frrc_tests = tab(fixed_readers$FRRC$FTests)
), "rjafroc.json")
"""


# Building and reading studies through the services ----------------------------------------


def xray_study(questions_per_xray: list[int]) -> ReaderStudy:
    """A study whose X-rays hold the given numbers of questions (keys cycling A-D)."""
    study = ReaderStudyFactory()
    position = 0
    for size in questions_per_xray:
        case = CaseFactory(dataset=study.dataset)
        ImageFactory(case=case, position=0)
        for _ in range(size):
            question = QuestionFactory(
                dataset=study.dataset, case=case, correct="ABCD"[position % 4]
            )
            StudyQuestionFactory(study=study, question=question, position=position)
            position += 1
    return study


def _wrong(letter: str) -> str:
    return "ABCD"[("ABCD".index(letter) + 1) % 4]


def read_session(study, reader, rng: random.Random, right: dict, skip: float = 0.0) -> None:
    """The reader's current session, as the reading page submits it: each question right with
    probability right[arm], left unanswered with probability `skip`; a second read submits
    the first answer, then the final one (right with probability right["final"])."""
    reading = reading_of(study, reader)
    second_read = study.aid_mode == "second-read"
    for number in range(1, len(selectors.ordered_item_ids(study, reader, reading)) + 1):
        item = selectors.item_at(study, reader, number, reading=reading)
        if rng.random() < skip:
            continue
        key = item.question.correct
        if second_read:
            first = key if rng.random() < right["first"] else _wrong(key)
            answer_submit(reader=reader, item=item, choice=first, stage="first")
            final = key if rng.random() < right["final"] else _wrong(key)
            answer_submit(reader=reader, item=item, choice=final)
        else:
            choice = key if rng.random() < right[reading.arm] else _wrong(key)
            answer_submit(reader=reader, item=item, choice=choice)
    reader_finish(reader=reader, study=study)


def read_study(study, readers, seed: int, skip: float = 0.0, sessions: int = 2) -> None:
    """Every reader through every session, each with their own skill (aided better)."""
    rng = random.Random(seed)
    for number, reader in enumerate(readers):
        skill = 0.55 + 0.05 * number
        right = {"unaided": skill, "aided": skill + 0.15, "first": skill, "final": skill + 0.1}
        for _ in range(sessions):
            read_session(study, reader, rng, right, skip)


def with_pi(study):
    pi = UserFactory(username=f"pi-{study.slug}")
    membership_add(study=study, user=pi, role=Role.PI)
    return pi


# The ZIP, its README's R commands, and the page's numbers -----------------------------------


def download(client, study, pi, **policy) -> tuple[zipfile.ZipFile, dict]:
    """The analysis ZIP and the page's design tables (the API the page is drawn from)."""
    client.force_login(pi)
    archive = client.get(reverse("analysis-zip", args=[study.slug]), policy)
    assert archive.status_code == 200
    api = client.get(reverse("api-analysis", args=[study.slug]), policy).json()
    return zipfile.ZipFile(io.BytesIO(archive.content)), api["design"]


def r_commands(readme: str, name: str) -> list[str]:
    """The R commands README.txt gives for file `name`: the lines indented by four spaces in
    the paragraph that starts with `name:`."""
    lines = readme.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"{name}: "))
    commands = []
    for line in lines[start + 1 :]:
        if line and not line.startswith(" "):
            break
        if line.startswith("    "):
            commands.append(line[4:])
    return commands


def run_readme(archive: zipfile.ZipFile, folder: Path, then: str = "") -> dict:
    """Every package file's README commands run in a folder holding the ZIP's mrmc/ files
    (followed by the test's own R lines `then`); what each left, by file name."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in archive.namelist():
        if name.startswith("mrmc/"):
            (folder / name.removeprefix("mrmc/")).write_bytes(archive.read(name))
    readme = archive.read("mrmc/README.txt").decode()
    out = {}
    for name, extract, result in (
        ("mrmcaov.csv", MRMCAOV_OUT, "mrmcaov.json"),
        ("rjafroc.xlsx", RJAFROC_OUT, "rjafroc.json"),
    ):
        if name not in archive.namelist() and f"mrmc/{name}" not in archive.namelist():
            continue
        commands = r_commands(readme, name)
        assert commands, f"README.txt gives no R commands for {name}"
        roracle.run_r("\n".join(commands) + "\n" + then + extract, folder)
        out[name] = json.loads((folder / result).read_text())
    return out


def one(value):
    """A one-row R column (to_json writes a vector of one as its value)."""
    return value[0] if isinstance(value, list) else value


def row_of(frame: dict, name: str, column: str):
    return frame[column][frame["row"].index(name)]


def far(pairs: list[tuple[str, float, float]]) -> list[tuple[str, float, float]]:
    """The pairs (what, page, package) further apart than TOLERANCE."""
    return [(what, a, b) for what, a, b in pairs if not abs(a - b) <= TOLERANCE]


def page_numbers(design: dict) -> tuple[dict, dict, dict]:
    tables = design["tables"]
    random_row, fixed_row = tables["mrmc_difference"]["rows"]
    components = {
        row["component"]: row["estimate"] for row in tables["mrmc_variance_components"]["rows"]
    }
    return random_row, fixed_row, components


def mrmcaov_pairs(design: dict, ref: dict, test: str, reference: str) -> list:
    random_row, fixed_row, c = page_numbers(design)
    rr, fr = ref["random_readers"], ref["fixed_readers"]
    diffs, equality, means = rr["test_diffs"], rr["test_equality"], rr["test_means"]
    components = rr["vcov_comps"]
    assert one(diffs["Comparison"]) == f"{test} - {reference}"
    assert one(fr["test_diffs"]["Comparison"]) == f"{test} - {reference}"
    component = {name: row_of(components, name, "Estimate") for name in components["row"]}
    return [
        ("test mean", random_row["test_mean"], row_of(means, test, "Estimate")),
        ("reference mean", random_row["reference_mean"], row_of(means, reference, "Estimate")),
        ("difference", random_row["difference"], one(diffs["Estimate"])),
        ("SE", random_row["se"], one(diffs["StdErr"])),
        ("df", random_row["df"], one(diffs["df"])),
        ("CI low", random_row["ci_low"], one(diffs["CI.Lower"])),
        ("CI high", random_row["ci_high"], one(diffs["CI.Upper"])),
        ("t", random_row["statistic"], one(diffs["t"])),
        ("p", random_row["p_value"], one(diffs["p-value"])),
        ("F", random_row["F"], one(equality["F"])),
        ("df2", random_row["df"], one(equality["df2"])),
        ("fixed difference", fixed_row["difference"], one(fr["test_diffs"]["Estimate"])),
        ("fixed SE", fixed_row["se"], one(fr["test_diffs"]["StdErr"])),
        ("fixed CI low", fixed_row["ci_low"], one(fr["test_diffs"]["CI.Lower"])),
        ("fixed CI high", fixed_row["ci_high"], one(fr["test_diffs"]["CI.Upper"])),
        ("fixed z", fixed_row["statistic"], one(fr["test_diffs"]["z"])),
        ("fixed p", fixed_row["p_value"], one(fr["test_diffs"]["p-value"])),
        ("fixed X2", fixed_row["X2"], one(fr["test_equality"]["X2"])),
        ("Var(R)", c["Var(R)"], component["reader"]),
        ("Var(T×R)", c["Var(T×R)"], component["treatment:reader"]),
        ("Var (error)", c["Var (error)"], component["Error"]),
        ("Cov1", c["Cov1"], component["Cov1"]),
        ("Cov2", c["Cov2"], component["Cov2"]),
        ("Cov3", c["Cov3"], component["Cov3"]),
        ("MS(T)", c["MS(T)"], one(equality["MS(T)"])),
        ("MS(T×R)", c["MS(T×R)"], one(equality["MS(T:R)"])),
        # MRMCaov prints Var(R) = (MS(R) - MS(T:R)) / 2 - Cov1 + Cov3, not MS(R) itself
        (
            "MS(R)",
            c["MS(R)"],
            2 * (component["reader"] + component["Cov1"] - component["Cov3"])
            + one(equality["MS(T:R)"]),
        ),
    ]


def rjafroc_pairs(design: dict, ref: dict, test: str, reference: str) -> list:
    random_row, fixed_row, c = page_numbers(design)
    label = f"trt{test}-trt{reference}"
    assert ref["diffs"]["row"] == label and ref["rrrc"]["row"] == label
    rrrc, frrc, tests = ref["rrrc"], ref["frrc"], ref["rrrc_tests"]
    return [
        ("test mean", random_row["test_mean"], row_of(ref["means"], f"trt{test}", "Estimate")),
        (
            "reference mean",
            random_row["reference_mean"],
            row_of(ref["means"], f"trt{reference}", "Estimate"),
        ),
        ("difference", random_row["difference"], rrrc["Estimate"]),
        ("SE", random_row["se"], rrrc["StdErr"]),
        ("df", random_row["df"], rrrc["DF"]),
        ("CI low", random_row["ci_low"], rrrc["CILower"]),
        ("CI high", random_row["ci_high"], rrrc["CIUpper"]),
        ("t", random_row["statistic"], rrrc["t"]),
        ("p", random_row["p_value"], rrrc["PrGTt"]),
        ("F", random_row["F"], row_of(tests, "Treatment", "FStat")),
        ("fixed difference", fixed_row["difference"], frrc["Estimate"]),
        ("fixed SE", fixed_row["se"], frrc["StdErr"]),
        ("fixed CI low", fixed_row["ci_low"], frrc["CILower"]),
        ("fixed CI high", fixed_row["ci_high"], frrc["CIUpper"]),
        ("fixed z", fixed_row["statistic"], frrc["z"]),
        ("fixed p", fixed_row["p_value"], frrc["PrGTz"]),
        ("fixed X2", fixed_row["X2"], row_of(ref["frrc_tests"], "Treatment", "Chisq")),
        ("Var(R)", c["Var(R)"], row_of(ref["varcom"], "VarR", "Estimates")),
        ("Var(T×R)", c["Var(T×R)"], row_of(ref["varcom"], "VarTR", "Estimates")),
        ("Var (error)", c["Var (error)"], row_of(ref["varcom"], "Var", "Estimates")),
        ("Cov1", c["Cov1"], row_of(ref["varcom"], "Cov1", "Estimates")),
        ("Cov2", c["Cov2"], row_of(ref["varcom"], "Cov2", "Estimates")),
        ("Cov3", c["Cov3"], row_of(ref["varcom"], "Cov3", "Estimates")),
        ("MS(T)", c["MS(T)"], row_of(ref["tranova"], "T", "MS")),
        ("MS(R)", c["MS(R)"], row_of(ref["tranova"], "R", "MS")),
        ("MS(T×R)", c["MS(T×R)"], row_of(ref["tranova"], "TR", "MS")),
    ]


def check_packages(archive, design, folder, test="aided", reference="unaided") -> dict:
    """Both packages on the ZIP's files print the page's numbers, the sign included."""
    roracle.require("MRMCaov", "RJafroc")
    out = run_readme(archive, folder)
    (folder / "design.json").write_text(json.dumps(design))
    bad = far(mrmcaov_pairs(design, out["mrmcaov.csv"], test, reference))
    assert not bad, "MRMCaov differs from the page: " + "; ".join(map(str, bad))
    if "rjafroc.xlsx" in out:
        pairs = rjafroc_pairs(design, out["rjafroc.xlsx"], test, reference)
        _, _, c = page_numbers(design)
        if c["Cov2"] < c["Cov3"]:  # RJafroc's FRRC, VarTR, VarR take max(Cov2 - Cov3, 0)
            readme = archive.read("mrmc/README.txt").decode()
            assert "Here Cov2 < Cov3: RJafroc replaces Cov2 - Cov3 by 0" in readme
            pairs = [p for p in pairs if not p[0].startswith(("fixed ", "Var(R)", "Var(T×R)"))]
            readers = design["tables"]["mrmc_difference"]["rows"][1]["readers"]
            fixed_se = math.sqrt(2 / readers * (c["Var (error)"] - c["Cov1"]))
            var_tr = c["MS(T×R)"] - c["Var (error)"] + c["Cov1"]
            ref = out["rjafroc.xlsx"]
            pairs += [
                ("RJafroc's fixed SE", fixed_se, ref["frrc"]["StdErr"]),
                ("RJafroc's VarTR", var_tr, row_of(ref["varcom"], "VarTR", "Estimates")),
            ]
        bad = far(pairs)
        assert not bad, "RJafroc differs from the page: " + "; ".join(map(str, bad))
    return out
