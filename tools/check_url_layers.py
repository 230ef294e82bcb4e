"""Links follow the layers: fail when a module or template of a lower layer names a URL that a
higher layer owns (`reverse("name")`, `redirect("name")`, `{% url "name" %}`).

import-linter sees imports, not URL names: a `redirect("expert-next")` in annotation couples it
to analysis as surely as an import would. The layers are the import contract's (the contract
"layers" in pyproject.toml, read by tools.import_contracts): the composition root on top may
name every page. A URL name is owned by the layer whose view serves it (Django's own views,
e.g. login, belong to no layer: anyone may link them). A lower layer reaches a higher layer's
page through the composition root instead: `settings.SITE_LINKS` names those pages, and
`readerstudy.platform.links` (with its template tags) reverses them.

Run: `python tools/check_url_layers.py` (make lint); exit status 1 with one line per link.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tools.import_contracts import layer_of, layers_from_pyproject  # noqa: E402

LAYERS = layers_from_pyproject()  # top first
PYTHON_LINK = re.compile(
    r"""\b(?:reverse|reverse_lazy|redirect|resolve_url)\(\s*(?P<q>["'])(?P<name>[\w:-]+)(?P=q)"""
)
TEMPLATE_LINK = re.compile(r"""\{%\s*url\s+(?P<q>["'])(?P<name>[\w:-]+)(?P=q)""")


@dataclass(frozen=True)
class Link:
    path: str
    line: int
    name: str
    source_layer: str
    owner_layer: str

    def __str__(self) -> str:
        return (
            f"{self.path}:{self.line}: {self.source_layer} links {self.name!r}, a page of "
            f"{self.owner_layer}; link it through the composition root (settings.SITE_LINKS)"
        )


def url_owners(layers: Sequence[str] = LAYERS) -> dict[str, str]:
    """URL name -> the layer whose view serves it (names of other apps' views are left out)."""
    from django.urls import URLPattern, URLResolver, get_resolver

    owners: dict[str, str] = {}

    def walk(patterns) -> None:
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                walk(pattern.url_patterns)
            elif isinstance(pattern, URLPattern) and pattern.name:
                view = pattern.callback
                view = getattr(view, "view_class", None) or getattr(view, "cls", None) or view
                layer = layer_of(view.__module__, layers)
                if layer:
                    owners[pattern.name] = layer

    walk(get_resolver().url_patterns)
    return owners


def _sources(root: Path, layers: Sequence[str]) -> Iterator[tuple[str, str, re.Pattern]]:
    """(relative path, layer, pattern) of every module and template that may link pages."""
    packages = dict.fromkeys(layer.split(".", 1)[0] for layer in layers)
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            rel = path.relative_to(root)
            if "migrations" in rel.parts:
                continue
            module = ".".join(rel.with_suffix("").parts).removesuffix(".__init__")
            yield rel.as_posix(), layer_of(module, layers), PYTHON_LINK
    # An app's templates are its layer's; the rest (the site's frame: base, errors, sign-in;
    # the domain's own apps' folders) are the bottom app's: every page extends the frame. A
    # layer inside an app's package (the platform under the domain) has no folder of its own.
    bottom_app = next(layer for layer in reversed(layers) if "." not in layer)
    for path in sorted((root / "templates").rglob("*.html")):
        rel = path.relative_to(root).as_posix()
        folder = path.relative_to(root / "templates").parts[0]
        yield rel, folder if folder in layers else bottom_app, TEMPLATE_LINK


def upward_links(
    root: Path = ROOT, owners: dict[str, str] | None = None, layers: Sequence[str] = LAYERS
) -> list[Link]:
    owners = url_owners(layers) if owners is None else owners
    rank = {layer: index for index, layer in enumerate(layers)}  # 0: the top
    found = []
    for rel, layer, pattern in _sources(root, layers):
        text = (root / rel).read_text()
        for match in pattern.finditer(text):
            owner = owners.get(match["name"])
            if owner and rank[owner] < rank[layer]:
                line = text.count("\n", 0, match.start()) + 1
                found.append(Link(rel, line, match["name"], layer, owner))
    return found


def main() -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "readerstudy.config.settings")
    import django

    django.setup()
    links = upward_links()
    for link in links:
        print(link)
    print(f"{len(links)} link(s) from a lower layer to a higher one", file=sys.stderr)
    return 1 if links else 0


if __name__ == "__main__":
    sys.exit(main())
