"""Reliance on the AI: agreement when the AI was right vs wrong on the same reads in both arms,
the aided - unaided contrast, second-read switches; per reader the accuracy table's X-ray-
clustered interval (oracle from the formulas, scipy's paired t), for all readers the
random-readers interval (MRMCaov, coverage by simulation)."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from analysis.stats.clustered import clustered_proportion_ci
from analysis.stats.design import design_results
from analysis.stats.reliance import (
    LABELS,
    POOLED,
    agreement_with_ai,
    readers_mean_rate,
    reliance_tables,
    second_read_switches,
)
from tests import roracle as r_oracle


def row(reader, xray, q, answer, ai, truth, first=None, arm="aided"):
    return {
        "reader": reader,
        "arm": arm,
        "case_id": xray,
        "question_id": f"{xray}-{q}",
        "task": "t",
        "answer": answer,
        "first_answer": first,
        "ai_answer": ai,
        "correct_answer": truth,
    }


def second_read_frame():
    # (reader, xray, q, final, ai, truth, first)
    reads = [
        ("r1", "x1", 1, "A", "A", "A", "B"),  # wrong -> right, to the (right) AI
        ("r1", "x1", 2, "C", "C", "D", "D"),  # right -> wrong, to the (wrong) AI
        ("r1", "x2", 1, "B", "C", "B", "B"),  # kept, disagrees with a wrong AI
        ("r1", "x2", 2, "A", "A", "A", "A"),  # kept, agrees with a right AI
        ("r2", "x1", 1, "B", "A", "A", "A"),  # right -> wrong, away from the (right) AI
        ("r2", "x1", 2, "D", "C", "D", "D"),  # kept, disagrees with a wrong AI
        ("r2", "x2", 1, "C", "C", "B", "C"),  # kept, agrees with a wrong AI
        ("r2", "x2", 2, "A", None, "A", "B"),  # wrong -> right, the AI gave no answer
    ]
    return pd.DataFrame([row(r, x, q, a, ai, t, f) for r, x, q, a, ai, t, f in reads])


def test_switch_counts_per_reader_and_pooled():
    table = second_read_switches(second_read_frame()).set_index("reader")
    r1, r2, pooled = table.loc["r1"], table.loc["r2"], table.loc[POOLED]
    assert (r1["changed_k"], r1["wrong_to_right_k"], r1["right_to_wrong_k"]) == (2, 1, 1)
    assert (r1["to_ai_k"], r1["away_from_ai_k"]) == (2, 0)
    assert (r2["changed_k"], r2["wrong_to_right_k"], r2["right_to_wrong_k"]) == (2, 1, 1)
    assert (r2["to_ai_k"], r2["away_from_ai_k"]) == (0, 1)
    assert pooled["changed_n"] == 8 and pooled["changed"] == pytest.approx(0.5)
    # Automation bias: first answer differed from a wrong AI: r1 x1-2 (adopted), r1 x2-1 (no),
    # r2 x1-2 (no) -> 1 of 3; from a right AI: r1 x1-1 (adopted) -> 1 of 1.
    assert (pooled["adopted_ai_when_ai_wrong_k"], pooled["adopted_ai_when_ai_wrong_n"]) == (1, 3)
    assert (pooled["adopted_ai_when_ai_right_k"], pooled["adopted_ai_when_ai_right_n"]) == (1, 1)


def test_agreement_when_ai_right_and_wrong():
    table = agreement_with_ai(second_read_frame()).set_index("reader")
    pooled = table.loc[POOLED]
    # AI right (final answers): r1 x1-1 agree, r1 x2-2 agree, r2 x1-1 no -> 2/3.
    assert (pooled["agree_when_ai_right_k"], pooled["agree_when_ai_right_n"]) == (2, 3)
    # AI wrong: r1 x1-2 agree, r1 x2-1 no, r2 x1-2 no, r2 x2-1 agree -> 2/4.
    assert (pooled["agree_when_ai_wrong_k"], pooled["agree_when_ai_wrong_n"]) == (2, 4)
    assert pooled["no_ai_answer"] == 1


def test_an_accepted_answer_beside_the_key_counts_right_for_the_ai_and_the_reader():
    """Several valid answers (an adjudicated correction, issue 35): on r1 x1-2 the key is D
    but C is also accepted, so the AI's C is right there, and r1's right -> wrong switch to
    C is no switch to a wrong answer."""
    frame = second_read_frame().assign(accepted=None)
    frame.loc[frame["question_id"] == "x1-2", "accepted"] = "CD"
    agreement = agreement_with_ai(frame).set_index("reader").loc[POOLED]
    # AI right now also on x1-2 (both readers): r1 agrees, r2 (D) does not -> 3/5; wrong 1/2.
    assert (agreement["agree_when_ai_right_k"], agreement["agree_when_ai_right_n"]) == (3, 5)
    assert (agreement["agree_when_ai_wrong_k"], agreement["agree_when_ai_wrong_n"]) == (1, 2)
    switches = second_read_switches(frame).set_index("reader").loc["r1"]
    assert (switches["wrong_to_right_k"], switches["right_to_wrong_k"]) == (1, 0)


def test_reliance_tables_come_with_unit_method_and_policy():
    tables = design_results(second_read_frame())["tables"]
    switches = tables["second_read_switches"]
    assert "X-rays are the clusters" in switches.unit
    assert "clustered Wilson" in switches.method
    assert "missing answer" in switches.policy


def two_arm_frame():
    """Two arms: r1 and r2 read both (r2 left x2-1 unanswered when aided); r3 read only the
    unaided arm. AI: wrong on x1-1 and x2-1, right on x1-2 and x2-2."""
    ai = {"x1-1": "B", "x1-2": "A", "x2-1": "C", "x2-2": "D"}
    truth = {"x1-1": "A", "x1-2": "A", "x2-1": "D", "x2-2": "D"}
    # (reader, question, unaided answer, aided answer or None)
    reads = [
        ("r1", "x1-1", "A", "B"),  # AI wrong: unaided no, aided agrees
        ("r1", "x2-1", "C", "C"),  # AI wrong: both agree
        ("r1", "x1-2", "A", "A"),  # AI right: both agree
        ("r1", "x2-2", "B", "D"),  # AI right: unaided no, aided agrees
        ("r2", "x1-1", "A", "B"),  # AI wrong: unaided no, aided agrees
        ("r2", "x2-1", "C", None),  # unanswered when aided: in neither rate
        ("r2", "x1-2", "A", "A"),
        ("r2", "x2-2", "D", "D"),
        ("r3", "x1-1", "B", None),  # r3: no aided read at all
        ("r3", "x2-1", "C", None),
        ("r3", "x1-2", "A", None),
        ("r3", "x2-2", "D", None),
    ]
    rows = []
    for reader, question, unaided, aided in reads:
        xray, q = question.split("-")
        for arm, answer in (("unaided", unaided), ("aided", aided)):
            rows.append(row(reader, xray, q, answer, ai[question], truth[question], arm=arm))
    return pd.DataFrame(rows)


def test_agreement_compares_the_same_reads_in_both_arms():
    """The unaided baseline counts only the reads answered in both arms: r3 (no aided read)
    and r2's x2-1 (unanswered when aided) are in neither rate. AI wrong, on the same reads:
    aided 3/3 agree (r1 x1-1, r1 x2-1, r2 x1-1), unaided 1/3 (r1 x2-1); pooling every unaided
    read would have given 4/6 (r3's x2-1 and r2's x2-1 added)."""
    table = agreement_with_ai(two_arm_frame()).set_index("reader")
    assert list(table.index) == ["r1", "r2", POOLED]
    pooled = table.loc[POOLED]
    assert (pooled["agree_when_ai_wrong_k"], pooled["agree_when_ai_wrong_n"]) == (3, 3)
    assert (pooled["unaided_agree_when_ai_wrong_k"], pooled["unaided_agree_when_ai_wrong_n"]) == (
        1,
        3,
    )
    assert (pooled["agree_when_ai_right_k"], pooled["agree_when_ai_right_n"]) == (4, 4)
    assert (pooled["unaided_agree_when_ai_right_k"], pooled["unaided_agree_when_ai_right_n"]) == (
        3,
        4,
    )
    r1, r2 = table.loc["r1"], table.loc["r2"]
    # The all-readers rate is the readers' mean: r1 1/2 and r2 0/1 unaided with a wrong AI.
    assert r1["unaided_agree_when_ai_wrong"] == 0.5 and r2["unaided_agree_when_ai_wrong"] == 0
    assert pooled["unaided_agree_when_ai_wrong"] == pytest.approx(0.25)
    assert r1["agree_when_ai_wrong_change"] == pytest.approx(0.5)
    assert pooled["agree_when_ai_wrong_change"] == pytest.approx((0.5 + 1.0) / 2)
    assert pooled["paired_reads"] == 7
    about = reliance_tables(two_arm_frame(), 0.05, "policy")["reliance_agreement"]
    assert "read in both arms" in about.unit
    assert "left out: r3" in about.policy
    assert "random-readers" in about.method


def test_every_column_has_plain_words():
    """Every column the reliance tables show has a label (the page's and CSV's headers)."""
    tables = reliance_tables(two_arm_frame(), 0.05, "p") | reliance_tables(
        second_read_frame(), 0.05, "p"
    )
    for table in tables.values():
        assert set(table.data.columns) <= set(LABELS), set(table.data.columns) - set(LABELS)


def kish_korn_graubard(successes, clusters, alpha=0.05):
    """From the formulas (Rao & Scott 1992; Korn & Graubard 1998): p = sum y / n; the
    cluster-robust variance of the ratio estimator C/(C-1) sum_k (y_k - p n_k)^2 / n^2; deff =
    that / (p(1-p)/n), at least 1; n* = n / deff (z / t_{C-1})^2, at most n; Wilson on n*."""
    from scipy.stats import t as student

    totals, sizes = {}, {}
    for y, c in zip(successes, clusters, strict=True):
        totals[c] = totals.get(c, 0) + y
        sizes[c] = sizes.get(c, 0) + 1
    n, p = len(successes), sum(successes) / len(successes)
    big_c = len(totals)
    robust = big_c / (big_c - 1) * sum((totals[c] - p * sizes[c]) ** 2 for c in totals) / n**2
    deff = max(robust / (p * (1 - p) / n), 1)
    z = 1.959963984540054
    m = min(n, n / deff * (z / student.ppf(1 - alpha / 2, big_c - 1)) ** 2)
    centre = (p + z * z / (2 * m)) / (1 + z * z / m)
    half = z / (1 + z * z / m) * math.sqrt(p * (1 - p) / m + z * z / (4 * m * m))
    return centre - half, centre + half


def test_a_readers_interval_is_the_accuracy_tables_clustered_wilson():
    """One function: a reader's agreement rate has the accuracy table's interval (Korn &
    Graubard's df factor included), here against the formulas."""
    rng = np.random.default_rng(4)
    xrays, questions = 30, 4
    rows = []
    p_xray = rng.random(xrays)
    for k in range(xrays):
        for q in range(questions):
            agree = rng.random() < p_xray[k]
            rows.append(row("r1", f"x{k}", q, "B" if agree else "C", "B", "A"))
    frame = pd.DataFrame(rows)
    table = agreement_with_ai(frame).set_index("reader").loc["r1"]
    agree = (frame["answer"] == "B").astype(int).tolist()
    low, high = kish_korn_graubard(agree, frame["case_id"].tolist())
    assert (table["agree_when_ai_wrong_ci_low"], table["agree_when_ai_wrong_ci_high"]) == (
        pytest.approx(low, abs=1e-12),
        pytest.approx(high, abs=1e-12),
    )


def test_a_readers_change_is_the_paired_t_with_one_question_per_xray():
    """With one question per X-ray Obuchowski's clustered paired difference is the paired t
    test (scipy) of aided vs unaided agreement over the X-rays."""
    from scipy.stats import ttest_rel

    rng = np.random.default_rng(8)
    rows, aided, unaided = [], [], []
    for k in range(25):
        a, u = rng.random() < 0.6, rng.random() < 0.35
        aided.append(int(a))
        unaided.append(int(u))
        rows.append(row("r1", f"x{k}", 1, "B" if a else "C", "B", "A"))
        rows.append(row("r1", f"x{k}", 1, "B" if u else "D", "B", "A", arm="unaided"))
    table = agreement_with_ai(pd.DataFrame(rows)).set_index("reader").loc["r1"]
    test = ttest_rel(aided, unaided)
    low, high = test.confidence_interval(0.95)
    assert table["agree_when_ai_wrong_change"] == pytest.approx(np.mean(aided) - np.mean(unaided))
    assert table["agree_when_ai_wrong_change_p"] == pytest.approx(test.pvalue, abs=1e-12)
    assert table["agree_when_ai_wrong_change_ci_low"] == pytest.approx(low, abs=1e-12)
    assert table["agree_when_ai_wrong_change_ci_high"] == pytest.approx(high, abs=1e-12)


def test_a_readers_change_interval_stays_within_minus_one_to_one():
    """Few X-rays: the paired t interval of a difference of two rates passes 1 ([-0.77, 2.10]
    here, t on 2 df); the contrast, like the all-readers one, is clipped to its range while
    its p-value stays the paired t's (scipy)."""
    from scipy.stats import ttest_rel

    aided, unaided = [1, 1, 1], [0, 0, 1]  # agreement with a right AI on three X-rays
    rows = []
    for k, (a, u) in enumerate(zip(aided, unaided, strict=True)):
        rows.append(row("r1", f"x{k}", 1, "A" if a else "C", "A", "A"))
        rows.append(row("r1", f"x{k}", 1, "A" if u else "D", "A", "A", arm="unaided"))
    table = agreement_with_ai(pd.DataFrame(rows)).set_index("reader").loc["r1"]
    test = ttest_rel(aided, unaided)
    assert test.confidence_interval(0.95).high > 1  # the unclipped interval passes 1
    assert table["agree_when_ai_right_change"] == pytest.approx(2 / 3)
    assert table["agree_when_ai_right_change_ci_low"] == pytest.approx(
        test.confidence_interval(0.95).low, abs=1e-12
    )
    assert table["agree_when_ai_right_change_ci_high"] == 1.0
    assert table["agree_when_ai_right_change_p"] == pytest.approx(test.pvalue, abs=1e-12)


def simulated_reliance(rng, readers=5, xrays=20, questions=2):
    """Every reader reads every question in both arms; the AI is wrong on about a third;
    readers differ in how often they follow it (probit reader effect)."""
    rows = []
    follow = rng.normal(0, 0.6, readers)
    ai_wrong = rng.random((xrays, questions)) < 0.35
    for j in range(readers):
        for k in range(xrays):
            for q in range(questions):
                for arm, shift in (("unaided", -0.8), ("aided", 0.0)):
                    agree = shift + follow[j] + rng.standard_normal() > 0
                    ai, truth = ("B", "A") if ai_wrong[k, q] else ("A", "A")
                    answer = ai if agree else ("C" if ai_wrong[k, q] else "B")
                    rows.append(row(f"r{j}", f"x{k:02d}", q, answer, ai, truth, arm=arm))
    return pd.DataFrame(rows)


@pytest.mark.roracle
def test_all_readers_intervals_are_mrmcaovs():
    """The all-readers rates and their aided − unaided contrast (readers and X-rays random)
    equal MRMCaov's OR/Hillis analysis of agreement with a wrong AI (its mrmc() with the
    rate as a user-defined metric: mean(rating) over a reader's reads, X-ray = case)."""
    r_oracle.require("MRMCaov")
    frame = simulated_reliance(np.random.default_rng(5))
    ours = agreement_with_ai(frame).set_index("reader").loc[POOLED]
    wrong = frame[frame["ai_answer"] != frame["correct_answer"]]
    data = wrong.assign(
        treatment=wrong["arm"],
        case=wrong["case_id"],
        truth=1,
        rating=(wrong["answer"] == wrong["ai_answer"]).astype(int),
    )[["reader", "treatment", "case", "truth", "rating"]]
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "wrong.csv"
        data.to_csv(path, index=False)
        out = r_oracle.rscript(
            "-e",
            "suppressPackageStartupMessages(library(MRMCaov)); "
            f"d <- read.csv('{path}'); "
            "d$treatment <- factor(d$treatment, levels = c('aided', 'unaided')); "
            "accuracy <- function(truth, rating) mean(rating); "
            "s <- summary(mrmc(accuracy(truth, rating), treatment, reader, case, data = d)); "
            "m <- s$test_means; t <- s$test_diffs; "
            "cat(sprintf('%.15g', c(t$Estimate, t$CI[1, ], t[['p-value']], m$Estimate, "
            "m$CI[, 1], m$CI[, 2])))",
        )
    (diff, low, high, p, aided, unaided, a_low, u_low, a_high, u_high) = map(float, out.split())
    prefix = "agree_when_ai_wrong"
    assert ours[f"{prefix}_change"] == pytest.approx(diff, abs=1e-10)
    assert ours[f"{prefix}_change_ci_low"] == pytest.approx(low, abs=1e-10)
    assert ours[f"{prefix}_change_ci_high"] == pytest.approx(high, abs=1e-10)
    assert ours[f"{prefix}_change_p"] == pytest.approx(p, abs=1e-10)
    assert ours[prefix] == pytest.approx(aided, abs=1e-10)
    assert ours[f"unaided_{prefix}"] == pytest.approx(unaided, abs=1e-10)
    assert (ours[f"{prefix}_ci_low"], ours[f"{prefix}_ci_high"]) == (
        pytest.approx(max(a_low, 0), abs=1e-10),
        pytest.approx(min(a_high, 1), abs=1e-10),
    )
    assert (ours[f"unaided_{prefix}_ci_low"], ours[f"unaided_{prefix}_ci_high"]) == (
        pytest.approx(max(u_low, 0), abs=1e-10),
        pytest.approx(min(u_high, 1), abs=1e-10),
    )


def test_all_readers_interval_covers_the_reader_populations_rate():
    """Readers differ in how often they agree (probit reader effect sd 0.6) and X-rays share
    an effect (sd 0.4): over 400 seeded studies of 6 readers x 40 X-rays x 2 questions, the
    random-readers interval of the readers' mean rate covers the population's rate
    Phi(a / sqrt(1 + 0.6^2 + 0.4^2)) at least 0.92 of the time (nominal 0.95); the
    fixed-readers interval (all reads pooled, clustered by X-ray) covers it under 0.85."""
    rng = np.random.default_rng(2032)
    a, readers, xrays, questions, reps = -0.5, 6, 40, 2, 400
    truth = norm.cdf(a / math.sqrt(1 + 0.6**2 + 0.4**2))
    random_hits = fixed_hits = 0
    for _ in range(reps):
        latent = (
            a
            + 0.6 * rng.standard_normal((readers, 1, 1))
            + 0.4 * rng.standard_normal((1, xrays, 1))
            + rng.standard_normal((readers, xrays, questions))
        )
        y = (latent > 0).sum(axis=2).astype(float)
        m = np.full((readers, xrays), float(questions))
        _, low, high = readers_mean_rate(y, m, 0.05)
        random_hits += low <= truth <= high
        fixed = clustered_proportion_ci(y.sum(axis=0), m.sum(axis=0))
        fixed_hits += fixed.ci_low[0] <= truth <= fixed.ci_high[0]
    assert random_hits / reps >= 0.92
    assert fixed_hits / reps < 0.85


def test_all_readers_contrast_covers_the_reader_populations_change():
    """The automation-bias contrast with readers and X-rays random: readers differ overall
    (sd 0.5) and in their change with the AI (arm x reader sd 0.3), X-rays too (0.4, arm x
    X-ray 0.2). Over 600 seeded studies of 6 readers x 40 X-rays x 2 questions, the interval
    of the readers' mean aided − unaided rate covers the population's change
    Phi(a1 / s) − Phi(a0 / s) at least 0.92 of the time (nominal 0.95; 0.94 over 4,500)."""
    from analysis.stats.reliance import readers_mean_change

    rng = np.random.default_rng(3232)
    (a0, a1), readers, xrays, questions, reps = (-0.9, -0.3), 6, 40, 2, 600
    s = math.sqrt(1 + 0.5**2 + 0.3**2 + 0.4**2 + 0.2**2)
    truth = norm.cdf(a1 / s) - norm.cdf(a0 / s)
    m = np.full((readers, xrays), float(questions))
    hits = 0
    for _ in range(reps):
        shared = 0.5 * rng.standard_normal((readers, 1, 1)) + 0.4 * rng.standard_normal(
            (1, xrays, 1)
        )
        unaided, aided = (
            (
                a
                + shared
                + 0.3 * rng.standard_normal((readers, 1, 1))
                + 0.2 * rng.standard_normal((1, xrays, 1))
                + rng.standard_normal((readers, xrays, questions))
                > 0
            )
            .sum(axis=2)
            .astype(float)
            for a in (a0, a1)
        )
        _, low, high, _ = readers_mean_change(aided, unaided, m, 0.05)
        hits += low <= truth <= high
    assert hits / reps >= 0.92
