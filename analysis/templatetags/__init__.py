"""Template tags of the analysis pages (Django loads them from this package)."""
