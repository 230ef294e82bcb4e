"""The composition root: settings, the root and API URLs, the WSGI entry point.

It sits above every app (import-linter's layer contract in pyproject.toml) and may import any
of them; nothing imports it back (`django.conf.settings` is how the apps read settings).
"""
