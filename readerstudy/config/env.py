"""Typed access to environment variables.

Settings fail loudly at start-up on a malformed value rather than running with a surprise
default: a typo in DEBUG or DATABASE_URL must never silently change behaviour in production.
"""

from __future__ import annotations

import os

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}
# The engines and caches the URLs name, for settings that depend on which one was chosen.
IMMEDIATE_TASKS = "django_tasks.backends.immediate.ImmediateBackend"
DATABASE_TASKS = "django_tasks_db.DatabaseBackend"
LOCMEM_CACHE = "django.core.cache.backends.locmem.LocMemCache"


def env_str(name: str, default: str | None = None) -> str | None:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name}={raw!r} is not a boolean; use 1/0, true/false, yes/no.")


def env_int(name: str, default: int, *, minimum: int | None = None) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name}={raw!r} is not an integer.") from exc
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name}={value} must be at least {minimum}.")
    return value


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


def env_cache(name: str, default: str) -> dict:
    """Django's default cache from a URL: `locmem://` (one process), `file:///abs/dir`
    (shared by every worker on one machine) or `redis://host:port/db` (shared by every
    machine; needs the `redis` package)."""
    raw = (os.environ.get(name) or default).strip()
    scheme, _, rest = raw.partition("://")
    if scheme == "locmem":
        return {"BACKEND": LOCMEM_CACHE, "LOCATION": rest}
    if scheme == "file" and rest.startswith("/"):
        return {"BACKEND": "django.core.cache.backends.filebased.FileBasedCache", "LOCATION": rest}
    if scheme in ("redis", "rediss") and rest:
        return {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": raw}
    raise ImproperlyConfigured(
        f"{name}={raw!r} is not a cache URL; use locmem://, file:///absolute/dir or "
        "redis://host:6379/0."
    )


def env_tasks(name: str, default: str) -> tuple[dict, dict]:
    """The task backend (Django's Tasks API, the `django-tasks` backport) from one URL, and the
    RQ queues it needs: `db://` (the default: this project's database, run by
    `manage.py db_worker`), `redis://host:6379/0` (RQ on Redis, run by `manage.py rqworker
    --with-scheduler`) or `immediate://` (run inside the caller: tests)."""
    raw = (os.environ.get(name) or default).strip()
    scheme, sep, rest = raw.partition("://")
    if not sep:
        scheme = ""  # not a URL at all
    if scheme == "db" and rest == "":
        return {"BACKEND": DATABASE_TASKS}, {}
    if scheme == "immediate" and rest == "":
        return {"BACKEND": IMMEDIATE_TASKS}, {}
    if scheme in ("redis", "rediss") and rest and not rest.startswith("/"):
        _, _, db = rest.partition("/")
        if db == "" or db.isdigit():
            return {"BACKEND": "django_tasks_rq.RQBackend"}, {"default": {"URL": raw}}
    raise ImproperlyConfigured(
        f"{name}={raw!r} is not a task backend URL; use db://, redis://host:6379/0 or immediate://."
    )
