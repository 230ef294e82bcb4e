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


def session_order(n_items: int, *, order_seed: int, session: int) -> list[int]:
    """A designed study's per-reader, per-session permutation, from the reader's recorded seed."""
    order = list(range(n_items))
    random.Random(f"readerstudy:session:{order_seed}:{session}").shuffle(order)
    return order


def option_order(*, order_seed: int, question_id: int) -> list[int]:
    """The screen order of a question's four options for one reader: screen position ->
    canonical index. Seeded by the reader's recorded seed and the question, so it is the same
    in both sessions and on every page and API call."""
    order = [0, 1, 2, 3]
    random.Random(f"readerstudy:options:{order_seed}:{question_id}").shuffle(order)
    return order


def order_seed_for(*, study_seed: int, study_id: int, reader_id: int) -> int:
    """A reader's order seed: derived, not drawn, so the assignment is reproducible."""
    return random.Random(f"readerstudy:reader:{study_id}:{study_seed}:{reader_id}").getrandbits(62)


def split_groups(
    candidates: list[Candidate], *, groups: int, anchor: int, seed: int
) -> dict[str, int | None]:
    """Split a study's questions into `groups` split-plot groups plus an anchor of exactly
    `anchor` questions (value None) read by every group.

    Whole X-rays stay together (a case's questions share one group or the anchor), and both the
    anchor and the groups are dealt stratum by stratum, so each gets a share of every task.
    """
    if groups < 2:
        raise SamplingError("split-plot needs at least 2 groups")
    by_case: dict[str, list[Candidate]] = defaultdict(list)
    for candidate in sorted(candidates, key=lambda c: c.question_id):
        by_case[candidate.case_id].append(candidate)
    if anchor > len(candidates):
        raise SamplingError(
            f"the anchor ({anchor}) is larger than the sample ({len(candidates)} questions)"
        )
    rng = random.Random(f"readerstudy:groups:{seed}")
    # A case's stratum: its questions' most common stratum (ties: the first by name).
    strata: dict[str, list[str]] = defaultdict(list)
    for case_id in sorted(by_case):
        names = sorted(c.stratum for c in by_case[case_id])
        strata[max(names, key=names.count)].append(case_id)
    dealt: list[str] = []  # cases interleaved across strata: a stratified deal order
    queues = {key: rng.sample(cases, len(cases)) for key, cases in sorted(strata.items())}
    while any(queues.values()):
        for key in sorted(queues):
            if queues[key]:
                dealt.append(queues[key].pop())
    out: dict[str, int | None] = {}
    in_anchor, rest = 0, []
    for case_id in dealt:
        size = len(by_case[case_id])
        if in_anchor + size <= anchor:
            in_anchor += size
            out.update({c.question_id: None for c in by_case[case_id]})
        else:
            rest.append(case_id)
    if in_anchor != anchor:
        raise SamplingError(
            f"cannot make an anchor of exactly {anchor} questions without splitting an X-ray's "
            f"questions (got {in_anchor}); choose another anchor size"
        )
    if len(rest) < groups:
        raise SamplingError(
            f"{groups} groups need at least {groups} X-rays outside the anchor; "
            f"there are {len(rest)}"
        )
    sizes = [0] * groups
    for case_id in rest:
        group = min(range(groups), key=lambda g: (sizes[g], g))
        sizes[group] += len(by_case[case_id])
        out.update({c.question_id: group + 1 for c in by_case[case_id]})
    return out


def balanced_choice(counts: dict, tiebreak: dict | None = None):
    """The key with the smallest count (then smallest tiebreak count, then first in order):
    how a new reader is placed so that arms and groups stay balanced within one."""
    tiebreak = tiebreak or {}
    keys = list(counts)
    return min(keys, key=lambda k: (counts[k], tiebreak.get(k, 0), keys.index(k)))
