"""The analysis page's table of contents, read from the page's own HTML: every
`<section id=...>` with the text of its first heading, nested as the sections are.

Read from the markup rather than listed again, so a section added to a template is in the
contents with nothing else to change, and a section a study does not show (the aided-vs-
unaided one of a single-arm study) is not.
"""

from __future__ import annotations

from dataclasses import dataclass
from html.parser import HTMLParser

HEADINGS = ("h2", "h3", "h4")


@dataclass(frozen=True)
class Entry:
    id: str
    title: str
    depth: int  # 0: a section of the page, 1: a section within one


class _Sections(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.entries: list[Entry] = []
        self._open: list[str | None] = []  # per open <section>: its id until titled, else None
        self._heading: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "section":
            self._open.append(dict(attrs).get("id"))
        elif tag in HEADINGS and self._open and self._open[-1]:
            self._heading = []

    def handle_data(self, data):
        if self._heading is not None:
            self._heading.append(data)

    def handle_endtag(self, tag):
        if tag == "section" and self._open:
            self._open.pop()
        elif tag in HEADINGS and self._heading is not None:
            title = " ".join("".join(self._heading).split())
            self.entries.append(Entry(self._open[-1], title, len(self._open) - 1))
            self._open[-1] = None  # titled: later headings are the section's own
            self._heading = None


def page_contents(*fragments: str) -> list[Entry]:
    """The sections of `fragments` (HTML, in page order), each with its first heading."""
    found: list[Entry] = []
    for html in fragments:
        parser = _Sections()
        parser.feed(html)
        parser.close()
        found += parser.entries
    return found


def contents_tree(entries: list[Entry]) -> list[dict]:
    """The entries as the contents list shows them: each section with the sections within it
    (`children`, one level: deeper ones go with their top section)."""
    tree: list[dict] = []
    for entry in entries:
        item = {"id": entry.id, "title": entry.title, "children": []}
        if entry.depth and tree:
            tree[-1]["children"].append(item)
        else:
            tree.append(item)
    return tree
