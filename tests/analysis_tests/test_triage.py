"""Expert triage: the queue ranks by evidence and says why; item analysis page, exports, API."""

import csv
import datetime as dt
import io
import re

import openpyxl
import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse
from rest_framework.test import APIClient

from analysis.triage import next_to_review, triage_queue
from annotation.reviews import review_submit
from annotation.services import answer_submit
from readerstudy.demo import MISKEYED
from readerstudy.models import Question
from tests.factories import UserFactory, build_study

pytestmark = pytest.mark.django_db
RATINGS = {
    "clinical_quality": 4,
    "explanation_clarity": 3,
    "factual_correctness": 5,
    "image_alignment": 2,
}


def test_question_everyone_answers_b_but_keyed_a_ranks_first_with_the_reason(client, mis_keyed):
    study, target, expert = mis_keyed
    rows = triage_queue(study, expert)
    assert rows[0].item == target
    assert rows[0].key_suspicion > 0.97 and rows[0].modal_wrong == "B"
    assert rows[0].reasons[0] == "6 of 6 raters chose B, 0 the key A"
    assert rows[0].choices == (("B", ("Reader 1", "Reader 2", "Reader 3", "m1", "m2", "m3")),)
    assert rows[1].reasons == ["1 of 3 readers: question does not fit"]
    client.force_login(expert)
    html = client.get(reverse("expert-queue", args=[study.slug])).content.decode()
    first_row = html.split("<tbody>")[1].split("</tr>")[0]
    assert target.question.text in first_row
    assert "6 of 6 raters chose B, 0 the key A" in first_row
    assert "Wrong <strong>B</strong>: 6 of 6" in first_row
    assert 'class="thumb"' in first_row


def test_the_demos_mis_keyed_question_ranks_first_then_the_mismatch(demo):
    """The demo keys one question wrongly (readerstudy.demo.MISKEYED): both simulated readers
    and the three models answer B; the leg radiograph's two questions come next."""
    expert1 = UserFactory(username="expert1")
    rows = triage_queue(demo, expert1)
    top = rows[0]
    assert top.item.question.source_id == MISKEYED and top.key == "A"
    assert top.reasons[0] == "5 of 5 raters chose B, 0 the key A"
    assert {row.item.question.case.study_id for row in rows[1:3]} == {"demo-mismatch"}
    assert "2 of 2 readers: question does not fit" in rows[1].reasons
    # reader1, left to a person on `make demo`, answering B too: 3 readers and 3 models.
    reader1 = get_user_model().objects.get(username="reader1")
    answer_submit(reader=reader1, item=top.item, choice="B")
    top = triage_queue(demo, expert1)[0]
    assert top.item.question.source_id == MISKEYED
    assert top.reasons[0] == "6 of 6 raters chose B, 0 the key A"


def test_complaints_then_not_yet_reviewed_then_study_order(study, reader, other_reader, expert):
    items = list(study.items.order_by("position"))
    answer_submit(reader=reader, item=items[2], choice="A", alignment="no")
    answer_submit(reader=other_reader, item=items[2], choice="C", alignment="no")
    answer_submit(reader=reader, item=items[3], choice="D", alignment="partly")
    review_submit(
        expert=expert,
        item=items[0],
        flags=[],
        ratings=RATINGS,
        difficulty="easy",
        decision="accept",
    )
    order = [row.item.id for row in triage_queue(study, expert)]
    assert order == [items[2].id, items[3].id, items[1].id, items[0].id]
    assert next_to_review(study, expert) == items[2]


def test_save_and_next_follows_the_ranking(client, mis_keyed):
    study, target, expert = mis_keyed
    client.force_login(expert)
    response = client.get(reverse("expert-next", args=[study.slug]))
    assert response.url == reverse("expert-review", args=[study.slug, target.id])
    form = {**{k: str(v) for k, v in RATINGS.items()}, "difficulty": "hard", "decision": "reject"}
    response = client.post(reverse("expert-review", args=[study.slug, target.id]), form)
    second = triage_queue(study, expert)[1].item
    assert client.get(response.url).url == reverse("expert-review", args=[study.slug, second.id])


def test_a_pi_who_is_not_an_expert_goes_back_to_the_queue(client, study, pi):
    client.force_login(pi)
    response = client.get(reverse("expert-next", args=[study.slug]))
    assert response.url == reverse("expert-queue", args=[study.slug])


def test_queue_without_any_answers_lists_every_question(client, study, expert):
    client.force_login(expert)
    html = client.get(reverse("expert-queue", args=[study.slug])).content.decode()
    assert html.count("no answers yet") == 4 and "No evidence of a problem yet" in html


def test_queue_page_queries_do_not_grow_with_questions(
    client, django_assert_max_num_queries, mis_keyed
):
    study, _, expert = mis_keyed
    client.force_login(expert)
    # + 1: the expert's reviews, for the decisions; + 3: open proposals (how many, those the
    # expert may read) and the questions' current versions (issue 35); + 2: the questions'
    # versions, to score by (issue 35, rescoring: the responses frame's and the item list's);
    # + 1: the study's readers who have not started, who hold their "Reader N" numbers
    with django_assert_max_num_queries(27):
        client.get(reverse("expert-queue", args=[study.slug]))


def test_item_analysis_page_sorts_by_any_column(client, mis_keyed):
    study, target, expert = mis_keyed
    client.force_login(expert)
    url = reverse("item-analysis", args=[study.slug])

    def order(sort):
        html = client.get(url, {"sort": sort}).content.decode()
        body = html.split("<tbody>")[1]
        ids = [q.question.source_id for q in study.items.select_related("question")]
        return sorted(ids, key=body.index)

    by_suspicion = order("-key_suspicion")
    assert by_suspicion[0] == target.question.source_id
    by_id = order("question_id")
    assert by_id == sorted(by_id)
    assert order("-question_id") == sorted(by_id, reverse=True)
    assert order("p_readers")[0] == target.question.source_id  # 0% correct first
    assert order("nonsense")[0] == target.question.source_id  # falls back, no error
    html = client.get(url, {"sort": "-fit_no"}).content.decode()
    assert 'aria-sort="descending"' in html and "Fit no ▼" in html


def test_item_analysis_csv_and_xlsx(client, mis_keyed):
    study, target, expert = mis_keyed
    Question.objects.filter(pk=target.question_id).update(source_id="=HYPERLINK(1)")
    client.force_login(expert)
    body = client.get(reverse("item-analysis-download", args=[study.slug, "csv"]))
    day = dt.datetime.now(dt.UTC).date().isoformat()
    assert re.search(
        rf'filename="{study.slug}-item-analysis-v[0-9a-f]{{8}}-{day}\.csv"',
        body["Content-Disposition"],
    )
    rows = list(csv.DictReader(io.StringIO(body.content.decode())))
    assert len(rows) == 6
    first = rows[0]
    assert first["question_id"] == "'=HYPERLINK(1)"  # never a formula in a spreadsheet
    assert first["key"] == "A" and first["modal_wrong"] == "B"
    assert float(first["key_suspicion"]) > 0.97 and float(first["share_B"]) == 1.0
    xlsx = client.get(reverse("item-analysis-download", args=[study.slug, "xlsx"]))
    sheet = openpyxl.load_workbook(io.BytesIO(xlsx.content)).active
    header = [c.value for c in sheet[1]]
    assert header[:4] == ["question_id", "task", "key", "key_suspicion"]
    # Text exactly as imported, stored as a string: a spreadsheet shows it, never runs it.
    assert sheet["A2"].value == "=HYPERLINK(1)" and sheet["A2"].data_type == "s"
    assert (
        client.get(reverse("item-analysis-download", args=[study.slug, "pdf"])).status_code == 404
    )


def test_item_analysis_api(mis_keyed):
    study, target, expert = mis_keyed
    api = APIClient()
    api.force_authenticate(expert)
    body = api.get(f"/api/v1/studies/{study.slug}/items/").json()
    assert "corrected point-biserial" in body["definition"]
    first = body["items"][0]
    assert first["question_id"] == target.question.source_id and first["item_id"] == target.id
    assert first["key_suspicion"] > 0.97 and first["p_readers"] == 0.0 and first["n"] == 6
    assert first["discrimination"] is None  # everyone wrong: undefined, JSON null
    api.force_login(expert)  # the schema is for signed-in users (API_DOCS_PUBLIC)
    schema = api.get("/api/schema/").content.decode()
    assert "/api/v1/studies/{slug}/items/" in schema and "ItemAnalysisRow" in schema


@pytest.mark.parametrize("persona", ["reader", "outsider"])
def test_readers_and_outsiders_never_reach_triage(client, study, request, persona):
    user = request.getfixturevalue(persona)
    client.force_login(user)
    for url in (
        reverse("expert-queue", args=[study.slug]),
        reverse("expert-next", args=[study.slug]),
        reverse("item-analysis", args=[study.slug]),
        reverse("item-analysis-download", args=[study.slug, "csv"]),
    ):
        assert client.get(url).status_code == 404
    api = APIClient()
    api.force_authenticate(user)
    assert api.get(f"/api/v1/studies/{study.slug}/items/").status_code == 404


def test_an_expert_of_another_study_sees_nothing(client, study, expert):
    other = build_study(2)
    client.force_login(expert)
    assert client.get(reverse("item-analysis", args=[other.slug])).status_code == 404
    assert client.get(reverse("expert-next", args=[other.slug])).status_code == 404
