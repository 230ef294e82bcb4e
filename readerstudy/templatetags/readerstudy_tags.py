from django import template

from readerstudy.imaging import WINDOW_PRESETS
from readerstudy.platform import links
from readerstudy.vocabulary import PAGE_SHORTCUTS, RESULTS_SHORTCUTS, ReviewFlag, labelled

register = template.Library()


@register.simple_tag
def site_link(page: str, *args) -> str:
    """`{% site_link "pi-home" study.slug %}`: a page of a higher layer, as the composition
    root wires it (readerstudy.platform.links); "" when it wires none."""
    return links.site_link(page, *args)


@register.simple_tag
def window_presets() -> list[tuple[str, str, int]]:
    """The viewer's window presets (name, label, Shift+digit key), in key order."""
    return [(name, label, key) for key, (name, label) in enumerate(WINDOW_PRESETS, start=1)]


@register.simple_tag
def page_key(action: str) -> str:
    """The reading page's key for `action` ("comment", "pause"): vocabulary.PAGE_SHORTCUTS."""
    return PAGE_SHORTCUTS[action]


@register.simple_tag
def results_key(action: str) -> str:
    """The results pages' key for `action` ("misses", "next"): vocabulary.RESULTS_SHORTCUTS."""
    return RESULTS_SHORTCUTS[action]


@register.filter
def key_label(key: str) -> str:
    """A key as its badge shows it: capitals for letters, arrows for arrow keys."""
    return {"ArrowLeft": "←", "ArrowRight": "→"}.get(key, key.upper())


@register.filter
def seconds(ms) -> str:
    """Milliseconds as a short duration: 42 s, 3 min 5 s, 1 h 02 min."""
    if ms is None:
        return "–"
    total = round(float(ms) / 1000)
    if total < 60:
        return f"{total} s"
    minutes, secs = divmod(total, 60)
    if minutes < 60:
        return f"{minutes} min {secs} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


@register.filter
def flag_labels(values) -> list[str]:
    """Review flag codes as people read them (audit entries store the codes)."""
    labels = labelled(ReviewFlag)
    return [labels.get(v, v) for v in values or []]


@register.filter
def at(mapping, key):
    """`{{ corrections|at:row.item.id }}`: a dict's value for a key (None when absent)."""
    return mapping.get(key) if hasattr(mapping, "get") else None
