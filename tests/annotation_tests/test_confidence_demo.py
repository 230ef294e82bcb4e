"""The demo's rated study gives the analysis ratings worth analysing: each simulated reader's
(answer, confidence) on the binary questions, made ROC ratings by the vocabulary's one rule,
tell present from absent better than chance, and not equally well."""

import pytest

from annotation.models import Answer
from readerstudy.demo_roc import RATED_READERS, RATED_SLUG
from readerstudy.models import ReaderStudy

pytestmark = pytest.mark.django_db


def empirical_auc(positives: list[float], negatives: list[float]) -> float:
    """P(a positive rates above a negative), ties counting a half (Mann-Whitney)."""
    pairs = [(p > n) + 0.5 * (p == n) for p in positives for n in negatives]
    return sum(pairs) / len(pairs)


def test_the_simulated_readers_ratings_separate_present_from_absent(demo):
    study = ReaderStudy.objects.get(slug=RATED_SLUG)
    scale = study.scale
    aucs = {}
    for username in RATED_READERS[1:]:
        ratings: dict[bool, list[float]] = {True: [], False: []}
        answers = Answer.objects.filter(item__study=study, reader__username=username)
        for answer in answers.select_related("item__question"):
            question = answer.item.question
            if not question.binary:
                continue
            present = answer.choice == question.present_option
            rating = scale.roc_rating(present=present, confidence=answer.confidence)
            ratings[question.correct == question.present_option].append(rating)
        aucs[username] = empirical_auc(ratings[True], ratings[False])
    assert all(auc > 0.6 for auc in aucs.values()), aucs
    assert len(set(aucs.values())) > 1, aucs
