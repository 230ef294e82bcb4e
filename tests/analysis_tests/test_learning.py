"""A reader's results (the debrief), progress over time and a programme director's view
(issue 36): the numbers are the analysis's (its default counting rules, the library's
clustered Wilson interval), checked against hand counts; nothing opens before the study's
setting allows it; no other reader is named."""

from __future__ import annotations

import csv
import io

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from analysis import stats
from analysis.learning import debrief
from annotation.models import Answer
from annotation.services import answer_submit, reader_finish
from readerstudy.models import Role, Task
from readerstudy.predictions.services import predictions_import
from readerstudy.services.studies import study_question_set_excluded, study_results_set
from readerstudy.vocabulary import ResultsVisibility
from tests.factories import (
    CaseFactory,
    ImageFactory,
    MembershipFactory,
    QuestionFactory,
    ReaderStudyFactory,
    StudyQuestionFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db
KEYS = "ABCDABCD"
# Three readers' answers to 8 questions (None: no answer); question i is on X-ray i // 2.
ANSWERS = {
    "anastasia": "ABCDABCA",  # right on 0-6
    "benedikt": "ABAAAB" + "CD",  # right on 0, 1, 4, 5, 6, 7
    "cyrilla": "BBCD" + "BBC" + "-",  # right on 1, 2, 3, 5, 6; 7 unanswered
}


@pytest.fixture
def world(db):
    study = ReaderStudyFactory(slug="trial", title="Trial", random_order=False)
    tasks = [Task.PRESENCE, Task.LOCATION]
    cases = [CaseFactory(dataset=study.dataset) for _ in range(4)]
    for case in cases:
        ImageFactory(case=case)
    for i in range(8):
        question = QuestionFactory(
            dataset=study.dataset,
            case=cases[i // 2],
            source_id=f"q{i}",
            task=tasks[i % 2],
            correct=KEYS[i],
            explanation=f"Why {i}",
        )
        StudyQuestionFactory(study=study, question=question, position=i)
    pi = UserFactory(username="pi")
    MembershipFactory(study=study, user=pi, role=Role.PI)
    users = {}
    items = list(study.items.order_by("position"))
    for name, letters in ANSWERS.items():
        user = users[name] = UserFactory(username=name)
        MembershipFactory(study=study, user=user, role=Role.READER)
        for item, letter in zip(items, letters, strict=True):
            if letter != "-":
                answer_submit(reader=user, item=item, choice=letter, time_ms=9000)
    reader_finish(reader=users["anastasia"], study=study)
    rows = "\n".join(f"q{i},{'A' if i < 4 else KEYS[i]}" for i in range(8))
    predictions_import(
        dataset=study.dataset,
        model_name="Model-X",
        content=f"question_id,prediction\n{rows}\n".encode(),
    )
    return study, pi, users


def _open(study, pi, show_ai=False):
    study_results_set(
        study=study,
        actor=pi,
        visibility=ResultsVisibility.OWN_FINAL,
        show_ai=show_ai,
        misses_unseen=0,
    )


def test_results_open_only_once_the_setting_allows_them(client, world):
    study, pi, users = world
    client.force_login(users["anastasia"])
    url = reverse("reader-results", args=[study.slug])
    never = client.get(url)
    assert never.status_code == 403 and "does not show its readers" in never.content.decode()
    assert "Why 0" not in never.content.decode()
    _open(study, pi)
    assert client.get(url).status_code == 200
    client.force_login(users["benedikt"])  # still reading
    partway = client.get(url)
    assert partway.status_code == 403 and "Why 0" not in partway.content.decode()


def test_every_case_with_answer_key_explanation_and_the_panels_share(client, world):
    study, pi, users = world
    _open(study, pi)
    result = debrief(study, users["anastasia"])
    assert [c.number for c in result.cases] == list(range(1, 9))
    last = result.cases[7]
    assert (last.choice, last.key, last.right, last.explanation) == ("A", "D", False, "Why 7")
    # Question 0: ana A, ben A, cy B. Question 7: ana A, ben D, cy no answer: two answered,
    # and beside her own A a share would tell anastasia benedikt's answer, so none is shown.
    first = {o.letter: (o.chosen_by, o.share) for o in result.cases[0].options}
    assert first == {"A": (2, 2 / 3), "B": (1, 1 / 3), "C": (0, 0.0), "D": (0, 0.0)}
    shares = {o.letter: (o.chosen_by, o.share) for o in last.options}
    assert shares == dict.fromkeys("ABCD", (None, None))
    assert "3 or more readers" in last.panel_note and result.cases[0].panel_note == ""
    assert [c.number for c in result.misses] == [8]
    client.force_login(users["anastasia"])
    page = client.get(reverse("reader-results", args=[study.slug])).content.decode()
    assert "Why 7" in page and "Model-X" not in page
    for name in ("benedikt", "cyrilla"):
        assert name not in page  # no other reader named
    assert "shares shown with 3 or more readers" in page


def test_accuracy_per_task_is_the_analysis_count_with_its_clustered_interval(world):
    """By hand: anastasia is right on 7 of 8 (presence 4/4, location 3/4); benedikt 6/8
    (3/4, 3/4); cyrilla 5/8 (2/4, 3/4: her unanswered question counts as wrong, as the
    analysis counts it by default). The panel's medians: presence 3/4, location 3/4, all
    6/8. The interval is the library's, on the same rows."""
    study, pi, users = world
    _open(study, pi, show_ai=True)
    rows = {r.task: r for r in debrief(study, users["anastasia"]).accuracy}
    presence, location, overall = (
        rows["Presence Assessment"],
        rows["Location and Distribution Assessment"],
        rows["All"],
    )
    assert (presence.correct, presence.n, location.correct, location.n) == (4, 4, 3, 4)
    assert (overall.correct, overall.n) == (7, 8)
    assert presence.panel_median == 3 / 4 and location.panel_median == 3 / 4
    assert overall.panel_median == 6 / 8 and overall.panel_n == 3

    # Model-X answers A on 0-3 (right on 0 only) and the key on 4-7: 5/8.
    assert overall.models == [("Model-X", 5 / 8)]
    frame = study.items.order_by("position")
    import pandas as pd

    long = pd.DataFrame(
        {
            "question_id": [f"q{i}" for i in range(8)],
            "rater": "anastasia",
            "answer": list(ANSWERS["anastasia"]),
            "correct_answer": list(KEYS),
            "task": [item.question.get_task_display() for item in frame],
            "case_id": [i // 2 for i in range(8)],
        }
    )
    expected = stats.accuracy_table(long).set_index("task")
    assert overall.ci_low == pytest.approx(expected.loc["All", "ci_low"])
    assert overall.ci_high == pytest.approx(expected.loc["All", "ci_high"])


def test_excluded_questions_are_left_out_as_the_analysis_leaves_them_out(world):
    study, pi, users = world
    _open(study, pi)
    study_question_set_excluded(
        item=study.items.get(position=7), excluded=True, reason="bad image", actor=pi
    )
    result = debrief(study, users["anastasia"])
    overall = next(r for r in result.accuracy if r.task == "All")
    assert (overall.correct, overall.n) == (7, 7)
    assert result.cases[7].not_counted == "excluded by a PI: bad image"
    assert result.misses == []


def test_the_csv_and_the_api_say_the_same_and_refuse_alike(world):
    study, pi, users = world
    api = APIClient()
    api.force_login(users["anastasia"])
    refused = api.get(f"/api/v1/studies/{study.slug}/results/")
    assert refused.status_code == 403 and "does not show" in refused.json()["detail"]
    _open(study, pi)
    data = api.get(f"/api/v1/studies/{study.slug}/results/").json()
    assert data["misses"] == [8] and data["cases"][7]["key"] == "D"
    assert all(case["ai"] == [] for case in data["cases"])
    assert "keys as imported" in data["key_version"]
    body = api.get(reverse("reader-results-csv", args=[study.slug])).content.decode()
    rows = list(csv.DictReader(io.StringIO(body)))
    assert len(rows) == 8 and rows[7]["your_answer"] == "A" and rows[7]["key"] == "D"
    assert rows[0]["share_A"] == "0.6667" and rows[7]["share_A"] == ""  # 2 answered: none
    assert rows[7]["explanation"] == "Why 7"


def test_a_missed_case_opens_in_the_viewer_with_the_explanation(client, world):
    study, pi, users = world
    _open(study, pi)
    client.force_login(users["anastasia"])
    page = client.get(reverse("reader-results-case", args=[study.slug, 8])).content.decode()
    assert "Why 7" in page and "Miss 1 of 1" in page and 'class="viewer"' in page
    assert "✗ You chose A; the key is D" in page
    assert client.get(reverse("reader-results-case", args=[study.slug, 99])).status_code == 404


def test_the_programme_director_sees_each_resident_and_exports_csv(client, world):
    _, pi, users = world
    client.force_login(pi)
    page = client.get(reverse("programme")).content.decode()
    for name in ANSWERS:
        assert f'data-resident="{name}"' in page
    body = client.get(reverse("programme-csv")).content.decode()
    rows = list(csv.DictReader(io.StringIO(body)))
    ana = [r for r in rows if r["resident"] == "anastasia" and r["task"] == "All"]
    assert len(ana) == 1 and (ana[0]["correct"], ana[0]["n"]) == ("7", "8")
    assert ana[0]["panel_median"] == "0.7500" and ana[0]["kind"] == "research study"
    assert "Wilson" in ana[0]["method"] and "keys as imported" in ana[0]["key_version"]
    assert {r["resident"] for r in rows} == set(ANSWERS)
    client.force_login(users["anastasia"])
    assert client.get(reverse("programme")).status_code == 404


def test_my_progress_shows_open_results_only_and_names_no_one_else(client, world):
    study, pi, users = world
    client.force_login(users["anastasia"])
    assert "Trial" not in client.get(reverse("my-progress")).content.decode()  # never shown
    _open(study, pi)
    page = client.get(reverse("my-progress")).content.decode()
    assert "Trial" in page and "88%" in page
    assert "benedikt" not in page and "cyrilla" not in page


def test_a_panel_of_two_gives_nobody_away(client, world):
    """With two readers, your accuracy and the panel's median (or a share per option) would
    tell the other reader's exactly: the debrief says why it shows neither."""
    study, pi, users = world
    study.memberships.filter(user=users["cyrilla"]).delete()
    Answer.objects.filter(reader=users["cyrilla"]).delete()
    _open(study, pi)
    result = debrief(study, users["anastasia"])
    overall = {r.task: r for r in result.accuracy}["All"]
    assert overall.panel_n == 2 and overall.panel_median is None
    assert all(o.share is None for c in result.cases for o in c.options)
    client.force_login(users["anastasia"])
    page = client.get(reverse("reader-results", args=[study.slug])).content.decode()
    assert "2 readers: shown with 3 or more readers" in page
    table = page.split("data-accuracy", 1)[1].split("</table>", 1)[0]
    assert "81%" not in table  # the median of anastasia's 7/8 and benedikt's 6/8
