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
