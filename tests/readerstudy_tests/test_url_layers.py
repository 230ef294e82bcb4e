"""Links follow the layers (issue 21): no module or template of a lower layer names a URL a
higher layer serves, except through the composition root (settings.SITE_LINKS)."""

from pathlib import Path

from django.conf import settings
from django.urls import reverse

from tools.check_url_layers import upward_links, url_owners


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
        "readerstudy/urls.py": 'reverse("analysis")\n',  # the composition root
        "readerstudy/views.py": "x = 1\nreturn redirect('pi-dashboard', slug=slug)\n",
        "analysis/views.py": 'redirect("pi-members", slug=slug)\n',  # downward: fine
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
        ("templates/annotation/nav.html", 1, "analysis"),
        ("templates/base.html", 1, "home"),
    }


def test_every_site_link_names_a_page():
    extra = {"expert-evidence": [1]}  # and an item of the study
    for page, name in settings.SITE_LINKS.items():
        args = (
            []
            if page in {"home", "my-progress", "programme"}
            else ["a-study", *extra.get(page, [])]
        )
        assert reverse(name, args=args), page
