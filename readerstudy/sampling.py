"""Choosing the questions of a reader study: stratified, reproducible, optionally one per case.

Pure functions over plain tuples so the rules can be tested and reasoned about without a
database. Proportional allocation uses the largest-remainder method, then guarantees every
stratum present at least one question (the paper's 200 cases cover all five tasks).
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from dataclasses import dataclass

# A study's seed is stored in a 64-bit signed column; a larger one cannot be kept (PostgreSQL
# refused it with a 500).
SEED_MAX = 2**63 - 1


class SamplingError(ValueError):
    pass


@dataclass(frozen=True)
class Candidate:
    question_id: str
    stratum: str
    case_id: str


def allocate(sizes: dict[str, int], n: int) -> dict[str, int]:
    """Split n over strata in proportion to their sizes (largest remainder, min 1 each)."""
    total = sum(sizes.values())
    if n > total:
        raise SamplingError(f"asked for {n} questions but only {total} are available")
    if n < len(sizes):
        raise SamplingError(
            f"asked for {n} questions but there are {len(sizes)} strata; "
            "each needs at least one (use --stratify none)"
        )
    quotas = {key: n * size / total for key, size in sizes.items()}
    alloc = {key: math.floor(q) for key, q in quotas.items()}
    remainder = n - sum(alloc.values())
    by_remainder = sorted(sizes, key=lambda k: (-(quotas[k] - alloc[k]), k))
    for key in by_remainder[:remainder]:
        alloc[key] += 1
    for key in sorted(sizes):
        if alloc[key] == 0:
            donor = max((k for k in alloc if alloc[k] > 1), key=lambda k: (alloc[k], k))
            alloc[donor] -= 1
            alloc[key] = 1
    return alloc


def sample(
    candidates: list[Candidate], n: int, *, seed: int, stratified: bool, one_per_case: bool
) -> list[str]:
    """Return n question ids, deterministic for (candidates, n, seed, options), in study order."""
    if n <= 0:
        raise SamplingError("the sample size must be positive")
    rng = random.Random(seed)
    pool = sorted(candidates, key=lambda c: c.question_id)
    strata: dict[str, list[Candidate]] = defaultdict(list)
    for candidate in pool:
        strata[candidate.stratum if stratified else "all"].append(candidate)
    for key in sorted(strata):
        rng.shuffle(strata[key])
    if one_per_case:
        cases = {c.case_id for c in pool}
        if n > len(cases):
            raise SamplingError(
                f"asked for {n} questions, one per case, but there are only {len(cases)} cases"
            )
    alloc = allocate({k: len(v) for k, v in strata.items()}, n)
    chosen: list[Candidate] = []
    used_cases: set[str] = set()
    # Smallest strata first: with one question per case they have the fewest alternatives.
    for key in sorted(strata, key=lambda k: (len(strata[k]), k)):
        taken = 0
        for candidate in strata[key]:
            if taken == alloc[key]:
                break
            if one_per_case and candidate.case_id in used_cases:
                continue
            chosen.append(candidate)
            used_cases.add(candidate.case_id)
            taken += 1
        if taken < alloc[key]:
            raise SamplingError(
                f"stratum {key!r} has too few questions on unused cases "
                f"({taken} of {alloc[key]}); lower N or drop --one-per-case"
            )
    ids = [c.question_id for c in chosen]
    rng.shuffle(ids)
    return ids


def reader_order(n_items: int, *, study_seed: int, study_id: int, reader_id: int) -> list[int]:
    """A per-reader permutation of 0..n-1: stable across sessions, different between readers."""
    order = list(range(n_items))
    random.Random(f"readerstudy:{study_id}:{study_seed}:{reader_id}").shuffle(order)
    return order
