"""Sampling: proportional allocation, at least one per stratum, determinism, one per case."""

from collections import Counter

import pytest

from readerstudy.sampling import Candidate, SamplingError, allocate, reader_order, sample


def pool(sizes: dict[str, int], questions_per_case: int = 1) -> list[Candidate]:
    out = []
    for stratum, size in sizes.items():
        for i in range(size):
            out.append(
                Candidate(f"{stratum}-{i:04d}", stratum, f"{stratum}-c{i // questions_per_case}")
            )
    return out


def test_largest_remainder_allocation():
    # 200 of 1000: quotas 80, 50, 40, 20, 10 are exact.
    sizes = {"a": 400, "b": 250, "c": 200, "d": 100, "e": 50}
    assert allocate(sizes, 200) == {"a": 80, "b": 50, "c": 40, "d": 20, "e": 10}
    # 10 of 7/2/1: quotas 7.0, 2.0, 1.0; 3 of 7/2/1 -> 2.1, 0.6, 0.3: floors 2,0,0,
    # one remainder seat to b (0.6), then c is raised to 1 at the expense of a.
    assert allocate({"a": 7, "b": 2, "c": 1}, 3) == {"a": 1, "b": 1, "c": 1}
    assert allocate({"a": 70, "b": 20, "c": 10}, 10) == {"a": 7, "b": 2, "c": 1}


def test_every_stratum_gets_at_least_one():
    alloc = allocate({"big": 10_000, "tiny": 3}, 20)
    assert alloc["tiny"] == 1 and alloc["big"] == 19


def test_allocation_errors_are_clear():
    with pytest.raises(SamplingError, match="only 5 are available"):
        allocate({"a": 5}, 6)
    with pytest.raises(SamplingError, match="each needs at least one"):
        allocate({"a": 5, "b": 5, "c": 5}, 2)


def test_sample_is_proportional_and_deterministic():
    candidates = pool(
        {"presence": 600, "negation": 200, "differential": 100, "location": 60, "geometric": 40}
    )
    first = sample(candidates, 100, seed=42, stratified=True, one_per_case=False)
    again = sample(list(reversed(candidates)), 100, seed=42, stratified=True, one_per_case=False)
    other = sample(candidates, 100, seed=43, stratified=True, one_per_case=False)
    assert first == again
    assert first != other
    assert len(set(first)) == 100
    counts = Counter(qid.split("-")[0] for qid in first)
    assert counts == {
        "presence": 60,
        "negation": 20,
        "differential": 10,
        "location": 6,
        "geometric": 4,
    }


def test_one_per_case_never_takes_two_questions_on_one_xray():
    candidates = pool({"a": 300, "b": 100}, questions_per_case=4)  # 75 + 25 cases
    chosen = sample(candidates, 60, seed=1, stratified=True, one_per_case=True)
    by_id = {c.question_id: c for c in candidates}
    cases = [by_id[q].case_id for q in chosen]
    assert len(cases) == len(set(cases)) == 60


def test_one_per_case_fails_clearly_when_impossible():
    candidates = pool({"a": 40}, questions_per_case=4)  # 10 cases
    with pytest.raises(SamplingError, match="only 10 cases"):
        sample(candidates, 11, seed=1, stratified=False, one_per_case=True)


def test_unstratified_sample():
    candidates = pool({"a": 50, "b": 50})
    chosen = sample(candidates, 10, seed=3, stratified=False, one_per_case=False)
    assert len(chosen) == 10


def test_reader_order_is_stable_per_reader_and_differs_between_readers():
    a = reader_order(50, study_seed=1, study_id=9, reader_id=1)
    assert a == reader_order(50, study_seed=1, study_id=9, reader_id=1)
    assert a != reader_order(50, study_seed=1, study_id=9, reader_id=2)
    assert sorted(a) == list(range(50))
