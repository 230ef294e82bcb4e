"""Accuracy tables + all six kappa matrices at benchmark scale, against a scikit-learn loop.

41,007 questions (the private test split) x 11 raters (3 readers, 8 models) with realistic task
proportions and some missing answers. Checks agreement to 1e-12 and prints the speed-ups of
the documented ways to call the functions:
- "prepared": `p = stats.prepare(df)`, then `accuracy_table(p)` and `kappa_matrix(p, task=t)`
  for "All" and each task (the frame is checked and coded once);
- "one pass": `accuracy_table(df)` + `kappa_matrices(df)` (two preparations).
Goal: >= 20x faster than looping sklearn.metrics.cohen_kappa_score.
Then runs the page/ZIP benchmark (benchmarks/analysis_page_bench.py) unless --stats-only.
Run: .venv/bin/python benchmarks/analysis_bench.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.metrics import cohen_kappa_score

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from analysis import stats

N_QUESTIONS = 41_007
RATERS = [f"resident {i}" for i in (1, 2, 3)] + [f"model {i}" for i in range(1, 9)]
TASKS = {
    "Presence Assessment": 0.38,
    "Negation Assessment": 0.18,
    "Differential Diagnosis": 0.17,
    "Location and Distribution Assessment": 0.20,
    "Geometric Information Assessment": 0.07,
}


def make_frame(seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    letters = np.array(stats.LETTERS)
    truth = letters[rng.integers(0, 4, N_QUESTIONS)]
    tasks = rng.choice(list(TASKS), size=N_QUESTIONS, p=list(TASKS.values()))
    ids = np.array([f"q{i:06d}" for i in range(N_QUESTIONS)])
    frames = []
    for r, rater in enumerate(RATERS):
        skill = 0.55 + 0.03 * r
        right = rng.random(N_QUESTIONS) < skill
        answer = np.where(right, truth, letters[rng.integers(0, 4, N_QUESTIONS)]).astype(object)
        answer[rng.random(N_QUESTIONS) < 0.01] = None
        frames.append(
            pd.DataFrame(
                {
                    "question_id": ids,
                    "rater": rater,
                    "answer": answer,
                    "correct_answer": truth,
                    "task": tasks,
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


def ours(df: pd.DataFrame):
    table = stats.accuracy_table(df)
    matrices = stats.kappa_matrices(df)
    return table, matrices


def prepared_calls(df: pd.DataFrame):
    prepared = stats.prepare(df)
    table = stats.accuracy_table(prepared)
    matrices = {stats.ALL: stats.kappa_matrix(prepared)}
    for task in sorted(TASKS):
        matrices[task] = stats.kappa_matrix(prepared, task=task)
    return table, matrices


def sklearn_loop(df: pd.DataFrame):
    wide = df.pivot(index="question_id", columns="rater", values="answer")
    task_of = df.drop_duplicates("question_id").set_index("question_id")["task"]
    task_of = task_of.reindex(wide.index)
    out = {}
    for name in [stats.ALL, *sorted(TASKS)]:
        part = wide if name == stats.ALL else wide[task_of.to_numpy() == name]
        matrix = pd.DataFrame(np.nan, index=RATERS, columns=RATERS)
        for i, a in enumerate(RATERS):
            for b in RATERS[i + 1 :]:
                both = part[[a, b]].dropna()
                value = cohen_kappa_score(both[a].to_numpy(), both[b].to_numpy())
                matrix.loc[a, b] = matrix.loc[b, a] = value
        out[name] = matrix
    return out


def best_of(fn, *args, repeat: int = 5) -> tuple[float, object]:
    best, result = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn(*args)
        best = min(best, time.perf_counter() - t0)
    return best, result


def main() -> int:
    df = make_frame()
    print(f"{N_QUESTIONS} questions x {len(RATERS)} raters = {len(df)} rows")
    t_prepared, (table, matrices) = best_of(prepared_calls, df)
    t_ours, (table2, matrices2) = best_of(ours, df)
    t_loop, reference = best_of(sklearn_loop, df, repeat=1)
    worst = 0.0
    for name, ref in reference.items():
        off = ~np.eye(len(RATERS), dtype=bool)
        for got in (matrices[name], matrices2[name]):
            difference = np.abs(got.to_numpy()[off] - ref.to_numpy()[off])
            worst = max(worst, float(np.nanmax(difference)))
    assert worst < 1e-12, worst
    assert len(table) == len(table2) == len(RATERS) * (len(TASKS) + 1)
    print(f"prepared once + accuracy_table + 6 kappa_matrix calls: {t_prepared:.3f} s")
    print(f"accuracy_table(df) + kappa_matrices(df):              {t_ours:.3f} s")
    print(f"sklearn loop ({len(reference)} x 55 pairs):                     {t_loop:.3f} s")
    speedup = t_loop / t_prepared
    print(
        f"max |difference| {worst:.1e}; speed-up {speedup:.1f}x prepared, "
        f"{t_loop / t_ours:.1f}x one pass (goal >= 20x)"
    )
    code = 0 if speedup >= 20 else 1
    if "--stats-only" not in sys.argv:
        import subprocess

        page = Path(__file__).with_name("analysis_page_bench.py")
        code |= subprocess.run([sys.executable, str(page)]).returncode
    return code


if __name__ == "__main__":
    sys.exit(main())
