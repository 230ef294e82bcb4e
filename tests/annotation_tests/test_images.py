"""Display images: login required, content-hash names, long-lived cache headers, no traversal."""

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db


@pytest.fixture
def display_file(_media_root, resources):
    target = _media_root / "display" / "ab" / ("ab" + "0" * 62 + ".png")
    target.parent.mkdir(parents=True)
    target.write_bytes((resources / "tiny_8bit.png").read_bytes())
    return "display/ab/" + target.name


def test_served_with_immutable_cache_headers(reader_client, display_file):
    response = reader_client.get(reverse("media-image", args=[display_file]))
    assert response.status_code == 200
    assert response["Content-Type"] == "image/png"
    assert "max-age=31536000" in response["Cache-Control"]
    assert "immutable" in response["Cache-Control"]
    assert b"".join(response.streaming_content).startswith(b"\x89PNG")


def test_anonymous_cannot_fetch_images(client, display_file):
    response = client.get(reverse("media-image", args=[display_file]))
    assert response.status_code == 302


@pytest.mark.parametrize(
    "path", ["display/../../etc/passwd", "demo-source/x.dcm", "display/ab/missing.png", "x"]
)
def test_only_derived_images_are_served(reader_client, path):
    assert reader_client.get(f"/img/{path}").status_code == 404


def test_case_page_links_images_by_content_hash(reader_client, study):
    html = reader_client.get(reverse("reader-case", args=[study.slug, 1])).content.decode()
    assert 'data-src="/img/display/aa/' in html
