"""Template tags of the site's frame (Django loads them from this package)."""
