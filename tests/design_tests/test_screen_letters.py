"""Blinding of shuffled options: a reader never sees a canonical letter that differs from their
screen — not in a conflict (page JSON, plain form post), a locked case, the finish screen or the
API — and a second read's conflicts say what is saved instead of nothing (issue 23)."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from annotation import selectors
from annotation.models import Answer
from annotation.services import AnswerConflict, answer_submit, reader_finish
from annotation.sessions import reading_of
from tests.design_tests.conftest import add_model, add_readers, crossover
from tests.factories import build_study

JSON = {"HTTP_ACCEPT": "application/json"}


def _shuffled_case(study, reader):
    """A case number whose screen letter "A" is another canonical letter, with its mapping."""
    reading = reading_of(study, reader)
    for number in range(1, study.items.count() + 1):
        item = selectors.item_at(study, reader, number, reading=reading)
        mapping = selectors.screen_letters(study, reading, item.question_id)
        if mapping["A"] != "A":
            return number, item, mapping
    pytest.fail("no case had its options shuffled")


@pytest.fixture
def shuffled(db, set_design):
    """One reader of an aided, shuffled study (concurrent aid, revision allowed)."""
    study = build_study(8, allow_revision=True, lock_on_finish=True)
    add_model(study)
    reader = add_readers(study, 1)[0]
    set_design(study, crossover(arms="aided", shuffle_options=True))
    return study, reader


def test_a_two_tab_conflict_names_the_saved_answer_in_screen_letters(shuffled, client):
    study, reader = shuffled
    number, item, mapping = _shuffled_case(study, reader)
    client.force_login(reader)
    url = reverse("reader-answer", args=[study.slug, number])
    # Tab 1 saves screen A (another canonical letter); tab 2, which showed the case blank,
    # then sends screen B.
    assert client.post(url, {"choice": "A"}, **JSON).status_code == 200
    stored = Answer.objects.get(item=item, reader=reader).choice
    assert stored == mapping["A"] != "A"
    refused = client.post(url, {"choice": "B", "base": json.dumps({"choice": ""})}, **JSON)
    assert refused.status_code == 409
    body = refused.json()
    assert body["saved"]["choice"] == "A"  # what the reader's screen showed, not `stored`
    assert "the saved answer is A." in body["error"]
    assert f"answer is {stored}" not in body["error"]
    # Without JavaScript (a plain form post) the page says the same, in screen letters.
    page = client.post(url, {"choice": "B", "base": json.dumps({"choice": ""})})
    assert page.status_code == 409
    assert "the saved answer is A." in page.content.decode()
    assert Answer.objects.get(item=item, reader=reader).choice == stored  # nothing written over


def test_the_service_speaks_screen_letters_whoever_calls_it(shuffled):
    study, reader = shuffled
    _, item, mapping = _shuffled_case(study, reader)
    answer_submit(reader=reader, item=item, choice=mapping["C"])  # canonical, as stored
    with pytest.raises(AnswerConflict) as refused:
        answer_submit(reader=reader, item=item, choice=mapping["D"], base={"choice": ""})
    assert refused.value.saved["choice"] == "C"
    assert "the saved answer is C." in str(refused.value)


def test_locked_cases_the_finish_screen_and_the_api_show_screen_letters(shuffled, client):
    study, reader = shuffled
    number, item, _ = _shuffled_case(study, reader)
    client.force_login(reader)
    for n in range(1, study.items.count() + 1):
        client.post(reverse("reader-answer", args=[study.slug, n]), {"choice": "A"}, **JSON)
    canonical = Answer.objects.get(item=item, reader=reader).choice
    assert canonical != "A"
    review = client.get(reverse("reader-review", args=[study.slug])).content.decode()
    assert f'data-case="{number}"' in review
    row = review.split(f'data-case="{number}"')[1].split("</li>")[0]
    assert "&quot;choice&quot;: &quot;A&quot;" in row and ">A</span>" in row
    api = client.get(f"/api/v1/studies/{study.slug}/cases/{number}/").json()
    assert api["answer"]["choice"] == "A"
    put = client.put(
        f"/api/v1/studies/{study.slug}/cases/{number}/answer/",
        {"choice": "A"},
        content_type="application/json",
    ).json()
    assert put["choice"] == "A" and put["outcome"] == "unchanged"
    reader_finish(reader=reader, study=study)
    locked = client.get(reverse("reader-case", args=[study.slug, number])).content.decode()
    said = "Your answer: <strong>{}</strong>"
    assert said.format("A") in locked and said.format(canonical) not in locked


@pytest.fixture
def second_read(db, set_design):
    study = build_study(6, allow_revision=True)
    add_model(study)
    reader = add_readers(study, 1)[0]
    set_design(study, crossover(arms="aided", aid_mode="second-read", shuffle_options=True))
    return study, reader


def test_a_second_reads_stale_first_submit_reports_the_first_answer_not_nothing(
    second_read, client
):
    """Two tabs before the AI was shown: one submits A, the other B. B is refused with what
    is saved (A, on the reader's screen) — never an empty answer the page would show as
    "Saved: none"."""
    study, reader = second_read
    number, item, mapping = _shuffled_case(study, reader)
    client.force_login(reader)
    url = reverse("reader-answer", args=[study.slug, number]) + "?stage=first"
    client.post(url, {"choice": "A", "difficulty": "easy"}, **JSON)
    refused = client.post(url, {"choice": "B"}, **JSON)
    assert refused.status_code == 409
    saved = refused.json()["saved"]
    assert saved["choice"] == "A" and saved["difficulty"] == "easy"
    assert "your first answer to this case, A," in refused.json()["error"]
    stored = Answer.objects.get(item=item, reader=reader)
    assert (stored.first_choice, stored.choice) == (mapping["A"], "")


def test_a_second_reads_final_answer_in_a_conflict_is_reported(second_read, client):
    """Two tabs on the final answer (the AI shown in both): the second one's different final
    answer is refused naming the first one's, in screen letters; a repeat is harmless."""
    study, reader = second_read
    number, item, mapping = _shuffled_case(study, reader)
    client.force_login(reader)
    url = reverse("reader-answer", args=[study.slug, number])
    client.post(url + "?stage=first", {"choice": "C"}, **JSON)
    final = client.post(url, {"choice": "A", "base": json.dumps({"choice": ""})}, **JSON)
    assert final.status_code == 200 and final.json()["answer"]["choice"] == "A"
    repeat = client.post(url, {"choice": "A", "base": json.dumps({"choice": ""})}, **JSON)
    assert repeat.status_code == 200 and repeat.json()["changed"] is False
    other = client.post(url, {"choice": "D", "base": json.dumps({"choice": ""})}, **JSON)
    assert other.status_code == 409
    assert other.json()["saved"]["choice"] == "A"
    assert "the saved answer is A." in other.json()["error"]
    # A first submit sent late from a page that never showed the AI: refused, naming the
    # final answer now held (not an empty one).
    late = client.post(url + "?stage=first", {"choice": "B"}, **JSON)
    assert late.status_code == 409 and late.json()["saved"]["choice"] == "A"
    stored = Answer.objects.get(item=item, reader=reader)
    assert (stored.first_choice, stored.choice) == (mapping["C"], mapping["A"])


def test_the_ais_own_words_never_name_an_option_by_its_canonical_letter(shuffled, client):
    """The model's words name options by the question's own letters ("<answer>C</answer>"):
    beside shuffled options they would point at another option on the reader's screen. A
    shuffled study shows the AI's answer in screen letters and leaves its words out — on the
    page, in the case's HTML and through the API."""
    study, reader = shuffled
    number, item, mapping = _shuffled_case(study, reader)
    words = f"I think the answer is ({item.question.correct})."
    case = selectors.reader_case(study, reader, number)
    assert case.aid.usable and case.aid.rationale == ""
    client.force_login(reader)
    page = client.get(reverse("reader-case", args=[study.slug, number])).content.decode()
    assert words not in page and "The model's words" not in page
    api = client.get(f"/api/v1/studies/{study.slug}/cases/{number}/").json()
    assert api["aid"]["rationale"] == ""
    screen = next(s for s, c in mapping.items() if c == item.question.correct)
    assert api["aid"]["letter"] == case.aid.letter == screen
