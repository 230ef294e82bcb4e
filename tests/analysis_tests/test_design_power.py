"""Power and sample size (Hillis-Obuchowski-Berbaum 2011) against RJafroc's documented values
for the Van Dyke pilot, and against simulated studies."""

import numpy as np
import pytest

from analysis.stats.design import design_results
from analysis.stats.or_design import or_design
from analysis.stats.power import Pilot, cases_needed, power, sample_size_table
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
