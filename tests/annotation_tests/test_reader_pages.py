"""Reader pages through the test client: access, answering, navigation, resume, finish."""

import re

import pytest
from django.urls import reverse

from annotation.models import Answer, AnswerRevision, ReaderCompletion
from annotation.selectors import ordered_item_ids
from readerstudy.models import Role
from tests.factories import MembershipFactory, UserFactory, build_study

pytestmark = pytest.mark.django_db


def case_url(study, n):
    return reverse("reader-case", kwargs={"slug": study.slug, "number": n})


def answer_url(study, n):
    return reverse("reader-answer", kwargs={"slug": study.slug, "number": n})


def answer(client, study, n, choice="A", script=False, **extra):
    """Post an answer as the form does, or as the page's script does (JSON receipt)."""
    headers = {"HTTP_ACCEPT": "application/json"} if script else {}
    return client.post(
        answer_url(study, n), {"choice": choice, "time_ms": 1000, **extra}, **headers
    )


def test_anonymous_is_sent_to_login(client, study):
    response = client.get(case_url(study, 1))
    assert response.status_code == 302 and response.url.startswith("/accounts/login/")


def test_login_page_renders_a_form(client):
    response = client.get("/accounts/login/")
    assert b'name="username"' in response.content and b'name="password"' in response.content


def test_home_lists_my_studies_with_progress(reader_client, study, reader):
    other = build_study(2)  # not a member
    answer(reader_client, study, 1)
    html = reader_client.get("/").content.decode()
    assert study.title in html and other.title not in html
    assert "1 / 4 answered" in html and "Resume" in html


@pytest.mark.parametrize("view", ["reader-start", "reader-review", "reader-done"])
def test_non_members_get_404(client, outsider, study, view):
    client.force_login(outsider)
    assert client.get(reverse(view, kwargs={"slug": study.slug})).status_code == 404
    assert client.get(case_url(study, 1)).status_code == 404
    assert answer(client, study, 1).status_code == 404
    assert not Answer.objects.exists()


def test_experts_and_pis_do_not_use_the_reader_pages(client, expert, study):
    client.force_login(expert)
    assert client.get(case_url(study, 1)).status_code == 404


def test_start_shows_instructions_then_resumes_on_first_unanswered(reader_client, study):
    study.instructions = "Answer as you would in clinic."
    study.save()
    start = reader_client.get(reverse("reader-start", args=[study.slug]))
    assert start.url == reverse("reader-instructions", args=[study.slug])
    html = reader_client.get(start.url).content.decode()
    assert "Answer as you would in clinic." in html
    assert f'href="{case_url(study, 1)}"' in html and "Begin with case 1" in html
    answer(reader_client, study, 1)
    answer(reader_client, study, 2)
    assert reader_client.get(reverse("reader-start", args=[study.slug])).url == case_url(study, 3)
    answer(reader_client, study, 4)
    assert reader_client.get(reverse("reader-start", args=[study.slug])).url == case_url(study, 3)


def test_case_page_shows_question_options_and_views(reader_client, study, reader):
    item_id = ordered_item_ids(study, reader)[0]
    question = study.items.get(id=item_id).question
    html = reader_client.get(case_url(study, 1)).content.decode()
    assert question.text in html
    for letter, text in question.labelled_options:
        assert f"{letter}. {text}" in html
    assert 'type="radio" name="choice" value="A"' in html
    assert html.count('class="view"') == 2 and "PA" in html and "LATERAL" in html
    assert "Case 1 of 4" in html and "Cough." in html  # the indication


def test_indication_hidden_when_study_says_so(reader_client, study):
    study.show_indication = False
    study.save()
    html = reader_client.get(case_url(study, 1)).content.decode()
    assert "Cough." not in html and "Indication" not in html


def test_out_of_range_case_is_404(reader_client, study):
    assert reader_client.get(case_url(study, 5)).status_code == 404
    assert answer(reader_client, study, 0).status_code == 404


def test_submit_without_js_redirects_to_next_case(reader_client, study, reader):
    response = answer(
        reader_client, study, 1, choice="C", difficulty="hard", alignment="no", comment="subtle"
    )
    assert response.status_code == 302 and response.url == case_url(study, 2)
    saved = Answer.objects.get(reader=reader)
    assert saved.item_id == ordered_item_ids(study, reader)[0]
    assert (saved.choice, saved.difficulty, saved.alignment, saved.comment) == (
        "C",
        "hard",
        "no",
        "subtle",
    )


def test_submit_from_the_page_script_gets_a_receipt_with_the_next_case(
    reader_client, study, reader
):
    response = reader_client.post(
        answer_url(study, 1), {"choice": "B", "time_ms": 900}, HTTP_ACCEPT="application/json"
    )
    receipt = response.json()
    assert response.status_code == 200 and response["Cache-Control"] == "no-store"
    assert receipt["saved"] == 1 and receipt["changed"] is True
    assert receipt["answer"]["choice"] == "B"
    assert (receipt["next"], receipt["next_url"]) == (2, case_url(study, 2))
    assert (receipt["following"], receipt["following_url"]) == (3, case_url(study, 3))
    assert receipt["progress"] == {"answered": 1, "total": 4}
    again = reader_client.post(
        answer_url(study, 1), {"choice": "B", "time_ms": 50}, HTTP_ACCEPT="application/json"
    )
    assert again.json()["changed"] is False and Answer.objects.count() == 1


def test_script_receipts_skip_answered_cases_and_end_with_none(reader_client, study):
    answer(reader_client, study, 2)
    receipt = reader_client.post(
        answer_url(study, 1), {"choice": "A"}, HTTP_ACCEPT="application/json"
    ).json()
    assert (receipt["next"], receipt["following"]) == (3, 4)
    answer(reader_client, study, 3)
    last = reader_client.post(
        answer_url(study, 4), {"choice": "A"}, HTTP_ACCEPT="application/json"
    ).json()
    assert last["next"] is None and last["next_url"] is None
    assert last["review_url"] == reverse("reader-review", args=[study.slug])


def test_script_gets_refusals_as_json_in_words(reader_client, study):
    missing = reader_client.post(answer_url(study, 1), {}, HTTP_ACCEPT="application/json")
    assert missing.status_code == 422 and "Choose one of the options" in missing.json()["error"]
    study.allow_revision = False
    study.save()
    answer(reader_client, study, 1, choice="B")
    changed = reader_client.post(
        answer_url(study, 1), {"choice": "C"}, HTTP_ACCEPT="application/json"
    )
    assert changed.status_code == 409 and "does not allow changing" in changed.json()["error"]
    assert Answer.objects.get().choice == "B"


def test_case_fragment_for_the_page_script_carries_what_it_needs(reader_client, study, reader):
    html = reader_client.get(case_url(study, 1), HTTP_HX_REQUEST="true").content.decode()
    assert 'id="workspace"' in html and "<html" not in html
    assert f'data-reader="{reader.pk}"' in html and f'data-study="{study.slug}"' in html
    assert f'data-next-url="{case_url(study, 2)}"' in html
    assert 'id="progress"' in html and "0 / 4 answered" in html and "4 left" in html


def test_case_pages_are_never_cached(reader_client, study):
    for response in (
        reader_client.get(case_url(study, 1)),
        reader_client.get(case_url(study, 1), HTTP_HX_REQUEST="true"),
        reader_client.get(reverse("reader-review", args=[study.slug])),
        reader_client.get(reverse("reader-start", args=[study.slug])),
    ):
        assert "no-store" in response["Cache-Control"]
    assert "HX-Request" in reader_client.get(case_url(study, 1))["Vary"]


def test_next_case_images_are_preloaded(reader_client, study):
    html = reader_client.get(case_url(study, 1)).content.decode()
    assert html.count("data-preload") == 2


def test_missing_choice_is_refused_and_nothing_saved(reader_client, study):
    response = reader_client.post(answer_url(study, 1), {"difficulty": "easy"})
    assert response.status_code == 422
    html = response.content.decode()
    assert "Choose one of the options" in html and 'value="easy" required checked' not in html
    assert not Answer.objects.exists()


def test_out_of_range_rating_is_refused(reader_client, study):
    response = answer(reader_client, study, 1, difficulty="impossible")
    assert response.status_code == 422 and not Answer.objects.exists()


def test_double_submit_leaves_one_answer_and_no_error(reader_client, study):
    first = answer(reader_client, study, 1, choice="B", script=True)
    second = answer(reader_client, study, 1, choice="B", script=True)
    assert first.status_code == second.status_code == 200
    assert Answer.objects.count() == 1 and not AnswerRevision.objects.exists()


def test_second_tab_cannot_overwrite_when_revision_is_off(reader_client, study):
    study.allow_revision = False
    study.save()
    answer(reader_client, study, 1, choice="B")
    response = answer(reader_client, study, 1, choice="D", script=True)
    assert response.status_code == 409
    assert "does not allow changing" in response.content.decode()
    assert Answer.objects.get().choice == "B"
    html = reader_client.get(case_url(study, 1)).content.decode()
    assert "can no longer be changed" in html and "Previous" not in html


def test_revision_through_the_page_is_recorded(reader_client, study, reader):
    answer(reader_client, study, 1, choice="B")
    answer(reader_client, study, 1, choice="C")
    assert Answer.objects.get().choice == "C"
    revision = AnswerRevision.objects.get()
    assert (revision.old["choice"], revision.new["choice"], revision.editor) == ("B", "C", reader)


def test_case_page_shows_my_previous_answer(reader_client, study):
    answer(reader_client, study, 1, choice="D", difficulty="medium", comment="my note")
    html = reader_client.get(case_url(study, 1)).content.decode()
    checked = set(re.findall(r'<input type="radio" name="(\w+)" value="(\w+)"[^>]* checked', html))
    assert checked == {("choice", "D"), ("difficulty", "medium")}
    assert "my note" in html and "Save change" in html


def test_random_order_is_per_reader_and_stable(study, reader, other_reader):
    from tests.factories import build_study as build

    big = build(30, random_order=True)
    MembershipFactory(study=big, user=reader, role=Role.READER)
    MembershipFactory(study=big, user=other_reader, role=Role.READER)
    mine = ordered_item_ids(big, reader)
    assert mine == ordered_item_ids(big, reader)
    assert mine != ordered_item_ids(big, other_reader)
    assert sorted(mine) == sorted(big.items.values_list("id", flat=True))
    in_study_order = list(big.items.order_by("position").values_list("id", flat=True))
    assert mine != in_study_order
    big.random_order = False
    assert ordered_item_ids(big, reader) == in_study_order


def test_last_answer_goes_to_review(reader_client, study):
    for n in (1, 2, 3):
        answer(reader_client, study, n)
    response = answer(reader_client, study, 4)
    assert response.url == reverse("reader-review", args=[study.slug])


def test_review_lists_unanswered_and_final_submit_needs_confirmation(reader_client, study, reader):
    answer(reader_client, study, 1)
    answer(reader_client, study, 3)
    review_url = reverse("reader-review", args=[study.slug])
    html = reader_client.get(review_url).content.decode()
    assert "2 cases not answered yet" in html
    assert f'href="{case_url(study, 2)}"' in html and f'href="{case_url(study, 4)}"' in html
    response = reader_client.post(review_url, {})
    assert response.status_code == 200 and "Tick the box" in response.content.decode()
    assert not ReaderCompletion.objects.exists()
    response = reader_client.post(review_url, {"confirm": "1"})
    assert response.url == reverse("reader-done", args=[study.slug])
    done = reader_client.get(response.url).content.decode()
    assert study.closing_text in done
    assert ReaderCompletion.objects.get(reader=reader).locked


def test_after_final_submit_answers_are_locked(reader_client, study):
    answer(reader_client, study, 1, choice="A")
    reader_client.post(reverse("reader-review", args=[study.slug]), {"confirm": "1"})
    response = answer(reader_client, study, 1, choice="B", script=True)
    assert response.status_code == 409 and "locked" in response.content.decode()
    assert answer(reader_client, study, 2, choice="B").status_code == 409
    assert Answer.objects.get().choice == "A"
    start = reader_client.get(reverse("reader-start", args=[study.slug]))
    assert start.url == reverse("reader-review", args=[study.slug])


def test_home_shows_finished(reader_client, study):
    reader_client.post(reverse("reader-review", args=[study.slug]), {"confirm": "1"})
    assert "Finished" in reader_client.get("/").content.decode()


def test_password_change_page(reader_client):
    response = reader_client.get(reverse("password_change"))
    assert b'name="new_password1"' in response.content


def test_outsider_home_is_empty(client, outsider, study):
    client.force_login(outsider)
    html = client.get("/").content.decode()
    assert "not a member of any study" in html and study.title not in html


def test_user_in_two_studies_sees_both(client, db):
    user = UserFactory(username="both")
    a, b = build_study(1), build_study(1)
    MembershipFactory(study=a, user=user, role=Role.READER)
    MembershipFactory(study=b, user=user, role=Role.READER)
    client.force_login(user)
    html = client.get("/").content.decode()
    assert a.title in html and b.title in html


def test_case_page_radios_carry_the_vocabulary_and_its_shortcut_keys(reader_client, study):
    """The page's radios and keys come from readerstudy.vocabulary, the one definition."""
    from readerstudy.vocabulary import SHORTCUTS

    html = reader_client.get(case_url(study, 1)).content.decode()
    rendered = set(
        re.findall(r'<input type="radio" name="(\w+)" value="(\w+)"[^>]*data-keys="([^"]+)"', html)
    )
    expected = {
        (field, value, " ".join(keys))
        for field, values in SHORTCUTS.items()
        for value, keys in values.items()
    }
    assert rendered == expected


def test_review_list_carries_only_my_saved_answers_for_the_draft_check(
    reader_client, study, reader, other_reader
):
    """The list drops a browser draft equal to the saved answer: it needs the reader's own
    saved values on each answered case, and nobody else's."""
    import json

    from annotation.services import answer_submit

    items = {n: study.items.get(id=i) for n, i in enumerate(ordered_item_ids(study, reader), 1)}
    answer_submit(reader=reader, item=items[2], choice="C", difficulty="hard", comment="x")
    answer_submit(reader=other_reader, item=items[1], choice="D")
    html = reader_client.get(reverse("reader-review", args=[study.slug])).content.decode()
    saved = {
        int(n): json.loads(v.replace("&quot;", '"'))
        for n, v in re.findall(r'data-case="(\d+)" data-saved="([^"]*)"', html)
    }
    assert list(saved) == [2]
    assert saved[2]["choice"] == "C" and saved[2]["difficulty"] == "hard"
    assert saved[2]["comment"] == "x" and saved[2]["alignment"] == ""


def test_a_locked_case_shows_the_readers_own_answer_and_ratings(reader_client, study):
    """After the final submit the case still says what this reader chose and rated, in
    words beside the disabled controls (issue 26, item 10)."""
    answer(reader_client, study, 1, choice="C", difficulty="hard", alignment="no", comment="subtle")
    reader_client.post(reverse("reader-review", args=[study.slug]), {"confirm": "1"})
    html = reader_client.get(case_url(study, 1)).content.decode()
    note = re.search(r"<p[^>]*data-locked-answer>(.*?)</p>", html, flags=re.S).group(1)
    text = re.sub(r"<[^>]+>", "", note)
    assert text.startswith("Your answer: C")
    assert "Difficulty: Hard" in text and "Fits the image: No" in text and "“subtle”" in text
    assert "?:" not in text  # each rating named by a noun, not by the question it answers
    assert "can no longer be changed" in text
    assert re.search(
        r'<input type="radio" name="difficulty" value="hard"[^>]*disabled checked', html
    )
