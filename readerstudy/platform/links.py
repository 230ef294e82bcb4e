"""Links from a lower layer to pages a higher layer serves, through the composition root.

The domain's pages (creating a study, its members) send a PI back to the study's dashboard,
and the expert's review page to the next question in the queue, but those pages belong to the
layers above. `settings.SITE_LINKS` (the composition root) names them; this module reverses
them, so a lower layer names a role's page ("pi-home"), never a higher app's URL name.
"""

from __future__ import annotations

from django.conf import settings
from django.urls import reverse


def site_link(page: str, *args) -> str:
    """The URL of `page` (a key of settings.SITE_LINKS); "" when the site wires no such page."""
    name = settings.SITE_LINKS.get(page)
    return reverse(name, args=args) if name else ""
