"""The domain's management commands live in `commands` (Django finds them there)."""
