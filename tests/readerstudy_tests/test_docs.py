"""The README and docs/ say nothing the code contradicts: their links resolve, the guides' key
tables are the keys the code declares, the configuration table is the environment the settings
read, the command-line reference lists every command and option, the API page every endpoint,
and every package says what it holds (its docstring) and is named in the architecture page.
No database."""

import ast
import re
import unicodedata
from pathlib import Path

import pytest
from django.core.management import get_commands, load_command_class

from readerstudy import vocabulary

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
APPS = ("readerstudy", "annotation", "analysis")


def read(name: str) -> str:
    return (ROOT / name).read_text()


# ---------------------------------------------------------------- links


def anchors(text: str) -> set[str]:
    """GitHub's anchors of a Markdown file's headings."""
    found = set()
    fenced = False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        if fenced or not line.startswith("#"):
            continue
        title = line.lstrip("#").strip().lower()
        slug = "".join(
            c for c in title if c in " -_" or unicodedata.category(c)[0] in "LN"
        ).replace(" ", "-")
        found.add(slug)
    return found


def links(text: str) -> list[str]:
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    return re.findall(r"\]\(([^)\s]+)\)", text)


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_resolves_to_a_file_and_heading(doc):
    broken = []
    for target in links(doc.read_text()):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        file = (doc.parent / path).resolve() if path else doc
        if not file.exists() or (
            anchor and file.suffix == ".md" and anchor not in anchors(file.read_text())
        ):
            broken.append(target)
    assert broken == []


def test_the_readme_is_a_front_door():
    readme = read("README.md")
    assert len(readme.splitlines()) <= 250
    for page in ("guide/readers.md", "guide/experts.md", "guide/pis.md", "cli.md", "api.md"):
        assert f"](docs/{page})" in readme
    for page in ("operations.md", "development.md", "architecture.md", "benchmarks.md"):
        assert f"](docs/{page})" in readme


def test_benchmark_figures_have_one_home():
    """The README links the figures; it does not keep a copy to drift."""
    readme = read("README.md")
    assert "| goal |" not in readme and "p95" not in readme
    assert "## Current figures" in read("docs/benchmarks.md")


# ---------------------------------------------------------------- keys


def key_table(text: str, after: str) -> list[str]:
    """The first column of the first `| key | does |` table after `after`."""
    start = text.index("| key | does |", text.index(after))
    rows = []
    for line in text[start:].splitlines()[2:]:
        line = line.strip()
        if not line.startswith("|"):
            break
        rows.append(line.split(" | ")[0].lstrip("| "))
    return rows


NAMED = {"Space": " ", "←": "ArrowLeft", "→": "ArrowRight", "Esc": "Escape"}


def documented_keys(cells: list[str]) -> set[str]:
    """Keys as `KeyboardEvent.key` names them: a letter in either case is its lower case, Shift
    with a letter its upper case, Shift with a digit "Shift+digit" (the viewer's presets)."""
    keys = set()
    for cell in cells:
        for shift, first, last in re.findall(r"(`Shift`\+)?`([^`]+)`(?:–`([^`]+)`)?", cell):
            names = [chr(c) for c in range(ord(first), ord(last) + 1)] if last else [first]
            for name in names:
                name = NAMED.get(name, name)
                if shift and name.isdigit():
                    keys.add(f"Shift+{name}")
                elif shift:
                    keys.add(name.upper())
                else:
                    keys.add(name.lower() if len(name) == 1 else name)
    return keys


def viewer_keys() -> set[str]:
    """static/js/viewer-keys.js's KEYS, and Shift + a digit per window preset."""
    source = read("static/js/viewer-keys.js")
    body = re.search(r"const KEYS = Object\.freeze\(\{(.*?)\}\)", source, re.S).group(1)
    keys = {m[0] or m[1] for m in re.findall(r'"([^"]+)":|(\w+):', body)}
    presets = {f"Shift+{n}" for n in range(1, len(vocabulary.WindowPreset.choices) + 1)}
    return keys | presets


def script_keys(name: str) -> set[str]:
    """The keys a page's script tests by name (`key === "q"`, its `NAV` of arrow keys), Escape
    aside: it leaves a box or an overlay, which the guides say beside the key that opens them."""
    source = read(f"static/js/{name}")
    found = set(re.findall(r'key === "([^"]+)"', source))
    nav = re.search(r"const NAV = Object\.freeze\(\{(.*?)\}\)", source)
    found |= set(re.findall(r"(\w+):", nav.group(1))) if nav else set()
    return found - {"Escape"}


def values(shortcuts: dict) -> set[str]:
    return {key for keys in shortcuts.values() for key in keys}


def reading_page_keys() -> set[str]:
    """What the reading page binds: the answer form's keys (vocabulary.SHORTCUTS, for the
    fields the form has), the page's own keys its templates render (`{% page_key %}`), the
    viewer's, and the keys reader-keys.js tests by name."""
    from annotation.forms import AnswerForm

    keys = set()
    for field, shortcuts in vocabulary.SHORTCUTS.items():
        if field in AnswerForm.base_fields:
            keys |= values(shortcuts)
    for template in (ROOT / "templates" / "annotation").glob("*.html"):
        for action in re.findall(r'page_key "(\w+)"', template.read_text()):
            keys.add(vocabulary.PAGE_SHORTCUTS[action])
    return keys | viewer_keys() | script_keys("reader-keys.js")


def test_the_readers_key_table_is_the_reading_pages_keys():
    table = key_table(read("docs/guide/readers.md"), "**Pacing and keys.**")
    assert documented_keys(table) == reading_page_keys()


def test_the_experts_key_table_is_the_review_pages_keys():
    declared = {vocabulary.REVIEW_DEFAULTS_KEY} | viewer_keys() | script_keys("expert.js")
    for field in vocabulary.REVIEW_SHORTCUTS.values():
        declared |= values(field)
    table = key_table(read("docs/guide/experts.md"), "## Reviewing questions")
    assert documented_keys(table) == declared


def test_the_correction_key_table_is_the_correction_keys():
    declared = {"Enter"} | set(vocabulary.CORRECTION_PAGE_KEYS.values())
    for field in vocabulary.CORRECTION_SHORTCUTS.values():
        declared |= values(field)
    table = key_table(read("docs/guide/experts.md"), "**proposed correction**")
    assert documented_keys(table) == declared


# ---------------------------------------------------------------- configuration


def environment_read() -> set[str]:
    """Every variable readerstudy/config/settings.py reads: env_*("NAME"), os.environ.get."""
    source = read("readerstudy/config/settings.py")
    return set(re.findall(r'(?:env_\w+|os\.environ\.get)\(\s*"([A-Z][A-Z0-9_]*)"', source))


def configuration_table() -> set[str]:
    text = read("docs/operations.md")
    section = text[text.index("## Configuration") :]
    section = section[: section.index("\n## ")]
    names = set()
    for line in section.splitlines():
        if line.startswith("| `"):
            names |= set(re.findall(r"`([A-Z][A-Z0-9_]*)`", line.split(" | ")[0]))
    return names


def test_the_configuration_table_is_the_environment_the_settings_read():
    assert configuration_table() == environment_read()


# ---------------------------------------------------------------- command line


def project_commands() -> dict[str, object]:
    commands = get_commands().items()
    return {
        name: load_command_class(app, name) for name, app in commands if app.split(".")[0] in APPS
    }


def cli_sections() -> dict[str, str]:
    text = read("docs/cli.md")
    parts = re.split(r"^## ", text, flags=re.M)[1:]
    return {re.match(r"`(\w+)", part).group(1): part for part in parts if part.startswith("`")}


def test_the_cli_reference_lists_every_command_and_each_option():
    sections = cli_sections()
    commands = project_commands()
    assert set(sections) == set(commands)
    for name, command in commands.items():
        parser = command.create_parser("manage.py", name)
        base = {"-h", "--help", "--version", "-v", "--verbosity", "--settings", "--pythonpath"}
        base |= {"--traceback", "--no-color", "--force-color", "--skip-checks"}
        options = {o for a in parser._actions for o in a.option_strings if o.startswith("--")}
        options -= base
        spans = re.findall(r"`([^`]+)`", sections[name])
        said = {o for span in spans for o in re.findall(r"(?<![\w-])--[a-z][\w-]*", span)}
        assert (name, said) == (name, options)


# ---------------------------------------------------------------- packages


def packages() -> list[str]:
    found = []
    for app in (*APPS, "tools"):
        for init in sorted((ROOT / app).rglob("__init__.py")):
            if "migrations" not in init.parts:
                found.append(init.parent.relative_to(ROOT).as_posix().replace("/", "."))
    return found


def test_every_package_says_what_it_holds():
    """A package's docstring is where its role is written; the architecture page names it.
    (A table of every module would repeat the modules' own docstrings and be wrong after the
    next move; a package's role changes rarely, and a new one must say what it is.)"""
    silent = [
        p
        for p in packages()
        if not ast.get_docstring(ast.parse(read(p.replace(".", "/") + "/__init__.py")))
    ]
    assert silent == []
    text = read("docs/architecture.md")
    table = text[text.index("## Packages") :]
    table = table[: table.index("\n## ")]
    named = set(re.findall(r"`([\w.]+)`", table))
    assert set(packages()) - named == set()


# ---------------------------------------------------------------- API


def api_routes() -> set[str]:
    """Every route under /api/v1/, its parameters as `<>`."""
    from django.urls import URLResolver, get_resolver

    def walk(patterns, prefix=""):
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                yield from walk(pattern.url_patterns, prefix + str(pattern.pattern))
            else:
                yield prefix + str(pattern.pattern)

    routes = {r for r in walk(get_resolver().url_patterns) if r.startswith("api/v1/")}
    return {re.sub(r"<[^>]+>", "<>", r.removeprefix("api/v1/")) for r in routes}


def api_documented() -> set[str]:
    """The paths docs/api.md names (`studies/<slug>/…`, `…/cases/<n>/` after it)."""
    found = set()
    for span in re.findall(r"`([^`]+)`", read("docs/api.md")):
        for token in span.split():
            path = token.removeprefix("/api/v1/")
            if path.startswith("…/"):
                path = "studies/<slug>/" + path.removeprefix("…/")
            if re.match(r"(studies|auth)/", path) or path == "studies/":
                found.add(re.sub(r"<[^>]+>|SLUG", "<>", path))
    return found


def test_the_api_page_names_every_endpoint():
    assert api_routes() - api_documented() == set()
