"""Power and sample size (Hillis-Obuchowski-Berbaum 2011) against RJafroc's documented values
for the Van Dyke pilot, RJafroc itself on a pilot with a negative Var(T×R), and simulated
studies (a non-degenerate pilot's power is what studies reach; a negative pilot's is flagged)."""

import numpy as np
import pytest

from analysis.stats.design import design_results, power_table
from analysis.stats.or_accuracy import or_design
from analysis.stats.power import (
    Pilot,
    cases_needed,
    describe,
    power,
    sample_size_table,
    truncation_notes,
)
from analysis.stats.simulate import LatentModel, simulate_cube, simulate_frame

# RJafroc's SsPowerGivenJK example 4A: OR components of the Van Dyke data (Wilcoxon AUC, 5
# readers, 114 cases), and the powers its tests pin (test-SsSampleSizeRoc.R, effect size
# -0.043800322, the pilot's observed difference).
VANDYKE = Pilot(
    var_tr=0.00020040252,
    var=0.00080228827,
    cov1=0.00034661371,
    cov2=0.00034407483,
    cov3=0.00023902837,
    cases=114,
)
EFFECT = -0.043800322


@pytest.mark.parametrize(
    ("analysis", "cases", "expected"),
    [
        ("random", 165, 0.80541995),
        ("fixed-readers", 131, 0.80091813),
        ("fixed-cases", 53, 0.80496663),
    ],
)
def test_power_matches_rjafroc_documented_values(analysis, cases, expected):
    assert power(VANDYKE, EFFECT, 10, cases, analysis=analysis) == pytest.approx(expected, abs=1e-7)


def test_cases_needed_is_the_smallest_reaching_the_target():
    k = cases_needed(VANDYKE, EFFECT, 10, 0.8)
    assert power(VANDYKE, EFFECT, 10, k) >= 0.8 > power(VANDYKE, EFFECT, 10, k - 1)
    assert k <= 165  # RJafroc's 165 X-rays give 0.805


def test_too_few_readers_are_said_to_be_not_enough():
    table = sample_size_table(VANDYKE, 0.05, 0.8, readers=range(3, 7))
    first = table.iloc[0]
    assert first["x_rays"] is None or np.isnan(first["x_rays"])
    assert "not reachable" in first["note"]
    needed = table["x_rays"].iloc[1:].astype(int).tolist()
    assert needed == sorted(needed, reverse=True)  # more readers, fewer X-rays


def test_predicted_power_matches_simulated_studies():
    """Components averaged over 400 simulated 6 x 50 pilots predict the rejection rate of
    studies of 6 x 50 and of 10 x 100 X-rays (4 questions each) within 0.07."""
    rng = np.random.default_rng(11)
    model = LatentModel(effect=0.25)
    pilots = [or_design(*simulate_cube(rng, model, 6, 50, 4)[:2]) for _ in range(400)]
    names = ("var_tr", "var", "cov1", "cov2", "cov3")
    pilot = Pilot(
        *(float(np.mean([getattr(p.components, name) for p in pilots])) for name in names),
        cases=50,
    )
    assert truncation_notes(pilot) == ()  # non-degenerate: nothing set to 0
    effect = float(np.mean([p.random.estimate for p in pilots]))
    observed = np.mean([p.random.p_value < 0.05 for p in pilots])
    assert power(pilot, effect, 6, 50) == pytest.approx(observed, abs=0.07)
    larger = [or_design(*simulate_cube(rng, model, 10, 100, 4)[:2]) for _ in range(200)]
    observed = np.mean([p.random.p_value < 0.05 for p in larger])
    assert power(pilot, effect, 10, 100) == pytest.approx(observed, abs=0.07)


def test_pilot_from_a_study_frame():
    frame = simulate_frame(np.random.default_rng(3), LatentModel(), 4, 20, 3)
    results = design_results(frame)
    pilot = Pilot.from_components(results["result"].components, results["cube"].n_questions)
    assert pilot.cases == 20 and pilot.questions_per_case == 3
    assert 0 < power(pilot, 0.05, 6, 100) < 1


# A latent model in which readers differ in their aided - unaided difference (arm x reader sd
# 0.35), and its population accuracy difference (probit: Phi(mean / total sd) per arm).
INTERACTION = LatentModel(effect=0.3, arm_reader=0.35)


def population_effect(model: LatentModel) -> float:
    from scipy.stats import norm

    sd = np.sqrt(
        1
        + model.reader**2
        + model.arm_reader**2
        + model.xray**2
        + model.arm_xray**2
        + model.reader_xray**2
        + model.question**2
    )
    return float(norm.cdf((model.mu + model.effect) / sd) - norm.cdf(model.mu / sd))


def negative_pilot():
    """A seeded 3-reader x 30-X-ray pilot (3 questions each) of INTERACTION whose Var(T×R)
    estimate falls below 0, as it often does with few readers."""
    frame = simulate_frame(np.random.default_rng(3), INTERACTION, 3, 30, 3)
    return frame, design_results(frame)


def test_a_negative_pilot_component_is_stated_wherever_the_power_is_given():
    """The pilot's Var(T×R) is negative: the method sentence (page, ZIP README, `mrmc_power`
    header, methods) and every row's note (page, power.csv, API) say so, with the estimate,
    and that the random-readers power is not supported by the pilot."""
    _, results = negative_pilot()
    pilot = Pilot.from_components(results["result"].components, results["cube"].n_questions)
    assert pilot.var_tr < 0
    table = power_table(results, 0.05, 0.8)
    said = f"Var(T×R) estimate is negative ({pilot.var_tr:.3g})".replace("-", "−")
    assert said in table.method and "not supported by this pilot" in table.method
    assert table.data["note"].str.contains(said, regex=False).all()
    assert said in describe(pilot, 0.05, 0.8, 0.05)
    assert truncation_notes(VANDYKE) == ()  # a pilot with nothing set to 0 says nothing


def test_a_negative_pilots_power_is_the_most_it_allows_not_what_studies_reach():
    """Simulation from the model the negative pilot came from: the X-rays the formula says
    give 3 readers 0.80 power give far less (200 seeded studies), which is why the output
    says the power is not supported; the pilot's numbers are still RJafroc's (Var(T×R) = 0)."""
    _, results = negative_pilot()
    pilot = Pilot.from_components(results["result"].components, results["cube"].n_questions)
    effect = population_effect(INTERACTION)
    k = cases_needed(pilot, effect, 3)
    assert k is not None and power(pilot, effect, 3, k) >= 0.8
    clipped = Pilot(0.0, pilot.var, pilot.cov1, pilot.cov2, pilot.cov3, pilot.cases)
    assert power(pilot, effect, 3, k) == power(clipped, effect, 3, k)
    rng = np.random.default_rng(100)
    studies = [or_design(*simulate_cube(rng, INTERACTION, 3, k, 3)[:2]) for _ in range(200)]
    observed = np.mean([s.random.p_value < 0.05 for s in studies])
    assert observed < 0.5


@pytest.mark.roracle
def test_power_from_a_negative_pilot_is_rjafrocs_on_the_exported_file(tmp_path):
    """RJafroc on the pilot's exported rjafroc.xlsx (St's OR components with AFROC1 =
    proportion correct, jackknife by X-ray, then SsPowerGivenJK) gives our powers for every
    analysis, and our Var(T×R) (RJafroc's MS(T×R) − Var + Cov1 + max(Cov2 − Cov3, 0))."""
    from analysis.package_files import to_rjafroc
    from tests import roracle as r_oracle

    r_oracle.require("RJafroc")
    frame, results = negative_pilot()
    (tmp_path / "pilot.xlsx").write_bytes(to_rjafroc(frame))
    pilot = Pilot.from_components(results["result"].components, results["cube"].n_questions)
    designs = [(3, 142), (5, 60), (10, 200)]
    # SsPowerGivenJK takes only ROC datasets: St's OR components of the file are passed to it.
    script = (
        "suppressPackageStartupMessages(library(RJafroc)); "
        f"ds <- DfReadDataFile('{tmp_path / 'pilot.xlsx'}', newExcelFileFormat = TRUE); "
        "vc <- St(ds, FOM = 'AFROC1', method = 'OR')$ANOVA$VarCom; "
        "say <- function(x) cat(sprintf('%.15g', x), ''); say(vc['VarTR', 1]); "
        "p <- list(KStar = length(ds$ratings$NL[1, 1, , 1]), VarTR = vc['VarTR', 1], "
        "Cov1 = vc['Cov1', 1], Cov2 = vc['Cov2', 1], Cov3 = vc['Cov3', 1], Var = vc['Var', 1]); "
        + " ".join(
            "for (a in c('RRRC', 'FRRC', 'RRFC')) say(SsPowerGivenJK(NULL, p, FOM = 'AFROC1', "
            f"J = {j}, K = {k}, effectSize = 0.05, analysisOption = a)[[1]]); "
            for j, k in designs
        )
    )
    values = [float(v) for v in r_oracle.rscript("-e", script).split()]
    assert values[0] == pytest.approx(pilot.var_tr, abs=1e-12) and pilot.var_tr < 0
    ours = [
        power(pilot, 0.05, j, k, analysis=analysis)
        for j, k in designs
        for analysis in ("random", "fixed-readers", "fixed-cases")
    ]
    assert ours == pytest.approx(values[1:], abs=1e-9)
