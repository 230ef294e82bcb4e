"""The predictions app's management commands live in `commands` (Django finds them there)."""
