"""The design service: every rule refuses bad input in words and writes nothing."""

from __future__ import annotations

from collections import Counter

import pytest
from django.db import IntegrityError, transaction

from annotation.services import answer_submit
from readerstudy.design.rules import Design, DesignError
from readerstudy.design.services import study_design_set
from readerstudy.models import AuditEvent, ItemAid, Question, ReaderAssignment, ReaderStudy
from readerstudy.sampling import Candidate, SamplingError, split_groups
from readerstudy.selectors import design_sentence
from tests.design_tests.conftest import add_model, add_readers, crossover
from tests.factories import build_study


def _unchanged(study):
    fresh = ReaderStudy.objects.get(pk=study.pk)
    assert fresh.arms == "unaided" and fresh.aid_model == "" and fresh.reader_groups == 0
    assert not ItemAid.objects.filter(item__study=study).exists()
    assert not AuditEvent.objects.filter(study=study, action="design.set").exists()


@pytest.mark.parametrize(
    ("design", "message"),
    [
        (Design(arms="unaided,aided"), "needs an AI model"),
        (crossover(aid_model="Nobody"), "no AI model named 'Nobody'"),
        (crossover(aid_mode="sometimes"), "aid mode must be one of"),
        (crossover(washout_days=-1), "washout cannot be negative (got -1 days)"),
        (crossover(washout_days=366), "washout is at most 365 days (got 366)"),
        (Design(groups=3), "3 groups are more than the 2 readers"),
        (Design(groups=1), "at least 2"),
        (Design(groups=2, anchor=9), "anchor (9) is larger than the sample (8)"),
        (Design(anchor=2), "anchor set needs split-plot groups"),
        (Design(arms="both"), "arms must be one of"),
        (Design(aid_model="MedGemma"), "need an aided arm"),
    ],
)
def test_bad_designs_are_refused_in_words_and_write_nothing(design_study, design, message):
    add_readers(design_study, 2)
    with pytest.raises(DesignError, match=message.replace("(", r"\(").replace(")", r"\)")):
        study_design_set(study=design_study, design=design)
    _unchanged(design_study)
    assert not ReaderAssignment.objects.filter(study=design_study).exists()


def test_groups_larger_than_the_x_rays_are_refused(db):
    """Groups are dealt whole X-rays: 3 groups of 4 questions on 2 X-rays are refused by the
    X-rays, in the analysis' words (not "the 4 cases")."""
    study = build_study(4)
    items = list(study.items.select_related("question"))
    for item in items[2:]:  # four questions on two X-rays
        Question.objects.filter(pk=item.question_id).update(case=items[0].question.case)
    add_readers(study, 5)
    with pytest.raises(DesignError, match="3 groups are more than the 2 X-rays"):
        study_design_set(study=study, design=Design(groups=3))
    _unchanged(study)


def test_the_design_sentence_counts_questions_on_x_rays(db):
    """The design sentence names the sample as the analysis and the README do: questions on
    X-rays (issue 23 walk-through: "5 cases" beside "5 X-rays, 5 questions")."""
    study = build_study(4)
    items = list(study.items.select_related("question"))
    Question.objects.filter(pk=items[1].question_id).update(case=items[0].question.case)
    assert design_sentence(study).endswith(", 4 questions on 3 X-rays")
    assert " cases" not in design_sentence(study)


def test_a_model_without_predictions_for_the_sample_is_refused_with_the_count(db):
    study = build_study(6)
    other = build_study(2)
    add_model(other, "MedGemma")  # predictions, but for another dataset's questions
    add_model(study, "Empty", skip=range(6))
    with pytest.raises(DesignError, match="'Empty' has predictions for 0 of the 6 sampled"):
        study_design_set(study=study, design=crossover(aid_model="Empty"))
    _unchanged(study)


def test_crossover_stores_the_aid_exactly_as_imported(design_study):
    add_model(design_study, "Partial", skip={0}, failed={1}, words=False)
    result = study_design_set(study=design_study, design=crossover(aid_model="Partial"))
    assert (result.aid_usable, result.aid_missing) == (6, 2)
    aid = {a.item.position: a for a in ItemAid.objects.filter(item__study=design_study)}
    assert not aid[0].usable and not aid[1].usable and aid[0].letter == ""
    item = design_study.items.get(position=2)
    assert aid[2].letter == item.question.correct
    assert aid[2].option_text == item.question.options["ABCD".index(aid[2].letter)]
    assert aid[2].rationale == ""  # the model gave only a letter: no words to show
    study_design_set(study=design_study, design=crossover())
    worded = ItemAid.objects.get(item=item)
    assert worded.rationale == f"I think the answer is ({item.question.correct})."


def test_readers_are_counterbalanced_within_one_and_late_readers_keep_the_balance(design_study):
    add_readers(design_study, 3)
    study_design_set(study=design_study, design=crossover())
    for extra in range(1, 5):
        add_readers(design_study, 1, prefix=f"late{extra}-")
        first = Counter(
            ReaderAssignment.objects.filter(study=design_study).values_list("first_arm", flat=True)
        )
        assert abs(first["unaided"] - first["aided"]) <= 1, first
    assert sum(first.values()) == 7
    # Recorded and deterministic: the same inputs give the same assignment and seeds.
    seeds = list(ReaderAssignment.objects.filter(study=design_study).values_list("order_seed"))
    assert len(set(seeds)) == 7


def test_groups_are_balanced_and_arms_balanced_within_groups(db):
    study = build_study(10)
    add_model(study)
    add_readers(study, 8)
    study_design_set(study=study, design=crossover(groups=2, anchor=2))
    rows = list(
        ReaderAssignment.objects.filter(study=study).values_list("reader_group", "first_arm")
    )
    assert Counter(g for g, _ in rows) == {1: 4, 2: 4}
    assert Counter(rows) == {(1, "unaided"): 2, (1, "aided"): 2, (2, "unaided"): 2, (2, "aided"): 2}
    assert study.items.filter(anchor=True).count() == 2
    assert Counter(study.items.filter(anchor=False).values_list("case_group", flat=True)) == {
        1: 4,
        2: 4,
    }


def test_the_design_is_frozen_once_anyone_answered(design_study):
    reader = add_readers(design_study, 2)[0]
    study_design_set(study=design_study, design=crossover())
    answer_submit(reader=reader, item=design_study.items.first(), choice="A")
    with pytest.raises(DesignError, match="cannot change: 1 answer is already recorded"):
        study_design_set(study=design_study, design=crossover(washout_days=28))
    assert ReaderStudy.objects.get(pk=design_study.pk).washout_days == 0


def test_the_database_refuses_an_aided_arm_without_a_model_and_a_grouped_anchor(design_study):
    with pytest.raises(IntegrityError), transaction.atomic():
        ReaderStudy.objects.filter(pk=design_study.pk).update(arms="unaided,aided")
    with pytest.raises(IntegrityError), transaction.atomic():
        ReaderStudy.objects.filter(pk=design_study.pk).update(washout_days=-3)
    with pytest.raises(IntegrityError), transaction.atomic():
        design_study.items.filter(position=0).update(anchor=True, case_group=1)


def test_split_keeps_whole_xrays_together_and_an_exact_anchor():
    candidates = [
        Candidate(f"q{i}", ["presence", "location"][i % 2], f"case{i // 2}") for i in range(20)
    ]
    split = split_groups(candidates, groups=3, anchor=4, seed=5)
    assert sum(1 for g in split.values() if g is None) == 4
    by_case: dict[str, set] = {}
    for c in candidates:
        by_case.setdefault(c.case_id, set()).add(split[c.question_id])
    assert all(len(groups) == 1 for groups in by_case.values())
    sizes = Counter(g for g in split.values() if g is not None)
    assert max(sizes.values()) - min(sizes.values()) <= 2  # whole X-rays of two questions
    assert split == split_groups(candidates, groups=3, anchor=4, seed=5)
    with pytest.raises(SamplingError, match="exactly 3 questions without splitting"):
        split_groups(candidates, groups=2, anchor=3, seed=5)


def test_the_admin_cannot_change_a_design_behind_the_design_service(
    design_study, set_design, admin_client
):
    """The design is set only by study_design_set (which refuses once anyone answered): the
    admin's study page shows the design's fields read-only, so a save there cannot flip
    arms, washout or shuffling under readers' answers."""
    set_design(design_study, crossover(washout_days=7))
    url = f"/admin/readerstudy/readerstudy/{design_study.pk}/change/"
    page = admin_client.get(url).content.decode()
    for name in ("arms", "aid_model", "aid_mode", "washout_days", "shuffle_options"):
        assert f'name="{name}"' not in page, name
    assert "unaided,aided" in page  # shown, not editable
