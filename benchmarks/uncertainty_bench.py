"""Coverage and type I error of the uncertainty methods at the ReXVQA reader study's scale.

The long version of tests/stats_tests/test_uncertainty.py's bounded simulations (fixed
seeds): accuracy-CI coverage (clustered Wilson and Clopper-Pearson on the effective sample
size, and plain Wilson for contrast) over X-rays x questions per X-ray, accuracy and
within-X-ray correlation; the clustered paired comparison's type I error; and the OR/Hillis
random-readers test's type I error by number of readers, with the fixed-readers test beside.
Goals: coverage >= 0.93 and type I <= 0.06 for the clustered methods.
Run: .venv/bin/python benchmarks/uncertainty_bench.py [--reps N]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from scipy import stats as sps

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from analysis.stats import (
    ai_versus_readers,
    clustered_paired_difference,
    clustered_proportion_ci,
)


def coverage(reps: int) -> None:
    print("Accuracy CI coverage (nominal 0.95)")
    print(
        f"{'X-rays':>6} {'q/X-ray':>7} {'p':>5} {'rho':>4} {'Wilson*':>8} {'CP*':>6} {'plain':>6}"
    )
    z = sps.norm.ppf(0.975)
    for c, m in ((40, 4), (200, 4), (40, 1), (20, 6)):
        for p in (0.6, 0.75, 0.9):
            for rho in (0.2, 0.5, 0.8):
                rng = np.random.default_rng(hash((c, m, p, rho)) % 2**32)
                a, b = p * (1 - rho) / rho, (1 - p) * (1 - rho) / rho
                correct = rng.binomial(m, rng.beta(a, b, size=(c, reps))).astype(float)
                counted = np.full_like(correct, m)
                out = []
                for method in ("wilson", "clopper-pearson"):
                    ci = clustered_proportion_ci(correct, counted, method=method)
                    out.append(np.mean((ci.ci_low <= p) & (p <= ci.ci_high)))
                x, n = correct.sum(axis=0), c * m
                centre = (x + z * z / 2) / (n + z * z)
                half = z / (n + z * z) * np.sqrt(x * (n - x) / n + z * z / 4)
                out.append(np.mean((centre - half <= p) & (p <= centre + half)))
                print(f"{c:>6} {m:>7} {p:>5} {rho:>4} " + " ".join(f"{v:>7.3f}" for v in out))


def paired(reps: int) -> None:
    print("\nClustered paired comparison: type I error (nominal 0.05)")
    for c, m, shared, own in (
        (40, 4, 1.5, 1.0),
        (40, 4, 2.5, 0.5),
        (200, 4, 1.5, 1.0),
        (20, 4, 1.5, 1.0),
    ):
        rng = np.random.default_rng(c * 1000 + m)
        rejected = 0
        for _ in range(reps):
            u = rng.normal(0, shared, c)
            x = [
                rng.binomial(m, 1 / (1 + np.exp(-(1.1 + u + rng.normal(0, own, c))))) for _ in "ab"
            ]
            rejected += clustered_paired_difference(x[0] - x[1], np.full(c, m)).p_value < 0.05
        print(f"{c} X-rays x {m}, X-ray sd {shared}, rater x X-ray sd {own}: {rejected / reps:.3f}")


def readers(reps: int) -> None:
    print(
        "\nAI vs readers, AI equal to the reader population: rejection rate of random readers"
        " (OR/Hillis; type I) and fixed readers (FRRC tests these readers' own mean, which"
        " differs from the AI's when reader skill varies: not a type I error)"
    )
    for r in (2, 3, 4, 6, 10):
        rng = np.random.default_rng(r)
        random_rej = fixed_rej = 0
        for _ in range(reps):
            u = rng.normal(0, 1.0, 200)
            skill = rng.normal(0, 0.3, r)
            readers_ = rng.random((r, 200)) < 1 / (1 + np.exp(-(1.0 + u + skill[:, None])))
            ai = rng.random(200) < 1 / (1 + np.exp(-(1.0 + u)))
            # centre the truth: the AI's expected accuracy equals the readers' average
            result = ai_versus_readers(readers_, ai, cases=np.repeat(np.arange(50), 4))
            random_rej += result.p_value < 0.05
            fixed_rej += result.p_fixed < 0.05
        print(f"{r:>2} readers: random {random_rej / reps:.3f}  fixed {fixed_rej / reps:.3f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=5000)
    args = parser.parse_args()
    coverage(args.reps)
    paired(args.reps)
    readers(max(args.reps // 5, 200))
