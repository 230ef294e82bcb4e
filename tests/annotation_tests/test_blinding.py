"""A reader never receives the truth, the report or another reader's answer.

Every reader-facing page and htmx fragment is rendered for a study whose explanation, findings
and impression hold sentinel strings, with another reader's answer present; none may appear.
The page must also be byte-identical whichever option is correct.
"""

import re

import pytest
from django.urls import reverse

from annotation.services import answer_submit
from readerstudy.models import Case, Question
from readerstudy.predictions.services import predictions_import
from readerstudy.question_versions import QuestionVersion

pytestmark = pytest.mark.django_db

SENTINELS = [
    "SENTINEL-EXPLANATION",
    "SENTINEL-FINDINGS",
    "SENTINEL-IMPRESSION",
    "OTHER-READER-COMMENT",
    "SENTINEL-PATIENT-ID",
]
CSRF = re.compile(r'(csrfmiddlewaretoken" value="|X-CSRFToken": ")[^"]+')


@pytest.fixture
def sentinel_study(study, other_reader):
    Question.objects.filter(dataset=study.dataset).update(explanation="SENTINEL-EXPLANATION")
    QuestionVersion.objects.filter(question__dataset=study.dataset).update(
        explanation="SENTINEL-EXPLANATION"
    )
    Case.objects.filter(dataset=study.dataset).update(
        findings="SENTINEL-FINDINGS",
        impression="SENTINEL-IMPRESSION",
        patient_id="SENTINEL-PATIENT-ID",
    )
    for item in study.items.all():
        answer_submit(reader=other_reader, item=item, choice="D", comment="OTHER-READER-COMMENT")
    rows = "\n".join(f"{i.question.source_id},SENTINEL-MODEL says B" for i in study.items.all())
    predictions_import(
        dataset=study.dataset,
        model_name="SENTINEL-MODEL",
        content=f"question_id,prediction\n{rows}\n".encode(),
    )
    return study


def reader_responses(client, study):
    slug = study.slug

    def case(n):
        return reverse("reader-case", args=[slug, n])

    def post(n, **d):
        return client.post(
            reverse("reader-answer", args=[slug, n]),
            d,
            HTTP_ACCEPT="application/json",
        )

    yield "home", client.get("/")
    yield "case 1", client.get(case(1))
    yield "case 1 fragment", client.get(case(1), HTTP_HX_REQUEST="true")
    yield "invalid answer (no JS)", client.post(reverse("reader-answer", args=[slug, 1]), {})
    yield "invalid answer receipt", post(1)
    yield "answer receipt", post(1, choice="A")
    yield "case 2 fragment (the prefetch)", client.get(case(2), HTTP_HX_REQUEST="true")
    yield "session", client.get(reverse("reader-session", args=[slug]))
    yield "instructions", client.get(reverse("reader-instructions", args=[slug]))
    yield "case 2 (after answering 1)", client.get(case(2))
    yield "case 1 (answered)", client.get(case(1))
    yield "review", client.get(reverse("reader-review", args=[slug]))
    for n in range(2, 5):
        yield f"answer {n}", post(n, choice="B")
    yield (
        "finish",
        client.post(reverse("reader-review", args=[slug]), {"confirm": "1"}, follow=True),
    )
    yield "done", client.get(reverse("reader-done", args=[slug]))
    yield "locked answer receipt", post(1, choice="C")
    yield "case 1 (locked)", client.get(case(1))


def test_no_reader_page_or_fragment_leaks_truth_report_or_other_answers(
    reader_client, sentinel_study
):
    seen = 0
    for name, response in reader_responses(reader_client, sentinel_study):
        html = response.content.decode()
        for sentinel in SENTINELS:
            assert sentinel not in html, f"{sentinel} leaked in {name}"
        assert not re.search(r"[\s\"'][\w-]*correct[\w-]*\s*=", html, re.I), name
        seen += 1
    assert seen == 19


def test_case_page_is_identical_whichever_option_is_correct(reader_client, sentinel_study):
    url = reverse("reader-case", args=[sentinel_study.slug, 1])
    pages = []
    for letter in "ABCD":
        Question.objects.filter(dataset=sentinel_study.dataset).update(correct=letter)
        QuestionVersion.objects.filter(question__dataset=sentinel_study.dataset).update(
            correct=letter, accepted=letter
        )
        pages.append(CSRF.sub("", reader_client.get(url).content.decode()))
    assert pages[0] == pages[1] == pages[2] == pages[3]


def test_reader_view_model_has_no_truth_fields():
    from dataclasses import fields

    from annotation.selectors import ReaderAnswer, ReaderCase, ReaderImage

    names = {f.name for cls in (ReaderCase, ReaderAnswer, ReaderImage) for f in fields(cls)}
    forbidden = {"correct", "explanation", "findings", "impression", "truth", "predictions"}
    assert not names & forbidden
