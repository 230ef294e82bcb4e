"""Links follow the layers: no module or template of a lower layer names a URL a higher layer
serves, except through the composition root (settings.SITE_LINKS). The layers are the import
contract's, read from pyproject.toml."""

from pathlib import Path

from django.conf import settings
from django.urls import reverse

from tools.check_url_layers import upward_links, url_owners
from tools.import_contracts import layers_from_pyproject


def test_no_lower_layer_links_a_higher_layers_page():
    assert [str(link) for link in upward_links()] == []


def test_url_names_are_owned_by_the_app_that_serves_them():
    owners = url_owners()
    assert owners["pi-members"] == "readerstudy"
    assert owners["pi-dashboard"] == "annotation"
    assert owners["expert-next"] == "analysis"
    assert owners["api-analysis"] == "analysis"


def test_the_check_finds_links_upward_and_spares_the_composition_root(tmp_path: Path):
    files = {
        "annotation/expert_views.py": 'return redirect("expert-next", slug=slug)\n',
        "annotation/reviews.py": 'url = reverse("reader-case", args=[slug, 1])\n',  # its own
        "readerstudy/config/urls.py": 'reverse("analysis")\n',  # the composition root
        "readerstudy/views.py": "x = 1\nreturn redirect('pi-dashboard', slug=slug)\n",
        "analysis/views.py": 'redirect("pi-members", slug=slug)\n',  # downward: fine
        "readerstudy/platform/errors.py": 'reverse("pi-members")\n',  # the domain's, above it
        "readerstudy/services/studies.py": 'reverse("account")\n',  # the platform's: fine
        "templates/registration/login.html": '<a href="{% url "pi-members" %}">',  # the frame
        "templates/annotation/nav.html": "<a href=\"{% url 'analysis' study.slug %}\">",
        "templates/base.html": '<a href="{% url "home" %}">',
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    found = {(link.path, link.line, link.name) for link in upward_links(tmp_path)}
    assert found == {
        ("annotation/expert_views.py", 1, "expert-next"),
        ("readerstudy/views.py", 2, "pi-dashboard"),
        ("readerstudy/platform/errors.py", 1, "pi-members"),
        ("templates/annotation/nav.html", 1, "analysis"),
        ("templates/base.html", 1, "home"),
    }


def test_the_layers_are_the_import_contracts(tmp_path: Path):
    """A layer added to the contract is a layer of the check: analysis put below annotation
    makes annotation's link to an analysis page legal and the reverse an upward link."""
    assert layers_from_pyproject()[0] == "readerstudy.config"
    swapped = tmp_path / "pyproject.toml"
    swapped.write_text(
        '[[tool.importlinter.contracts]]\nid = "layers"\ntype = "nested_layers"\n'
        'layers = ["readerstudy.config", "annotation", "analysis", "readerstudy"]\n'
    )
    layers = layers_from_pyproject(swapped)
    for name, text in {
        "annotation/expert_views.py": 'return redirect("expert-next", slug=slug)\n',
        "analysis/views.py": 'redirect("pi-dashboard", slug=slug)\n',
    }.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    (tmp_path / "templates").mkdir()
    found = {(link.path, link.name) for link in upward_links(tmp_path, layers=layers)}
    assert found == {("analysis/views.py", "pi-dashboard")}


def test_every_site_link_names_a_page():
    extra = {"expert-evidence": [1]}  # and an item of the study
    for page, name in settings.SITE_LINKS.items():
        args = (
            []
            if page in {"home", "my-progress", "programme"}
            else ["a-study", *extra.get(page, [])]
        )
        assert reverse(name, args=args), page
