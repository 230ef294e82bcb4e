"""Error rates of the design-aware MRMC analysis, longer than the suite's checks.

Fixed seeds. Prints, with binomial standard errors:
- type I error of aided vs unaided (random readers, OR/Hillis by X-ray), 6 readers x 50 X-rays
  x 4 questions, 20,000 simulated studies (the suite runs 3,000); goal <= 0.06;
- the same for a split-plot design (8 readers, 60 X-rays, 2 groups), 5,000 studies;
- predicted (Hillis-Obuchowski-Berbaum) vs simulated power for 6 x 50 and 10 x 100.
Run: .venv/bin/python benchmarks/design_type1_bench.py [--quick]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from analysis.stats import LatentModel, Pilot, or_design, pilot_power, simulate_cube


def rate(hits: int, n: int) -> str:
    p = hits / n
    return f"{p:.4f} (SE {np.sqrt(p * (1 - p) / n):.4f}, n = {n})"


def type_one(n: int, readers: int, xrays: int, groups: int, seed: int) -> tuple[int, int]:
    rng = np.random.default_rng(seed)
    random = fixed = 0
    for _ in range(n):
        correct, counted, rg, cg = simulate_cube(rng, LatentModel(), readers, xrays, 4, groups)
        result = or_design(correct, counted, reader_groups=rg, case_groups=cg)
        random += result.random.p_value < 0.05
        fixed += result.fixed.p_value < 0.05
    return random, fixed


def main() -> int:
    quick = "--quick" in sys.argv
    scale = 10 if quick else 1
    start = time.perf_counter()
    n = 20_000 // scale
    random, fixed = type_one(n, 6, 50, 1, 20261125)
    ok = random / n <= 0.06
    print(f"crossover 6 x 50 x 4, type I (random readers): {rate(random, n)}  goal <= 0.06")
    print(f"  fixed readers (generalises to these readers only): {rate(fixed, n)}")
    n = 5_000 // scale
    random, _ = type_one(n, 8, 60, 2, 7)
    ok &= random / n <= 0.06
    print(f"split-plot 8 readers / 60 X-rays / 2 groups, type I: {rate(random, n)}")
    rng = np.random.default_rng(11)
    model = LatentModel(effect=0.25)
    pilots = [or_design(*simulate_cube(rng, model, 6, 50, 4)[:2]) for _ in range(2000 // scale)]
    names = ("var_tr", "var", "cov1", "cov2", "cov3")
    pilot = Pilot(
        *(float(np.mean([getattr(p.components, k) for p in pilots])) for k in names), cases=50
    )
    effect = float(np.mean([p.random.estimate for p in pilots]))
    hits = sum(p.random.p_value < 0.05 for p in pilots)
    print(
        f"power 6 x 50 (effect {effect:.4f}): predicted {pilot_power(pilot, effect, 6, 50):.3f}, "
        f"simulated {rate(hits, len(pilots))}"
    )
    larger = [or_design(*simulate_cube(rng, model, 10, 100, 4)[:2]) for _ in range(1000 // scale)]
    hits = sum(p.random.p_value < 0.05 for p in larger)
    print(
        f"power 10 x 100: predicted {pilot_power(pilot, effect, 10, 100):.3f}, "
        f"simulated {rate(hits, len(larger))}"
    )
    print(f"{time.perf_counter() - start:.0f} s")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
