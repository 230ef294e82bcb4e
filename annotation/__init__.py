"""Answers, reviews and reading, the middle layer: it may import the domain, never the analysis."""
