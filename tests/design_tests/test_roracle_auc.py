"""AUC MRMC through the platform, held to MRMCaov: MRMCaov's VanDyke data (114 binary cases,
5 readers, 2 modalities, 1-5 ratings) made into a crossover study with a 1-5 confidence scale,
its ratings submitted as the readers' answers (an answer and a confidence) through the
services. The page's OR/Hillis on AUC gives F = 4.456, df2 = 15.26, p = 0.0517 and every other
number MRMCaov prints, to 1e-8: against MRMCaov's stored summaries everywhere, and where R is
present against MRMCaov and RJafroc run on the ZIP's own mrmc/ files by the README's own
commands."""

from __future__ import annotations

import io
import json
import zipfile

import pandas as pd
import pytest
from django.urls import reverse

from analysis.cache import StudyAnalysis
from analysis.pipeline import AnalysisSettings
from annotation import selectors
from annotation.services import answer_submit, reader_finish
from annotation.sessions import reading_of
from readerstudy.design.services import study_design_set
from readerstudy.vocabulary import ConfidenceScale
from tests import roracle
from tests.design_tests.conftest import add_model, add_readers, crossover
from tests.design_tests.roracle_zip import r_commands, with_pi
from tests.factories import (
    CaseFactory,
    ImageFactory,
    QuestionFactory,
    ReaderStudyFactory,
    StudyQuestionFactory,
)
from tests.stats_tests.mrmcaov_reference import compare

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.roracle,
    pytest.mark.usefixtures("figures_unrendered"),
]
VANDYKE = pd.read_csv(roracle.ROC_RESULTS / "vandyke.csv")
REFERENCE = json.loads((roracle.ROC_RESULTS / "mrmcaov_vandyke.json").read_text())["factorial"]
# VanDyke's treatment 1 is read in the aided arm: the page's aided − unaided is MRMCaov's 1 − 2.
TREATMENT = {"aided": 1, "unaided": 2}
ARMS = {"1": "aided", "2": "unaided"}
READERS = {str(j): f"Reader {j}" for j in range(1, 6)}


def answer_of(rating: int) -> tuple[str, int]:
    """A 1-5 rating as an answer and a confidence on the 1-5 scale, in the rating's order
    under the scale's rule: 1-2 'absent' (B) sure and less sure, 3-5 'present' (A)."""
    if rating >= 3:
        return "A", rating - 2
    return "B", 6 - rating


@pytest.fixture
def vandyke_study(db):
    study = ReaderStudyFactory()
    truth = VANDYKE.drop_duplicates("case").set_index("case")["truth"]
    for position, (case_number, present) in enumerate(truth.items()):
        case = CaseFactory(dataset=study.dataset)
        ImageFactory(case=case, position=0)
        question = QuestionFactory(
            dataset=study.dataset,
            case=case,
            source_id=f"vandyke-{case_number:03d}",
            correct="A" if present else "B",
            present_option="A",
        )
        StudyQuestionFactory(study=study, question=question, position=position)
    add_model(study)
    readers = add_readers(study, 5, prefix="vandyke")
    study_design_set(study=study, design=crossover(confidence_scale=ConfidenceScale.FIVE))
    rating = VANDYKE.set_index(["reader", "treatment", "case"])["rating"]
    for number, reader in enumerate(readers, start=1):
        for _ in range(2):
            reading = reading_of(study, reader)
            treatment = TREATMENT[reading.arm]
            ids = selectors.ordered_item_ids(study, reader, reading)
            for position in range(1, len(ids) + 1):
                item = selectors.item_at(study, reader, position, reading=reading)
                case_number = int(item.question.source_id.removeprefix("vandyke-"))
                choice, confidence = answer_of(int(rating[(number, treatment, case_number)]))
                answer_submit(reader=reader, item=item, choice=choice, confidence=confidence)
            reader_finish(reader=reader, study=study)
    return study


def r_present() -> bool:
    try:
        roracle.require("MRMCaov", "RJafroc")
    except pytest.skip.Exception:
        return False
    return True


def test_vandyke_through_the_services_gives_mrmcaovs_every_number(client, vandyke_study, tmp_path):
    """The page's result against MRMCaov's stored summaries; where R is present, also against
    MRMCaov and RJafroc run by the ZIP's README commands on its own mrmc/ files."""
    result = StudyAnalysis(vandyke_study, AnalysisSettings()).result
    confidence = result.confidence
    jackknife, delong = confidence["mrmc"].result, confidence["compared"]["delong"].result
    names = {"modalities": ARMS, "readers": READERS}
    for kind in ("random_readers", "fixed_readers"):
        assert compare(jackknife, REFERENCE[f"jackknife_{kind}"], **names) <= 1e-8
        assert compare(delong, REFERENCE[f"DeLong_{kind}"], **names) <= 1e-8
    assert compare(jackknife, REFERENCE["fixed_cases"], **names) <= 1e-8
    rows = result.table("auc_difference")
    random = rows[(rows["covariance"] == "jackknife") & (rows["analysis"] == jackknife.random.name)]
    row = random.iloc[0]
    assert row["comparison"] == "aided − unaided"
    assert (round(row["test_value"], 3), round(row["test_df2"], 2), round(row["p_value"], 4)) == (
        4.456,
        15.26,
        0.0517,
    )
    if r_present():
        packages_print_the_pages_numbers(client, vandyke_study, jackknife, delong, tmp_path)


def packages_print_the_pages_numbers(client, study, jackknife, delong, folder) -> None:
    """MRMCaov's every printed number (jackknife, fixed readers, DeLong) and RJafroc's RRRC
    difference and F test, by the README's own commands on the ZIP's files, are the page's."""
    client.force_login(with_pi(study))
    archive = zipfile.ZipFile(
        io.BytesIO(client.get(reverse("analysis-zip", args=[study.slug])).content)
    )
    for name in archive.namelist():
        if name.startswith("mrmc/"):
            (folder / name.removeprefix("mrmc/")).write_bytes(archive.read(name))
    readme = archive.read("mrmc/README.txt").decode()
    summary = roracle.ROC_RESULTS / "mrmcaov_summary.R"
    program = (
        "\n".join(r_commands(readme, "mrmcaov_auc.csv"))
        + f"""
source("{summary}")
write_reference(list(random_readers = summary_json(random_readers),
  fixed_readers = summary_json(fixed_readers), delong = summary_json(delong)), "auc.json")
"""
    )
    roracle.run_r(program, folder)
    theirs = json.loads((folder / "auc.json").read_text())
    codes = pd.read_csv(folder / "id_map_auc.csv")
    codes = codes[codes["kind"] == "reader"]
    readers = dict(zip(codes["code"], codes["id"], strict=True))
    assert compare(jackknife, theirs["random_readers"], readers=readers) <= 1e-8
    assert compare(jackknife, theirs["fixed_readers"], readers=readers) <= 1e-8
    assert compare(delong, theirs["delong"], readers=readers) <= 1e-8
    program = (
        "\n".join(r_commands(readme, "rjafroc_auc.xlsx"))
        + """
tests <- random_readers$RRRC$FTests
cat(sprintf("%.17g\\n", c(random_readers$RRRC$ciDiffTrt$Estimate, tests["Treatment", "FStat"],
  tests["Error", "DF"], tests["Treatment", "p"])))
"""
    )
    printed = roracle.run_r(program, folder).split()[-4:]  # after print(random_readers)
    estimate, f, df2, p = (float(x) for x in printed)
    random = jackknife.random
    assert abs(estimate - random.differences[0].estimate) <= 1e-8
    assert abs(f - random.global_test.statistic) <= 1e-8
    assert abs(df2 - random.global_test.df2) <= 1e-8
    assert abs(p - random.global_test.p_value) <= 1e-8
