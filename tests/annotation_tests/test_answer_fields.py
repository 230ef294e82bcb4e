"""The answer's fields are described once (readerstudy.vocabulary.ANSWER_FIELDS), and
docs/architecture.md says truly which files a new field touches."""

import re
from pathlib import Path

from django.conf import settings

from annotation import selectors
from annotation.forms import AnswerForm
from annotation.serializers import (
    AnswerInputSerializer,
    AnswerResultSerializer,
    ReaderAnswerSerializer,
)
from readerstudy.vocabulary import ANSWER_FIELD_NAMES

ROOT = Path(settings.BASE_DIR)
# An answer field the app already has, to find where the field list is spelled out.
PROBE = "alignment"
# Files that name the probe for a meaning of its own, not as one of "the answer's fields":
# a new field needs nothing there.
OWN_USE = {
    "annotation/demo.py": "the demo's made-up answers",
    "annotation/reviews.py": "the readers' fit answers summarised for the experts",
    "templates/annotation/expert_review.html": "shows that summary",
    "analysis/stats/items.py": "item analysis counts the fit votes",
}


def readme_files() -> set[str]:
    text = (ROOT / "docs" / "architecture.md").read_text()
    section = text[text.index("**Adding an answer field**") :]
    section = section[: section.index("\n\n", section.index("\n1. "))]
    items = [line for line in section.splitlines() if re.match(r"\d+\. ", line)]
    return {path for line in items for path in re.findall(r"`([\w/]+\.\w+)`", line)}


def files_naming_the_probe() -> set[str]:
    found = set()
    # The name as code (`"alignment"`, `.alignment`, `alignment=`), not in prose ("Image
    # alignment").
    word = re.compile(rf"(?<![A-Za-z] )(?<!\w){PROBE}\b")
    for folder in ("readerstudy", "annotation", "analysis", "templates", "static"):
        for path in (ROOT / folder).rglob("*"):
            rel = path.relative_to(ROOT).as_posix()
            code = path.suffix in {".py", ".html", ".js"} and "/migrations/" not in rel
            if code and word.search(path.read_text()):
                found.add(rel)
    return found


def test_the_readme_lists_every_file_that_spells_out_the_answer_fields():
    listed = readme_files()
    assert len(listed) + 1 <= 5  # and a migration
    assert files_naming_the_probe() - set(OWN_USE) == listed


def test_the_form_the_api_the_page_and_the_export_follow_the_vocabulary():
    fields = list(ANSWER_FIELD_NAMES)
    assert list(AnswerForm.base_fields)[: len(fields)] == fields
    assert list(AnswerInputSerializer().fields)[: len(fields)] == fields
    assert list(ReaderAnswerSerializer().fields) == fields
    assert list(AnswerResultSerializer().fields)[2 : 2 + len(fields)] == fields
    assert list(selectors.ReaderAnswer.__dataclass_fields__) == fields
