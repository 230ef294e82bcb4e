"""Template tags of the reading and review pages (Django loads them from this package)."""
