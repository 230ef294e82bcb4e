"""WSGI entry point (gunicorn readerstudy.config.wsgi)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "readerstudy.config.settings")
application = get_wsgi_application()
