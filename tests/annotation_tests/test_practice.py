"""Practice sets (issue 36): what a PI's set may draw, the feedback after each answer, answers
marked practice that no research analysis counts, and "practise my misses" coming back after
its interval with the accuracy of each sitting kept."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from analysis.progress import own_sittings
from analysis.selectors import study_responses
from annotation.models import Answer, ExpertReview, ReaderCompletion
from annotation.practice import (
    plan_sitting_start,
    plan_state,
    practice_pool,
    practice_set_create,
    question_difficulty,
)
from annotation.selectors import item_at
from annotation.services import AnswerRejected, answer_submit, reader_finish
from readerstudy.models import PracticePlan, Question, ReaderStudy, Role, Task
from readerstudy.services.studies import StudyError, membership_add, study_reading_close
from tests.factories import (
    CaseFactory,
    DatasetFactory,
    ImageFactory,
    MembershipFactory,
    QuestionFactory,
    StudyQuestionFactory,
    UserFactory,
    build_study,
    touch_display_files,
)

pytestmark = pytest.mark.django_db


def _bank(n: int = 10):
    """A dataset of `n` questions on `n` X-rays: tasks in turn, keys A-D in turn, each with
    its own explanation."""
    dataset = DatasetFactory(name="teaching file")
    tasks = [Task.PRESENCE, Task.LOCATION]
    questions = []
    for i in range(n):
        case = CaseFactory(dataset=dataset)
        ImageFactory(case=case)
        questions.append(
            QuestionFactory(
                dataset=dataset,
                case=case,
                source_id=f"t{i:02d}",
                task=tasks[i % 2],
                category="Lung" if i < 6 else "Pleura",
                correct="ABCD"[i % 4],
                explanation=f"EXPLANATION-{i:02d}",
            )
        )
    touch_display_files()
    return dataset, questions


@pytest.fixture
def pi(db):
    return UserFactory(username="director")


@pytest.fixture
def resident(db):
    return UserFactory(username="resident")


def _practice_set(dataset, pi, readers=("resident",), n=10, **filters):
    return practice_set_create(
        slug="practice",
        title="Chest practice",
        dataset=dataset,
        n=n,
        creator=pi,
        readers=list(readers),
        **filters,
    ).study


def test_a_practice_set_draws_by_task_category_and_difficulty(pi):
    dataset, questions = _bank()
    assert len(practice_pool(dataset=dataset).question_ids) == 10
    presence = practice_pool(dataset=dataset, tasks=[Task.PRESENCE])
    assert sorted(presence.question_ids) == sorted(q.id for q in questions[::2])
    pleura = practice_pool(dataset=dataset, tasks=[Task.PRESENCE], category="Pleura")
    assert sorted(pleura.question_ids) == [questions[6].id, questions[8].id]
    # Difficulty: the experts' reviews, else the research readers' votes (practice votes never).
    research = build_study(0, dataset=dataset, slug="rated")
    item = StudyQuestionFactory(study=research, question=questions[0], position=0)
    expert = UserFactory(username="expert")
    ExpertReview.objects.create(item=item, expert=expert, difficulty="hard", decision="accept")
    item1 = StudyQuestionFactory(study=research, question=questions[1], position=1)
    for name, vote in (("r1", "easy"), ("r2", "easy"), ("r3", "hard")):
        Answer.objects.create(
            item=item1,
            reader=UserFactory(username=name),
            choice="A",
            difficulty=vote,
            question_version=questions[1].versions.get(number=1),
        )
    judged = question_difficulty([q.id for q in questions])
    assert judged == {questions[0].id: "hard", questions[1].id: "easy"}
    study_reading_close(study=research, actor=pi)  # not being read: its questions may be drawn
    assert practice_pool(dataset=dataset, difficulty="hard").question_ids == [questions[0].id]
    assert len(practice_pool(dataset=dataset, difficulty="unrated").question_ids) == 8


def test_questions_of_research_studies_still_being_read_are_left_out_and_said(pi, resident):
    dataset, questions = _bank()
    research = build_study(0, dataset=dataset, slug="open-research")
    for position, question in enumerate(questions[:4]):
        StudyQuestionFactory(study=research, question=question, position=position)
    reader = UserFactory(username="still_reading")
    MembershipFactory(study=research, user=reader, role=Role.READER)
    pool = practice_pool(dataset=dataset)
    assert len(pool.question_ids) == 6 and pool.in_open_research == 4
    assert pool.words() == (
        "6 questions available (10 match; 4 left out: used in research studies still being read)"
    )
    with pytest.raises(StudyError, match="only 6"):
        _practice_set(dataset, pi, n=10)
    for item in research.items.all():
        answer_submit(reader=reader, item=item, choice="A")
    reader_finish(reader=reader, study=research)  # every reader finished: not open any more
    assert len(practice_pool(dataset=dataset).question_ids) == 10


def test_the_pi_builds_a_set_on_the_page_and_is_told_what_is_left(client, pi, resident):
    from django.contrib.auth.models import Permission

    dataset, _ = _bank()
    pi.user_permissions.add(Permission.objects.get(codename="add_readerstudy"))
    client.force_login(pi)
    form = {
        "title": "Chest practice",
        "dataset": dataset.pk,
        "sample": "4",
        "seed": "0",
        "readers": "resident",
        "misses_unseen": "1",
        "tasks": [Task.PRESENCE],
    }
    counted = client.post(reverse("practice-new"), {**form, "count": "1"})
    assert "5 questions available (5 match)" in counted.content.decode()
    assert not ReaderStudy.objects.filter(slug="chest-practice").exists()
    created = client.post(reverse("practice-new"), form)
    assert created.status_code == 302
    study = ReaderStudy.objects.get(slug="chest-practice")
    assert study.practice and not study.allow_revision and study.misses_unseen == 1
    assert study.items.count() == 4
    assert set(study.items.values_list("question__task", flat=True)) == {Task.PRESENCE}
    assert study.memberships.filter(user=resident, role=Role.READER).exists()
    assert study.memberships.filter(user=pi, role=Role.PI).exists()
    client.force_login(resident)
    assert client.get(reverse("practice-new")).status_code == 403  # no permission


def test_each_answer_shows_right_or_wrong_the_key_and_the_explanation(client, pi, resident):
    dataset, _ = _bank(4)
    study = _practice_set(dataset, pi, n=4)
    client.force_login(resident)
    url = reverse("reader-case", args=[study.slug, 1])
    before = client.get(url).content.decode()
    assert "EXPLANATION" not in before and "data-feedback-panel" not in before
    assert "once you submit, the key and the explanation are shown" in before
    item = item_at(study, resident, 1)
    question = item.question
    wrong = next(letter for letter in "ABCD" if letter != question.correct)
    # The page's script asks for JSON (the receipt), then the case again.
    saved = client.post(
        reverse("reader-answer", args=[study.slug, 1]),
        {"choice": wrong, "time_ms": "5000"},
        HTTP_ACCEPT="application/json",
    )
    assert saved.status_code == 200
    after = client.get(url).content.decode()
    assert 'data-feedback="wrong"' in after
    assert f"✗ Wrong: you chose {wrong}; the key is {question.correct}" in after
    assert question.explanation in after
    assert 'data-practice-next href="/s/practice/read/2/"' in after
    answer = Answer.objects.get(item=item, reader=resident)
    assert answer.practice is True
    with pytest.raises(AnswerRejected, match="does not allow changing"):
        answer_submit(reader=resident, item=item, choice=question.correct)
    right = client.post(
        reverse("reader-answer", args=[study.slug, 2]),
        {"choice": item_at(study, resident, 2).question.correct},
    )
    assert right.status_code == 302
    page = client.get(reverse("reader-case", args=[study.slug, 2])).content.decode()
    assert 'data-feedback="right"' in page and "✓ Right" in page


def test_the_api_gives_the_feedback_only_in_a_practice_set_once_answered(pi, resident):
    dataset, _ = _bank(4)
    study = _practice_set(dataset, pi, n=4)
    api = APIClient()
    api.force_login(resident)
    case = api.get(f"/api/v1/studies/{study.slug}/cases/1/").json()
    assert case["feedback"] is None
    api.put(f"/api/v1/studies/{study.slug}/cases/1/answer/", {"choice": "A"}, format="json")
    case = api.get(f"/api/v1/studies/{study.slug}/cases/1/").json()
    item = item_at(study, resident, 1)
    assert case["feedback"]["key"] == item.question.correct
    assert case["feedback"]["explanation"] == item.question.explanation
    assert case["feedback"]["right"] is (item.question.correct == "A")
    research = build_study(2, slug="research")
    MembershipFactory(study=research, user=resident, role=Role.READER)
    api.put(f"/api/v1/studies/{research.slug}/cases/1/answer/", {"choice": "A"}, format="json")
    assert "feedback" not in api.get(f"/api/v1/studies/{research.slug}/cases/1/").json()


def test_no_research_analysis_counts_a_practice_answer(pi, resident):
    """The research analysis's input takes only its study's kind of answers: a practice set on
    the research study's own questions adds nothing to it, and even a practice answer stuck on a
    research question (a shell) is left out."""
    dataset, questions = _bank(4)
    research = build_study(0, dataset=dataset, slug="research")
    for position, question in enumerate(questions):
        StudyQuestionFactory(study=research, question=question, position=position)
    colleague = UserFactory(username="colleague")
    MembershipFactory(study=research, user=colleague, role=Role.READER)
    for item in research.items.all():
        answer_submit(reader=colleague, item=item, choice="A")
    reader_finish(reader=colleague, study=research)
    study = _practice_set(dataset, pi, n=4)
    for item in study.items.all():
        answer_submit(reader=resident, item=item, choice="B")
    first = research.items.first()
    stuck = Answer.objects.create(
        item=first,
        reader=resident,
        choice="C",
        practice=True,
        question_version=first.question.versions.get(number=1),
    )
    frame = study_responses(research, include_models=False)
    assert set(frame["rater_id"]) == {f"reader:{colleague.pk}"}
    assert frame["answer"].tolist() == ["A"] * 4
    practice_frame = study_responses(study, include_models=False)
    assert set(practice_frame["rater_id"]) == {f"reader:{resident.pk}"}
    assert practice_frame["answer"].tolist() == ["B"] * 4
    assert stuck.pk  # the stuck answer exists and is nowhere in the research frame


def _answer_all(study, reader, right: set[int]):
    """Answer every case of `study` as `reader`: right on the questions in `right` (ids)."""
    for item in study.items.select_related("question"):
        key = item.question.correct
        choice = key if item.question_id in right else next(x for x in "ABCD" if x != key)
        answer_submit(reader=reader, item=item, choice=choice, time_ms=6000)
    reader_finish(reader=reader, study=study)


def test_practise_my_misses_comes_back_after_the_interval_with_each_sitting_kept(
    client, pi, resident
):
    dataset, questions = _bank(10)
    study = _practice_set(dataset, pi, n=10)
    right = {q.id for q in questions[:7]}  # three misses
    _answer_all(study, resident, right)
    three_days_ago = timezone.now() - timedelta(days=3)
    ReaderCompletion.objects.filter(study=study).update(finished_at=three_days_ago)
    client.force_login(resident)
    results = client.get(reverse("reader-results", args=[study.slug])).content.decode()
    assert "3 of 10" in results and "Practise my misses" in results
    made = client.post(
        reverse("reader-practise-misses", args=[study.slug]), {"interval_days": "1"}, follow=True
    )
    page = made.content.decode()
    assert "My misses: Chest practice" in page and "Comes back on" in page
    plan = PracticePlan.objects.get(owner=resident)
    assert set(plan.questions.values_list("id", flat=True)) == {q.id for q in questions[7:]}
    with pytest.raises(StudyError, match="comes back on"):
        plan_sitting_start(plan=plan)
    # A day later it is offered: the home page says so and Start opens sitting 1.
    PracticePlan.objects.filter(pk=plan.pk).update(created_at=timezone.now() - timedelta(days=1))
    assert "data-plan-start" in client.get(reverse("home")).content.decode()
    started = client.post(reverse("practice-plan-start", args=[plan.pk]))
    first = ReaderStudy.objects.get(plan=plan, sitting=1)
    assert started.url == reverse("reader-start", args=[first.slug])
    assert first.practice and first.items.count() == 3
    _answer_all(first, resident, {questions[7].id})  # 1 of 3 now
    state = plan_state(plan)
    done = ReaderCompletion.objects.get(study=first, reader=resident).finished_at
    assert state.due_at == done + timedelta(days=1) and not state.due()
    ReaderCompletion.objects.filter(study=first).update(finished_at=done - timedelta(days=1))
    second = plan_sitting_start(plan=plan)
    assert second.sitting == 2
    _answer_all(second, resident, {q.id for q in questions[7:]})  # 3 of 3
    sittings = own_sittings(resident)
    assert [s.study.pk for s in sittings] == [study.pk, first.pk, second.pk]
    overall = [s.row("All") for s in sittings]
    assert [(r.correct, r.n) for r in overall] == [(7, 10), (1, 3), (3, 3)]
    progress = client.get(reverse("my-progress")).content.decode()
    assert "sitting 1" in progress and "sitting 2" in progress


def test_a_plan_is_only_its_owners_and_only_from_results_open_to_them(client, pi, resident):
    dataset, _ = _bank(4)
    study = _practice_set(dataset, pi, n=4)
    _answer_all(study, resident, set())
    client.force_login(resident)
    client.post(reverse("reader-practise-misses", args=[study.slug]), {"interval_days": "7"})
    plan = PracticePlan.objects.get(owner=resident)
    other = UserFactory(username="other")
    client.force_login(other)
    assert client.post(reverse("practice-plan-start", args=[plan.pk])).status_code == 404
    bad = client.post(reverse("reader-practise-misses", args=[study.slug]), {"interval_days": "7"})
    assert bad.status_code == 404  # not a reader of the set
    client.force_login(resident)
    refused = client.post(
        reverse("reader-practise-misses", args=[study.slug]), {"interval_days": "3"}, follow=True
    )
    assert "Choose when the set comes back: 1 day, 1 week, 1 month." in refused.content.decode()
    again = client.post(
        reverse("reader-practise-misses", args=[study.slug]), {"interval_days": "1"}, follow=True
    )
    assert "You already practise this study" in again.content.decode()
    assert PracticePlan.objects.filter(owner=resident).count() == 1
    assert "data-practise" not in again.content.decode()  # the page says the plan instead


def test_a_sitting_is_refused_while_its_owner_reads_one_of_its_xrays_blind(pi, resident):
    dataset, questions = _bank(4)
    study = _practice_set(dataset, pi, n=4)
    _answer_all(study, resident, set())
    from annotation.practice import practice_plan_create

    plan = practice_plan_create(owner=resident, source=study, misses=questions, interval_days=1)
    PracticePlan.objects.filter(pk=plan.pk).update(created_at=timezone.now() - timedelta(days=2))
    research = build_study(0, dataset=dataset, slug="later-research")
    StudyQuestionFactory(
        study=research,
        question=QuestionFactory(dataset=dataset, case=questions[0].case, source_id="other-q"),
        position=0,
    )
    MembershipFactory(study=research, user=resident, role=Role.READER)  # behind the rules' back
    with pytest.raises(StudyError, match="blind as a reader in another study"):
        plan_sitting_start(plan=plan)
    assert not ReaderStudy.objects.filter(plan=plan).exists()
    # ... and the rules refuse that membership on every path: the resident practised on it.
    research.memberships.filter(user=resident).delete()
    with pytest.raises(StudyError, match="in a practice set or a debrief"):
        membership_add(study=research, user=resident, role=Role.READER)


def test_unseen_questions_of_the_same_task_and_category_as_the_pi_allows(pi, resident):
    dataset, _ = _bank(10)
    study = _practice_set(dataset, pi, n=2, tasks=[Task.PRESENCE], category="Lung")
    study.misses_unseen = 2
    study.save()
    _answer_all(study, resident, set())
    from annotation.practice import practice_plan_create

    misses = [item.question for item in study.items.select_related("question")]
    plan = practice_plan_create(owner=resident, source=study, misses=misses, interval_days=7)
    held = set(plan.questions.values_list("id", flat=True))
    assert held > {q.id for q in misses}
    added = Question.objects.filter(id__in=held - {q.id for q in misses})
    assert added.exists()
    assert {(q.task, q.category) for q in added} <= {(q.task, q.category) for q in misses}


def test_a_practice_sets_own_analysis_says_it_is_practice(client, pi, resident):
    """Its page and the README of every download say the answers were given with feedback:
    nobody should publish them as a reader study's accuracy."""
    from analysis.cache import StudyAnalysis
    from analysis.downloads import export_info
    from analysis.exports import all_tables, readme_txt
    from analysis.pipeline import AnalysisSettings

    dataset, _ = _bank(4)
    study = _practice_set(dataset, pi, n=4)
    answer_submit(reader=resident, item=item_at(study, resident, 1), choice="A", time_ms=9000)
    research = build_study(n_questions=2, slug="research")
    MembershipFactory(study=research, user=pi, role=Role.PI)
    client.force_login(pi)
    page = client.get(reverse("analysis", args=[study.slug]))
    assert page.status_code == 200 and "given with feedback" in page.content.decode()
    other = client.get(reverse("analysis", args=[research.slug]))
    assert other.status_code == 200 and "given with feedback" not in other.content.decode()
    analysis = StudyAnalysis(study, AnalysisSettings())
    result = analysis.result
    readme = readme_txt(result, all_tables(result), [], export_info(analysis)).decode()
    assert "A practice set: every answer was given with feedback" in readme
