from django import template

register = template.Library()


@register.filter
def pct(value) -> str:
    """A fraction as a percentage with one decimal; a dash when undefined."""
    if value is None or value != value:
        return "–"
    return f"{float(value) * 100:.1f}%"


@register.filter
def pvalue(value) -> str:
    if value is None or value != value:
        return "–"
    return "< 0.001" if value < 0.001 else f"{value:.3f}"


@register.filter
def pct0(value) -> str:
    """A fraction as a whole percentage; a dash when undefined (dense tables)."""
    if value is None or value != value:
        return "–"
    return f"{float(value) * 100:.0f}%"


@register.filter
def num(value, digits: int = 2) -> str:
    """A number with `digits` decimals (a minus sign, not a hyphen); a dash when undefined."""
    if value is None or value != value:
        return "–"
    return f"{float(value):.{int(digits)}f}".replace("-", "−")


@register.simple_tag
def interval(low, high, fmt: str = "pct", why: str = "") -> str:
    """ "low – high", or the reason there is no interval (never a bare 0 – 0)."""
    if low is None or high is None or low != low or high != high:
        return why or "not estimable"
    show = pct if fmt == "pct" else num
    return f"{show(low)} – {show(high)}"
