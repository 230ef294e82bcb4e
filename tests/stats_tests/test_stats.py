"""analysis.stats against hand-computed values, published values, scikit-learn and statsmodels.

No database: these are pure functions on DataFrames.
"""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import cohens_kappa
from statsmodels.stats.proportion import proportion_confint

from analysis import stats

ORACLES = Path(__file__).resolve().parents[1] / "resources" / "oracles"


def long_frame(answers: dict[str, list], truth: list[str], tasks: list[str] | None = None):
    rows = []
    for rater, values in answers.items():
        for i, value in enumerate(values):
            rows.append(
                {
                    "question_id": f"q{i}",
                    "rater": rater,
                    "answer": value,
                    "correct_answer": truth[i],
                    "task": (tasks or ["T"] * len(truth))[i],
                }
            )
    return pd.DataFrame(rows)


def random_frame(n=300, raters=5, seed=0, missing=0.1, tasks=("T1", "T2", "T3")):
    rng = np.random.default_rng(seed)
    truth = rng.choice(list("ABCD"), size=n)
    rows = []
    for r in range(raters):
        skill = 0.4 + 0.1 * r
        for q in range(n):
            answer = truth[q] if rng.random() < skill else rng.choice(list("ABCD"))
            if rng.random() < missing:
                answer = None
            rows.append(
                {
                    "question_id": f"q{q}",
                    "rater": f"r{r}",
                    "answer": answer,
                    "correct_answer": truth[q],
                    "task": tasks[q % len(tasks)],
                }
            )
    return pd.DataFrame(rows)


def test_paper_accuracies_with_two_cases_dropped():
    # ReXVQA reader study, 200 X-rays with two unanswered: MedGemma 83.84% (166/198) and the
    # best resident 77.27% (153/198) when missing answers are excluded.
    truth = ["A"] * 200
    medgemma = ["A"] * 166 + ["B"] * 32 + [None, None]
    resident = ["A"] * 153 + ["B"] * 45 + [None, None]
    df = long_frame({"MedGemma": medgemma, "best resident": resident}, truth)
    excluded = stats.accuracy_table(df, missing="exclude").query("task == 'All'")
    rows = excluded.set_index("rater")
    assert (rows.loc["MedGemma", "n"], rows.loc["MedGemma", "correct"]) == (198, 166)
    assert round(rows.loc["MedGemma", "accuracy"] * 100, 2) == 83.84
    assert (rows.loc["best resident", "n"], rows.loc["best resident", "correct"]) == (198, 153)
    assert round(rows.loc["best resident", "accuracy"] * 100, 2) == 77.27
    wrong = stats.accuracy_table(df, missing="wrong").query("task == 'All'").set_index("rater")
    assert (wrong.loc["MedGemma", "n"], wrong.loc["MedGemma", "accuracy"]) == (200, 0.83)


def test_accuracy_table_per_task_with_wilson_and_clopper_pearson():
    """One question per X-ray (no case_id): the plain binomial intervals, design effect 1."""
    df = long_frame(
        {"r1": ["A", "B", "C", "D", "A"], "r2": ["A", "A", "A", "A", None]},
        truth=["A", "B", "C", "A", "A"],
        tasks=["X", "X", "Y", "Y", "Y"],
    )
    table = stats.accuracy_table(df)
    assert list(table.columns) == [
        *["rater", "task", "n", "x_rays", "correct", "accuracy", "ci_low", "ci_high"],
        *["deff", "n_eff", "note"],
    ]
    assert table[["rater", "task", "n", "correct"]].values.tolist() == [
        ["r1", "X", 2, 2],
        ["r1", "Y", 3, 2],
        ["r1", "All", 5, 4],
        ["r2", "X", 2, 1],
        ["r2", "Y", 3, 1],
        ["r2", "All", 5, 2],
    ]
    low, high = proportion_confint(4, 5, method="wilson")
    r1_all = table.iloc[2]
    assert r1_all["ci_low"] == pytest.approx(low) and r1_all["ci_high"] == pytest.approx(high)
    cp = stats.accuracy_table(df, method="clopper-pearson").iloc[2]
    low, high = proportion_confint(4, 5, method="beta")
    assert cp["ci_low"] == pytest.approx(low) and cp["ci_high"] == pytest.approx(high)


def test_absent_rows_count_as_missing():
    df = long_frame({"r1": ["A", "A"], "r2": ["A", "A"]}, ["A", "A"])
    df = df[~((df["rater"] == "r2") & (df["question_id"] == "q1"))]
    table = stats.accuracy_table(df, missing="wrong")
    assert table.query("rater == 'r2' and task == 'All'")["n"].item() == 2
    assert table.query("rater == 'r2' and task == 'All'")["correct"].item() == 1


def test_duplicate_rows_are_rejected():
    df = long_frame({"r1": ["A"]}, ["A"])
    with pytest.raises(stats.AnalysisInputError, match="more than one row"):
        stats.accuracy_table(pd.concat([df, df]))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_kappa_matrix_matches_sklearn_with_pairwise_deletion(seed):
    df = random_frame(seed=seed)
    matrix = stats.kappa_matrix(df)
    wide = df.pivot(index="question_id", columns="rater", values="answer")
    for a in wide.columns:
        assert matrix.loc[a, a] == pytest.approx(1.0)
        for b in wide.columns.drop(a):
            both = wide[[a, b]].dropna()
            expected = cohen_kappa_score(both[a], both[b])
            assert matrix.loc[a, b] == pytest.approx(expected, abs=1e-12)


def test_kappa_per_task_and_correct_scale_match_sklearn():
    df = random_frame(seed=5)
    sub = df[df["task"] == "T2"]
    matrix = stats.kappa_matrix(df, task="T2", scale="correct")
    wide = sub.assign(c=(sub["answer"] == sub["correct_answer"]).where(sub["answer"].notna()))
    wide = wide.pivot(index="question_id", columns="rater", values="c")
    both = wide[["r0", "r3"]].dropna()
    expected = cohen_kappa_score(both["r0"].astype(int), both["r3"].astype(int))
    assert matrix.loc["r0", "r3"] == pytest.approx(expected, abs=1e-12)
    assert list(matrix.index) == list(matrix.columns) == ["r0", "r1", "r2", "r3", "r4"]


def test_kappa_undefined_is_nan_not_an_error():
    df = long_frame(
        {"r1": ["A", "A", "A"], "r2": ["A", "A", "A"], "r3": ["A", "B", "C"]}, ["A", "B", "C"]
    )
    matrix = stats.kappa_matrix(df)
    assert np.isnan(matrix.loc["r1", "r2"])
    assert matrix.loc["r3", "r3"] == pytest.approx(1.0)


def test_kappa_matches_statsmodels_sas_example():
    # statsmodels' SAS example: table [[0,4,1],[0,8,0],[0,1,5]]: kappa 0.4842.
    table = np.array([[0, 4, 1], [0, 8, 0], [0, 1, 5]])
    rows = []
    q = 0
    for i, a in enumerate("ABC"):
        for j, b in enumerate("ABC"):
            for _ in range(table[i, j]):
                rows += [
                    {
                        "question_id": q,
                        "rater": "x",
                        "answer": a,
                        "correct_answer": "A",
                        "task": "T",
                    },
                    {
                        "question_id": q,
                        "rater": "y",
                        "answer": b,
                        "correct_answer": "A",
                        "task": "T",
                    },
                ]
                q += 1
    kappa = stats.kappa_matrix(pd.DataFrame(rows)).loc["x", "y"]
    assert kappa == pytest.approx(0.4842, abs=5e-5)
    assert kappa == pytest.approx(cohens_kappa(table).kappa, abs=1e-12)


def test_kappa_matrices_has_all_tasks_and_each_task_named_as_the_accuracy_table_names_them():
    frame = random_frame(seed=3)
    matrices = stats.kappa_matrices(frame)
    assert list(matrices) == [stats.ALL, "T1", "T2", "T3"]
    assert set(stats.accuracy_table(frame)["task"]) == set(matrices)


def test_fleiss_kappa_on_fleiss_1971():
    data = pd.read_csv(ORACLES / "fleiss1971_diagnoses.csv")
    long = data.melt(id_vars="patient", var_name="rater", value_name="answer")
    long = long.rename(columns={"patient": "question_id"})
    assert stats.fleiss_kappa(long) == pytest.approx(0.4302445, abs=1e-7)


def test_mcnemar_exact():
    # a right on 10 where b is wrong; b right on 2 where a is wrong; 20 both right.
    truth = ["A"] * 40
    a = ["A"] * 20 + ["A"] * 10 + ["B"] * 2 + ["B"] * 8
    b = ["A"] * 20 + ["B"] * 10 + ["A"] * 2 + ["B"] * 8
    df = long_frame({"a": a, "b": b}, truth)
    table = stats.mcnemar_table(df, "a", "b")
    assert table.to_numpy().tolist() == [[20, 10], [2, 8]]
    result = stats.mcnemar_test(df, "a", "b")
    from scipy.stats import binomtest

    assert result.pvalue == pytest.approx(binomtest(2, 12, 0.5).pvalue)
    assert result.pvalue == pytest.approx(0.03857421875)


def test_failed_extractions():
    df = long_frame({"m": ["A", None, None, "B"]}, ["A", "A", "A", "A"])
    out = stats.failed_extractions(df)
    assert out[["rater", "n", "failed"]].values.tolist() == [["m", 4, 2]]
    assert out["rate"].item() == 0.5


def test_accuracy_by_category():
    df = long_frame({"r": ["A", "B", "A"]}, ["A", "A", "A"])
    df["category"] = ["Lung", "Lung", "Bone"]
    table = stats.accuracy_table(df, by="category")
    assert table[["category", "n", "correct"]].values.tolist() == [
        ["Bone", 1, 1],
        ["Lung", 2, 1],
        ["All", 3, 2],
    ]
