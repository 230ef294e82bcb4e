"""Design-aware MRMC: aided vs unaided by X-ray, against an independent loop oracle, MRMCaov's
Van Dyke result through the design path, a type I error simulation, and the refusals."""

import json
import math
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from analysis.stats.design import (
    DesignPolicy,
    as_json,
    design_results,
    power_table,
)
from analysis.stats.frame import AnalysisInputError
from analysis.stats.or_accuracy import or_design
from analysis.stats.simulate import LatentModel, simulate_cube, simulate_frame

ORACLES = Path(__file__).resolve().parents[1] / "resources" / "oracles"


def oracle_or_hillis(rows, alpha=0.05):
    """Two-modality OR/Hillis by X-ray, written from the formulas with plain loops.

    rows: (reader, modality, xray, correct 0/1), one per question read. A reader's FOM in a
    modality is correct / questions; the jackknife FOM leaves out one X-ray (all its
    questions); Cov(i,j) = (c-1)/c sum_k (th_i(k) - mean_i)(th_j(k) - mean_j). Var, Cov1-3 are
    averages over the matching pairs; F = MS(T) / (MS(T*R) + r max(Cov2 - Cov3, 0)), Hillis
    df2 = den^2 / (MS(T*R)^2 / ((t-1)(r-1))); fixed readers: Var - Cov1 + (r-1)(Cov2 - Cov3).
    """
    readers = sorted({r[0] for r in rows})
    modalities = ["unaided", "aided"]
    xrays = sorted({r[2] for r in rows})
    right = defaultdict(float)
    count = defaultdict(float)
    for reader, modality, xray, correct in rows:
        right[reader, modality, xray] += correct
        count[reader, modality, xray] += 1
    cells = [(m, r) for m in modalities for r in readers]
    theta = {}
    for m, r in cells:
        theta[m, r] = sum(right[r, m, x] for x in xrays) / sum(count[r, m, x] for x in xrays)
    jack = {}
    for m, r in cells:
        for left_out in xrays:
            s = sum(right[r, m, x] for x in xrays if x != left_out)
            n = sum(count[r, m, x] for x in xrays if x != left_out)
            jack[m, r, left_out] = s / n
    c = len(xrays)
    mean_jack = {cell: sum(jack[(*cell, x)] for x in xrays) / c for cell in cells}
    sums = {"var": [], "cov1": [], "cov2": [], "cov3": []}
    for a in cells:
        for b in cells:
            value = (
                (c - 1)
                / c
                * sum(
                    (jack[(*a, x)] - mean_jack[a]) * (jack[(*b, x)] - mean_jack[b]) for x in xrays
                )
            )
            same_m, same_r = a[0] == b[0], a[1] == b[1]
            key = {
                (True, True): "var",
                (False, True): "cov1",
                (True, False): "cov2",
                (False, False): "cov3",
            }[same_m, same_r]
            sums[key].append(value)
    var, cov1, cov2, cov3 = (sum(v) / len(v) for v in sums.values())
    t, r = 2, len(readers)
    m_mean = {m: sum(theta[m, x] for x in readers) / r for m in modalities}
    r_mean = {x: sum(theta[m, x] for m in modalities) / t for x in readers}
    grand = sum(theta.values()) / (t * r)
    ms_t = r * sum((m_mean[m] - grand) ** 2 for m in modalities) / (t - 1)
    ms_r = t * sum((r_mean[x] - grand) ** 2 for x in readers) / (r - 1)
    ms_tr = sum(
        (theta[m, x] - m_mean[m] - r_mean[x] + grand) ** 2 for m in modalities for x in readers
    ) / ((t - 1) * (r - 1))
    den = ms_tr + r * max(cov2 - cov3, 0)
    df2 = den**2 / (ms_tr**2 / ((t - 1) * (r - 1)))
    diff = m_mean["aided"] - m_mean["unaided"]
    se = math.sqrt(2 * den / r)
    half = sps.t.ppf(1 - alpha / 2, df2) * se
    fixed_den = var - cov1 + (r - 1) * (cov2 - cov3)
    fixed_se = math.sqrt(2 * fixed_den / r)
    return {
        "F": ms_t / den,
        "df2": df2,
        "p": sps.f.sf(ms_t / den, 1, df2),
        "difference": diff,
        "ci": (diff - half, diff + half),
        "var": var,
        "cov1": cov1,
        "cov2": cov2,
        "cov3": cov3,
        "ms_r": ms_r,
        "ms_tr": ms_tr,
        "var_tr": ms_tr - var + cov1 + cov2 - cov3,
        "fixed_se": fixed_se,
        "fixed_p": 2 * sps.norm.sf(abs(diff / fixed_se)),
    }


def uneven_two_arm_frame(seed=3):
    """A crossover frame whose X-rays have 2-5 questions (so per-X-ray weighting matters)."""
    frame = simulate_frame(np.random.default_rng(seed), LatentModel(effect=0.15), 5, 24, 5)
    sizes = np.random.default_rng(seed + 1).integers(2, 6, size=24)
    keep = frame["question_id"].map(lambda q: int(q.split("-q")[1]) <= sizes[int(q[1:4]) - 1])
    return frame[keep].reset_index(drop=True)


@pytest.mark.parametrize("missing", ["wrong", "exclude"])
def test_two_arm_matches_loop_oracle_to_1e9(missing):
    """Under "exclude" unanswered questions leave their reader's denominator, so readers'
    accuracies rest on different numbers of questions per X-ray."""
    frame = uneven_two_arm_frame()
    frame.loc[frame.index[::13], "answer"] = None
    kept = frame if missing == "wrong" else frame[frame["answer"].notna()]
    rows = [
        (r.reader, r.arm, r.case_id, float(r.answer == r.correct_answer)) for r in kept.itertuples()
    ]
    expected = oracle_or_hillis(rows)
    results = design_results(frame, DesignPolicy(missing=missing))
    got = results["result"]
    assert got.random.f == pytest.approx(expected["F"], abs=1e-9)
    assert got.random.df2 == pytest.approx(expected["df2"], abs=1e-9)
    assert got.random.p_value == pytest.approx(expected["p"], abs=1e-9)
    assert got.random.estimate == pytest.approx(expected["difference"], abs=1e-12)
    assert (got.random.ci_low, got.random.ci_high) == pytest.approx(expected["ci"], abs=1e-9)
    c = got.components
    for name in ("var", "cov1", "cov2", "cov3", "ms_r", "ms_tr", "var_tr"):
        assert getattr(c, name) == pytest.approx(expected[name], abs=1e-12), name
    assert got.fixed.se == pytest.approx(expected["fixed_se"], abs=1e-9)
    assert got.fixed.p_value == pytest.approx(expected["fixed_p"], abs=1e-9)
    table = results["tables"]["mrmc_difference"].data
    assert table.loc[0, "difference"] == pytest.approx(expected["difference"], abs=1e-12)
    assert results["comparison"] == "aided − unaided"


def vandyke_frame():
    """Van Dyke's diseased cases as a two-arm frame: rating >= 3 is a correct answer."""
    data = pd.read_csv(ORACLES / "vandyke.csv")
    data = data[data["truth"] == 1]
    return pd.DataFrame(
        {
            "reader": data["reader"].astype(str),
            "arm": data["treatment"].map({1: "unaided", 2: "aided"}),
            "case_id": data["case"].astype(str),
            "question_id": data["case"].astype(str),
            "task": "all",
            "answer": np.where(data["rating"] >= 3, "A", "B"),
            "correct_answer": "A",
        }
    )


def test_the_fixed_readers_row_names_its_chi_square_x2_not_f():
    """The random-readers test is F(1, df2) and the fixed-readers one chi-square (1 df), as
    MRMCaov prints them (F; X2): each in its column, the other empty. With one numerator df,
    F = t^2 and X2 = z^2; the loop oracle gives both."""
    frame = uneven_two_arm_frame()
    expected = oracle_or_hillis(
        [
            (r.reader, r.arm, r.case_id, float(r.answer == r.correct_answer))
            for r in frame.itertuples()
        ]
    )
    random_row, fixed_row = design_results(frame)["tables"]["mrmc_difference"].data.to_dict(
        "records"
    )
    assert random_row["F"] == pytest.approx(expected["F"], abs=1e-9)
    assert random_row["F"] == pytest.approx(random_row["statistic"] ** 2, abs=1e-9)
    assert math.isnan(random_row["X2"]) and math.isnan(fixed_row["F"])
    z = expected["difference"] / expected["fixed_se"]
    assert fixed_row["X2"] == pytest.approx(z**2, abs=1e-9)


def test_vandyke_holds_through_the_design_path():
    results = design_results(vandyke_frame())
    random = results["result"].random
    assert random.f == pytest.approx(6.689493, abs=1e-6)
    assert random.df2 == pytest.approx(15.71732, abs=1e-5)
    assert random.p_value == pytest.approx(0.02008822, abs=1e-8)
    row = results["tables"]["mrmc_difference"].data.iloc[0]
    assert row["p_value"] == pytest.approx(0.02008822, abs=1e-8)


def test_type_one_error_six_readers_fifty_xrays_four_questions():
    """Under no arm effect the random-readers test rejects at most 6% of the time (3000
    fixed-seed studies of 6 readers x 50 X-rays x 4 questions, binomial SE 0.004; 20,000 in
    `benchmarks/design_type1_bench.py`, run by `make bench`)."""
    rng = np.random.default_rng(20261125)
    rejections = 0
    n = 3000
    for _ in range(n):
        correct, counted, _, _ = simulate_cube(rng, LatentModel(), 6, 50, 4)
        rejections += or_design(correct, counted).random.p_value < 0.05
    assert rejections / n <= 0.06
    assert rejections / n >= 0.04  # a test that never rejects would pass the bound too


def test_split_plot_type_one_error():
    rng = np.random.default_rng(7)
    n, rejections = 1000, 0
    for _ in range(n):
        correct, counted, rg, cg = simulate_cube(rng, LatentModel(), 8, 60, 4, groups=2)
        result = or_design(correct, counted, reader_groups=rg, case_groups=cg)
        rejections += result.random.p_value < 0.05
    assert rejections / n <= 0.06


def test_split_plot_with_one_group_is_the_factorial_analysis():
    correct, counted, _, _ = simulate_cube(np.random.default_rng(2), LatentModel(), 5, 30, 3)
    plain = or_design(correct, counted)
    grouped = or_design(
        correct, counted, reader_groups=np.zeros(5, int), case_groups=np.zeros(30, int)
    )
    assert grouped.random.f == pytest.approx(plain.random.f, abs=1e-12)
    assert grouped.random.df2 == pytest.approx(plain.random.df2, abs=1e-12)


def split_plot_frame():
    frame = simulate_frame(np.random.default_rng(5), LatentModel(), 4, 12, 2)
    reader_group = {"r1": "g1", "r2": "g1", "r3": "g2", "r4": "g2"}
    xray = frame["case_id"].str[1:].astype(int)
    case_group = np.where(xray <= 2, "anchor", np.where(xray % 2 == 0, "g1", "g2"))
    frame = frame.assign(reader_group=frame["reader"].map(reader_group), case_group=case_group)
    own = (frame["case_group"] == "anchor") | (frame["case_group"] == frame["reader_group"])
    return frame[own].reset_index(drop=True)


def test_split_plot_frame_leaves_anchors_out_of_the_comparison():
    frame = split_plot_frame()
    results = design_results(frame)
    cube = results["cube"]
    assert cube.split_plot and len(cube.case_ids) == 10  # 12 X-rays minus 2 anchors
    assert "split-plot in 2 groups" in results["design"] and "2 anchor" in results["design"]
    assert "split-plot" in results["tables"]["mrmc_difference"].method


def test_second_read_compares_first_with_final_answers():
    frame = simulate_frame(np.random.default_rng(9), LatentModel(), 4, 20, 3, second_read=True)
    results = design_results(frame)
    assert results["comparison"] == "final answer (after the AI) − first answer (before the AI)"
    assert results["design"].startswith("Second read")
    first = (frame["first_answer"] == frame["correct_answer"]).mean()
    final = (frame["answer"] == frame["correct_answer"]).mean()
    assert results["result"].random.estimate == pytest.approx(final - first, abs=1e-12)
    arms = set(results["tables"]["arm_accuracy"].data["arm"])
    assert arms == {"aided", "aided (first answer)"}


def _signed(value: float) -> str:
    return f"{value:.3f}".replace("-", "−")


def test_non_inferiority_conclusion_in_words():
    """The conclusion states the difference with its CI and level first, then only what the CI
    shows against the margin and 0 (issue 23 walk-through: it gave the lower bound only)."""
    frame = simulate_frame(np.random.default_rng(4), LatentModel(effect=0.05), 6, 40, 4)
    results = design_results(frame, DesignPolicy(ni_margin=0.05))
    row = results["tables"]["non_inferiority"].data.iloc[0]
    random = results["result"].random
    low, shown = random.ci_low, _signed(random.ci_low)
    difference = (
        f"aided − unaided = {_signed(random.estimate)} "
        f"(95% CI {shown} to {_signed(random.ci_high)})"
    )
    assert row["conclusion"].startswith(difference + ": ")
    if low > 0:
        assert row["conclusion"] == (
            f"{difference}: aided is superior to unaided (lower bound {shown} > 0), and so "
            "non-inferior at margin 0.05"
        )
    elif low > -0.05:
        assert row["conclusion"] == (
            f"{difference}: aided is non-inferior to unaided at margin 0.05 (lower bound "
            f"{shown} > −0.05); superiority is not shown (lower bound ≤ 0)"
        )
    else:
        assert "is not shown" in row["conclusion"]
    assert row["hypothesis"].startswith("H0: aided − unaided ≤ −0.05")
    strict = design_results(frame, DesignPolicy(ni_margin=0.0001)).get("tables")
    strict_row = strict["non_inferiority"].data.iloc[0]
    assert strict_row["non_inferior"] == (low > -0.0001)


@pytest.mark.parametrize(
    ("low", "high", "says"),
    [
        (0.01, 0.09, "aided is superior to unaided (lower bound 0.010 > 0), and so non-infer"),
        (-0.02, 0.06, "aided is non-inferior to unaided at margin 0.05 (lower bound −0.020"),
        (-0.08, 0.0, "non-inferiority of aided to unaided at margin 0.05 is not shown (lower"),
    ],
)
def test_each_conclusion_says_the_difference_its_ci_and_only_what_the_ci_shows(low, high, says):
    from analysis.stats.design import non_inferiority
    from analysis.stats.or_accuracy import Comparison

    mid = (low + high) / 2
    comparison = Comparison(
        "random readers, random X-rays", mid, 0.02, 10.0, 0, 0.5, low, high, 0, 1, 10, 0.05
    )
    conclusion = non_inferiority(comparison, 0.05, "aided", "unaided")["conclusion"]
    assert conclusion.startswith(
        f"aided − unaided = {_signed(mid)} (95% CI {_signed(low)} to {_signed(high)}): {says}"
    )
    none = Comparison(
        "fixed readers, random X-rays",
        0.02,
        float("nan"),
        float("inf"),
        0,
        float("nan"),
        float("nan"),
        float("nan"),
        0,
        1,
        0,
        0.05,
    )
    assert non_inferiority(none, 0.05, "aided", "unaided")["conclusion"] == (
        "aided − unaided = 0.020, no CI (the difference has no variance estimate): "
        "non-inferiority and superiority are not estimable"
    )


@pytest.mark.parametrize(
    ("column", "value"),
    [("answer", "E"), ("answer", "b"), ("ai_answer", "2"), ("first_answer", "")],
)
def test_unmapped_letter_refuses_the_analysis(column, value):
    frame = simulate_frame(np.random.default_rng(1), LatentModel(), 3, 5, 2, second_read=True)
    frame.loc[3, column] = value
    with pytest.raises(AnalysisInputError, match=r"refused.*canonical"):
        design_results(frame)


def test_missing_correct_answer_refuses():
    frame = simulate_frame(np.random.default_rng(1), LatentModel(), 3, 5, 2)
    frame.loc[0, "correct_answer"] = None
    with pytest.raises(AnalysisInputError, match="correct_answer"):
        design_results(frame)


def test_missing_policy_changes_the_denominator():
    frame = simulate_frame(np.random.default_rng(6), LatentModel(), 3, 10, 2)
    frame.loc[frame.index[:4], "answer"] = None
    wrong = design_results(frame, DesignPolicy(missing="wrong"))["tables"]["arm_accuracy"].data
    excl = design_results(frame, DesignPolicy(missing="exclude"))["tables"]["arm_accuracy"].data
    first = frame.iloc[0]
    pick = (wrong["reader"] == first["reader"]) & (wrong["arm"] == first["arm"])
    pick &= wrong["task"] == "All"
    assert int(wrong.loc[pick, "n"].iloc[0]) == 20
    assert int(excl.loc[pick, "n"].iloc[0]) == 16


def test_mid_study_questions_not_read_by_all_are_left_out_and_said():
    frame = simulate_frame(np.random.default_rng(8), LatentModel(), 3, 10, 2)
    frame = frame[
        ~((frame["reader"] == "r3") & (frame["arm"] == "aided") & (frame["case_id"] == "x010"))
    ]
    results = design_results(frame)
    assert results["cube"].n_questions == 18
    assert "2 questions not yet read by all left out" in results["design"]


def test_one_reader_is_not_estimable_but_accuracy_is_shown():
    frame = simulate_frame(np.random.default_rng(2), LatentModel(), 1, 6, 2)
    results = design_results(frame)
    assert results["result"] is None
    note = results["tables"]["mrmc_difference"].data.loc[0, "note"]
    assert note == "not estimable: needs at least two readers"
    assert len(results["tables"]["arm_accuracy"].data) > 0
    assert "not estimable" in power_table(results, 0.05).data.loc[0, "note"]


def test_power_section_from_the_study_as_pilot():
    frame = simulate_frame(np.random.default_rng(3), LatentModel(), 4, 30, 4)
    table = power_table(design_results(frame), 0.05, 0.8)
    assert "Hillis–Obuchowski–Berbaum" in table.method and "30 X-rays" in table.method
    reachable = table.data.dropna(subset=["x_rays"])
    assert (reachable["power"] >= 0.8).all()
    assert (reachable["questions"] == reachable["x_rays"] * 4).all()


def test_design_modules_import_without_django():
    code = (
        "import sys\n"
        "import analysis.stats.design, analysis.stats.power, analysis.package_files\n"
        "import analysis.stats.reliance, analysis.stats.simulate\n"
        "print(','.join(m for m in sys.modules if m == 'django' or m.startswith('django.')))\n"
    )
    root = Path(__file__).resolve().parents[2]
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(root)}
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == ""


@pytest.mark.parametrize(("readers", "groups"), [(8, 2), (8, 3)])
def test_split_plot_variance_matches_the_spread_of_the_estimate(readers, groups):
    """The split-plot standard error is calibrated: over 600 simulated studies (60 X-rays,
    4 questions; 8 readers in equal or unequal groups) the mean squared SE is within 15% of
    the variance of the estimated difference (20-30% off would mean a wrong r~ or pooling)."""
    rng = np.random.default_rng(readers * 10 + groups)
    estimates, variances = [], []
    for _ in range(600):
        correct, counted, rg, cg = simulate_cube(rng, LatentModel(), readers, 60, 4, groups)
        result = or_design(correct, counted, reader_groups=rg, case_groups=cg).random
        estimates.append(result.estimate)
        variances.append(result.se**2)
    assert np.mean(variances) / np.var(estimates) == pytest.approx(1.0, abs=0.15)


def test_json_is_plain_data():
    results = design_results(simulate_frame(np.random.default_rng(2), LatentModel(), 3, 8, 2))
    data = as_json(results)
    json.dumps(data, allow_nan=False)
    fixed = data["tables"]["mrmc_difference"]["rows"][1]
    assert fixed["df"] is None  # infinite df of the normal reference, not "Infinity"
    assert data["tables"]["non_inferiority"]["method"].startswith("the two-sided CI")


def test_reader_without_second_session_answers_is_left_out_and_named():
    """Mid-study, a reader whose aided session has not opened has rows without answers: they
    would all count as wrong, so the reader is left out of the comparison and named."""
    frame = simulate_frame(np.random.default_rng(8), LatentModel(), 4, 10, 2)
    waiting = (frame["reader"] == "r4") & (frame["arm"] == "aided")
    frame.loc[waiting, "answer"] = None
    results = design_results(frame)
    assert results["cube"].readers == ["r1", "r2", "r3"]
    assert "left out (no answers yet in one of the two readings): r4" in results["design"]
    complete = design_results(frame[frame["reader"] != "r4"])["result"]
    assert results["result"].random.f == pytest.approx(complete.random.f, abs=1e-12)


def test_session_table_shows_accuracy_by_arm_and_session():
    frame = simulate_frame(np.random.default_rng(8), LatentModel(), 4, 10, 2)
    table = design_results(frame)["tables"]["arm_by_session"].data
    assert len(table) == 4 and set(table["readers"]) == {2}
    one = frame[(frame["arm"] == "aided") & (frame["session"] == 1)]
    expected = (one["answer"] == one["correct_answer"]).groupby(one["reader"]).mean().mean()
    got = table[(table["arm"] == "aided") & (table["session"] == 1)]["mean_accuracy"].iloc[0]
    assert got == pytest.approx(expected)


@pytest.mark.parametrize(
    ("low", "shown", "says"),
    [
        # Within 0.0005 of 0 or of −margin, 3 decimals would print a false inequality
        # ("0.000 > 0", "−0.050 > −0.05") or "−0.000": the bound gets the digits it needs.
        (0.0004, "0.0004", "aided is superior to unaided (lower bound 0.0004 > 0)"),
        (-0.0004, "−0.0004", "(lower bound −0.0004 > −0.05); superiority is not shown"),
        (
            -0.05 + 1e-7,
            "−0.0499999",
            "non-inferior to unaided at margin 0.05 (lower bound −0.0499999 > −0.05)",
        ),
        (-0.05, "−0.050", "is not shown (lower bound −0.050 ≤ −0.05)"),
        (-0.0500004, "−0.0500004", "is not shown (lower bound −0.0500004 ≤ −0.05)"),
    ],
)
def test_a_lower_bound_next_to_0_or_the_margin_is_shown_on_its_side(low, shown, says):
    from analysis.stats.design import non_inferiority
    from analysis.stats.or_accuracy import Comparison

    comparison = Comparison(
        "random readers, random X-rays", 0.03, 0.02, 10.0, 0, 0.5, low, 0.09, 0, 1, 10, 0.05
    )
    conclusion = non_inferiority(comparison, 0.05, "aided", "unaided")["conclusion"]
    assert f"(95% CI {shown} to 0.090): " in conclusion
    assert says in conclusion, conclusion


def test_a_comparison_without_se_names_its_true_cause():
    """Both readers gain exactly 0.25 from the AI (MS(T×R) = 0), on different X-rays (Cov2 −
    Cov3 < 0): the random-readers denominator MS(T×R) + r max(Cov2 − Cov3, 0) is 0. The note
    says so, not that the accuracies do not vary over X-rays (they do); the fixed-readers row,
    whose denominator is positive, has an interval."""
    frame = simulate_frame(np.random.default_rng(1), LatentModel(), 2, 4, 1)
    gained = {("r1", "x001"), ("r2", "x002")}  # the one X-ray each reader gets right aided
    right = frame["correct_answer"]
    wrong = right.map(lambda letter: "ABCD"[("ABCD".index(letter) + 1) % 4])
    cells = list(zip(frame["reader"], frame["case_id"], strict=True))
    aided_right = [c in gained or c[1] == "x003" for c in cells]
    unaided_right = [c[1] in {"x003"} for c in cells]
    is_right = np.where(frame["arm"] == "aided", aided_right, unaided_right)
    frame = frame.assign(answer=np.where(is_right, right, wrong))
    table = design_results(frame)["tables"]["mrmc_difference"].data.set_index("analysis")
    random_row = table.loc[table.index.str.startswith("random")].iloc[0]
    fixed_row = table.loc[table.index.str.startswith("fixed")].iloc[0]
    assert random_row["difference"] == pytest.approx(0.25)
    assert np.isnan(random_row["se"])
    assert "MS(T×R) = 0" in random_row["note"] and "Cov2 − Cov3 = −" in random_row["note"]
    assert "do not vary over X-rays" not in random_row["note"]
    assert np.isfinite(fixed_row["ci_low"]) and "these readers only" in fixed_row["note"]


def test_readers_with_the_same_difference_are_said_to_give_infinite_df():
    """Two readers answering alike: MS(T×R) = 0 but Cov2 − Cov3 > 0, so the random-readers
    row has an interval on infinite df; its note says why, not "these readers only"."""
    frame = simulate_frame(np.random.default_rng(4), LatentModel(effect=0.3), 2, 20, 2)
    first = frame[frame["reader"] == "r1"]
    frame = pd.concat([first, first.assign(reader="r2")], ignore_index=True)
    table = design_results(frame)["tables"]["mrmc_difference"].data
    random_row = table[table["analysis"].str.startswith("random")].iloc[0]
    assert np.isinf(random_row["df"]) and np.isfinite(random_row["ci_low"])
    assert "MS(T×R) = 0" in random_row["note"] and "these readers only" not in random_row["note"]
