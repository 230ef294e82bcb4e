from django import template

from annotation.sessions import moment_words

register = template.Library()


@register.filter
def moment(when) -> str:
    """A reader's session moment in words, with the time zone (sessions.moment_words)."""
    return moment_words(when) if when else ""
