"""The formats every figure is drawn in, with their content types.

Apart from `plots` so that a process that only checks a format or serves a figure already
drawn (a web request) does not import matplotlib: only the process that draws does.
"""

FORMATS = {"png": "image/png", "svg": "image/svg+xml", "pdf": "application/pdf"}
