"""The X-ray as the case, bad input, "not predicted", and every statistic the pages show.

Pure maths, no database: checked against independent re-implementations, statsmodels and
hand-computed values.
"""

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps
from statsmodels.stats.inter_rater import aggregate_raters
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss
from statsmodels.stats.multitest import multipletests

from analysis import stats
from analysis.stats import mrmc

PER_XRAY = 4


def clustered_frame(n_xrays=60, readers=4, models=2, seed=0, missing=0.0):
    """Four questions per X-ray; an X-ray's difficulty is shared by its questions."""
    rng = np.random.default_rng(seed)
    rows = []
    hard = rng.random(n_xrays) < 0.4
    tasks = ["Presence", "Location", "Negation"]
    raters = [f"reader {i}" for i in range(readers)] + [f"model {i}" for i in range(models)]
    for x in range(n_xrays):
        for k in range(PER_XRAY):
            q = x * PER_XRAY + k
            truth = "ABCD"[rng.integers(4)]
            for rater in raters:
                skill = (0.45 if hard[x] else 0.9) + rng.normal(0, 0.05)
                answer = truth if rng.random() < skill else "ABCD"[rng.integers(4)]
                if rng.random() < missing:
                    answer = None
                rows.append(
                    {
                        "question_id": f"q{q:04d}",
                        "rater": rater,
                        "answer": answer,
                        "correct_answer": truth,
                        "task": tasks[q % 3],
                        "case_id": f"xray-{x:03d}",
                    }
                )
    return pd.DataFrame(rows), raters[:readers], raters[readers:]


def reference_or_hillis(frame, readers, model):
    """Single-treatment OR/Hillis on readers minus model, jackknifed by X-ray, with loops."""
    wide = frame.assign(c=(frame["answer"] == frame["correct_answer"]).astype(float))
    wide = wide.pivot(index="question_id", columns="rater", values="c")
    xray = frame.drop_duplicates("question_id").set_index("question_id")["case_id"]
    diff = wide[readers].sub(wide[model], axis=0)
    sums = diff.groupby(xray.reindex(diff.index).to_numpy()).sum()  # X-rays x readers
    sizes = xray.value_counts().reindex(sums.index).to_numpy(dtype=float)
    c, r = len(sums), len(readers)
    total, m = sums.sum().to_numpy(), sizes.sum()
    theta = total / m
    jack = np.empty((c, r))
    for k in range(c):
        for j in range(r):
            jack[k, j] = (total[j] - sums.iloc[k, j]) / (m - sizes[k])
    cov = np.empty((r, r))
    for a in range(r):
        for b in range(r):
            cov[a, b] = (
                (c - 1)
                / c
                * sum(
                    (jack[k, a] - jack[:, a].mean()) * (jack[k, b] - jack[:, b].mean())
                    for k in range(c)
                )
            )
    cov2 = np.mean([cov[a, b] for a in range(r) for b in range(r) if a != b])
    ms_r = sum((t - theta.mean()) ** 2 for t in theta) / (r - 1)
    denominator = ms_r + r * max(cov2, 0.0)
    df = denominator**2 / (ms_r**2 / (r - 1))
    t = theta.mean() / np.sqrt(denominator / r)
    return theta.mean(), df, 2 * sps.t.sf(abs(t), df)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_or_hillis_jackknifes_by_xray(seed):
    frame, readers, models = clustered_frame(seed=seed)
    table = stats.ai_vs_readers_table(frame, readers, models).set_index("model")
    for model in models:
        mean, df, p = reference_or_hillis(frame, readers, model)
        assert table.loc[model, "difference"] == pytest.approx(mean, abs=1e-12)
        assert table.loc[model, "df"] == pytest.approx(df, abs=1e-6)
        assert table.loc[model, "p_value"] == pytest.approx(p, abs=1e-6)
        assert table.loc[model, "n_cases"] == 60 and table.loc[model, "n_questions"] == 240


def test_clustering_changes_the_interval_and_the_question_unit_is_stated():
    frame, readers, models = clustered_frame(seed=3)
    clustered = stats.ai_vs_readers_table(frame, readers, models).iloc[0]
    by_question = stats.ai_vs_readers_table(frame.drop(columns="case_id"), readers, models)
    by_question = by_question.iloc[0]
    assert clustered["difference"] == pytest.approx(by_question["difference"])
    assert clustered["ci_high"] - clustered["ci_low"] != pytest.approx(
        by_question["ci_high"] - by_question["ci_low"]
    )
    assert by_question["n_cases"] == 240
    assert stats.prepare(frame.drop(columns="case_id")).case_unit == "question"


def test_single_question_cases_reduce_to_the_classic_jackknife():
    rng = np.random.default_rng(1)
    scores = (rng.random((4, 50)) < 0.7).astype(float)
    ai = (rng.random(50) < 0.6).astype(float)
    plain = mrmc.ai_versus_readers(scores, ai)
    cases = mrmc.ai_versus_readers(scores, ai, cases=np.arange(50))
    for field in ("mean", "se", "df", "p_value", "ci_low", "ci_high"):
        assert getattr(cases, field) == pytest.approx(getattr(plain, field), rel=1e-12)


def test_panel_accuracy_interval_is_reported_as_computed_not_clipped():
    """Near 100% the OR/Hillis interval passes 1: it is shown as computed (a clipped 1.0
    would hide how little three readers pin the mean down), with its df."""
    readers = np.ones((3, 40))
    readers[0, :2] = 0
    readers[1, :1] = 0
    result = mrmc.panel_accuracy(readers)
    half = sps.t.ppf(0.975, result.df) * result.se
    assert result.ci_high == pytest.approx(result.mean + half) and result.ci_high > 1.0
    assert result.ci_low == pytest.approx(result.mean - half)
    frame, readers_, _ = clustered_frame(seed=4)
    panel = stats.reader_panel_accuracy(frame, readers_)
    assert panel["ci_low"] < panel["mean"] < panel["ci_high"]
    assert panel["ci_low_fixed"] < panel["mean"] < panel["ci_high_fixed"]
    assert panel["n_cases"] == 60


def base_rows(**changes):
    row = {
        "question_id": "q1",
        "rater": "r",
        "answer": "A",
        "correct_answer": "A",
        "task": "T",
        "case_id": "x1",
    }
    return pd.DataFrame([{**row, **changes}, {**row, "question_id": "q2"}])


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"answer": "E"}, "answer.*outside A-D.*'E' for question q1"),
        ({"answer": "yes"}, "outside A-D"),
        ({"correct_answer": None}, "without a correct answer.*q1"),
        ({"correct_answer": "Z"}, "correct answer.*outside A-D"),
        ({"case_id": None}, "without a case \\(X-ray\\).*q1"),
    ],
)
def test_bad_input_is_a_clear_error(changes, message):
    with pytest.raises(stats.AnalysisInputError, match=message):
        stats.prepare(base_rows(**changes))


@pytest.mark.parametrize("blank", [None, np.nan, "", "  "])
def test_blank_answers_are_missing(blank):
    table = stats.accuracy_table(base_rows(answer=blank), missing="exclude")
    assert table.query("task == 'All'")["n"].item() == 1


def test_lower_case_and_padded_letters_are_accepted():
    table = stats.accuracy_table(base_rows(answer=" a"))
    assert table.query("task == 'All'")["correct"].item() == 2


def test_not_predicted_is_not_a_failed_extraction():
    """A model uploaded for 10 of 20 questions, 2 of them unparseable: 2 failed of 10."""
    rows = []
    for q in range(20):
        presented = q < 10
        rows.append(
            {
                "question_id": q,
                "rater": "m",
                "answer": None if q in (0, 1) or not presented else "A",
                "correct_answer": "A",
                "task": "T",
                "presented": presented,
            }
        )
    df = pd.DataFrame(rows)
    failed = stats.failed_extractions(df).iloc[0]
    assert (failed["n"], failed["failed"], failed["not_predicted"]) == (10, 2, 10)
    assert failed["rate"] == pytest.approx(0.2)
    for missing, n in (("wrong", 10), ("exclude", 8)):
        row = stats.accuracy_table(df, missing=missing).query("task == 'All'").iloc[0]
        assert row["n"] == n and row["correct"] == 8


def test_kappa_pairs_add_n_agreement_pabak_and_clustered_cis():
    frame, _, _ = clustered_frame(seed=5, missing=0.05)
    pairs = stats.kappa_pairs(frame, n_boot=400, seed=1)
    matrix = stats.kappa_matrix(frame)
    wide = frame.pivot(index="question_id", columns="rater", values="answer")
    for row in pairs.itertuples():
        assert row.kappa == pytest.approx(matrix.loc[row.rater_a, row.rater_b], abs=1e-12)
        both = wide[[row.rater_a, row.rater_b]].dropna()
        assert row.n == len(both)
        agreement = (both[row.rater_a] == both[row.rater_b]).mean()
        assert row.agreement == pytest.approx(agreement)
        assert row.pabak == pytest.approx((4 * agreement - 1) / 3)
        assert -1 <= row.ci_low < row.kappa < row.ci_high <= 1
    assert len(pairs) == 6 * 5 // 2
    again = stats.kappa_pairs(frame, n_boot=400, seed=1)
    pd.testing.assert_frame_equal(pairs, again)
    unclustered = stats.kappa_pairs(frame.drop(columns="case_id"), n_boot=400, seed=1)
    assert not np.allclose(pairs["ci_low"], unclustered["ci_low"])


def test_kappa_pairs_on_correct_scale_and_per_task():
    frame, _, _ = clustered_frame(seed=6)
    pairs = stats.kappa_pairs(frame, task="Location", scale="correct", n_boot=50)
    matrix = stats.kappa_matrix(frame, task="Location", scale="correct")
    row = pairs.iloc[0]
    assert row.kappa == pytest.approx(matrix.loc[row.rater_a, row.rater_b])
    assert row.pabak == pytest.approx(2 * row.agreement - 1)


def test_fleiss_table_matches_statsmodels_per_task():
    frame, readers, _ = clustered_frame(seed=7, missing=0.03)
    table = stats.fleiss_table(frame, readers, n_boot=200).set_index("task")
    for task in ["All", "Location", "Negation", "Presence"]:
        part = frame if task == "All" else frame[frame["task"] == task]
        wide = part.pivot(index="question_id", columns="rater", values="answer")[readers].dropna()
        counts, _ = aggregate_raters(wide.to_numpy())
        assert table.loc[task, "kappa"] == pytest.approx(sm_fleiss(counts), abs=1e-12)
        assert table.loc[task, "n"] == len(wide)
        assert table.loc[task, "ci_low"] < table.loc[task, "kappa"] < table.loc[task, "ci_high"]
    assert stats.fleiss_kappa(frame, readers) == pytest.approx(table.loc["All", "kappa"])


def test_mcnemar_pairs_counts_clustered_p_and_holm():
    frame, _, _ = clustered_frame(seed=8, missing=0.02)
    pairs = stats.mcnemar_pairs(frame, missing="exclude")
    assert len(pairs) == 15
    for row in pairs.itertuples():
        table = stats.mcnemar_table(frame, row.rater_a, row.rater_b, "exclude").to_numpy()
        assert [[row.both_correct, row.only_a_correct], [row.only_b_correct, row.both_wrong]] == (
            table.tolist()
        )
        assert row.n == table.sum()
        assert row.ci_low <= row.difference <= row.ci_high
        # one method: p < 0.05 exactly when the CI excludes 0
        assert (row.p_value < 0.05) == (row.ci_low > 0 or row.ci_high < 0)
    assert np.allclose(pairs["p_holm"], multipletests(pairs["p_value"], method="holm")[1])


def test_reading_time_median_iqr_and_accuracy_by_time():
    rows = []
    for q, (seconds, answer) in enumerate([(10, "A"), (20, "A"), (30, "B"), (40, "B"), (0, "A")]):
        rows.append(
            {
                "question_id": q,
                "rater": "r",
                "answer": answer,
                "correct_answer": "A",
                "task": "T",
                "time_ms": seconds * 1000,
            }
        )
    df = pd.DataFrame(rows)
    table = stats.reading_time_table(df, ["r"]).set_index("task")
    assert table.loc["All", "n"] == 4  # the 0 ms answer has no time recorded
    assert table.loc["All", "median_s"] == 25
    assert (table.loc["All", "q1_s"], table.loc["All", "q3_s"]) == (17.5, 32.5)
    bins = stats.accuracy_by_time(df, ["r"], bins=2)
    assert bins["accuracy"].tolist() == [1.0, 0.0] and bins["n"].tolist() == [2, 2]


def test_flow_counts_questions_xrays_and_reasons():
    frame, _, _ = clustered_frame(n_xrays=5, readers=2, models=1, seed=9)
    frame["excluded"] = frame["case_id"].isin(["xray-000"]) | (frame["question_id"] == "q0005")
    frame["excluded_reason"] = np.where(frame["case_id"] == "xray-000", "wrong image", "typo")
    frame.loc[(frame["rater"] == "model 0") & (frame["question_id"] == "q0010"), "answer"] = None
    frame["presented"] = ~((frame["rater"] == "model 0") & (frame["question_id"] == "q0011"))
    flow = stats.flow_tables(frame, include_excluded=False)
    stages = flow.stages
    assert stages.iloc[0][["questions", "x_rays"]].tolist() == [20, 5]
    assert stages.iloc[1][["questions", "x_rays"]].tolist() == [5, 2]
    reasons = stages[stages["detail"].str.startswith("reason")].set_index("detail")
    assert reasons.loc["reason: wrong image", "questions"] == 4
    assert reasons.loc["reason: typo", "questions"] == 1
    assert stages.iloc[-1][["stage", "questions", "x_rays"]].tolist() == ["Analysed", 15, 4]
    model = flow.raters.set_index("rater").loc["model 0"]
    assert (model["analysed"], model["no_answer"], model["not_predicted"]) == (15, 1, 1)


def test_percentile_interval_matches_numpy_and_ignores_nan():
    from analysis.stats.frame import percentile_interval

    rng = np.random.default_rng(0)
    draws = rng.normal(size=(501, 4))
    draws[::7, 1] = np.nan
    draws[:, 3] = np.nan
    low, high = percentile_interval(draws, 0.05)
    for j in range(3):
        column = draws[:, j][~np.isnan(draws[:, j])]
        assert low[j] == pytest.approx(np.quantile(column, 0.025))
        assert high[j] == pytest.approx(np.quantile(column, 0.975))
    assert np.isnan(low[3]) and np.isnan(high[3])


def test_holm_matches_statsmodels():
    from analysis.stats.frame import holm

    p = np.array([0.01, 0.04, 0.03, 0.005, 0.5, 0.04])
    assert np.allclose(holm(p), multipletests(p, method="holm")[1])
