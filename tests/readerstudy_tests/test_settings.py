"""Settings fail loudly on bad environment values."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def load_settings(**env) -> subprocess.CompletedProcess:
    clean = {
        k: v for k, v in os.environ.items() if k not in {"DEBUG", "SECRET_KEY", "DATABASE_URL"}
    }
    clean["ENV_FILE"] = os.devnull  # a developer's own .env must not change these tests
    clean.update(env)
    code = (
        "import readerstudy.config.settings as s; print(s.DATABASES['default']['ENGINE'], s.DEBUG)"
    )
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=clean, capture_output=True, text=True
    )


def test_secret_key_required_when_debug_off():
    result = load_settings(DEBUG="0")
    assert result.returncode != 0
    assert "SECRET_KEY is required when DEBUG is off" in result.stderr


def test_a_dotenv_file_fills_in_what_the_environment_leaves_unset(tmp_path):
    env_file = tmp_path / ".env"
    env_file.write_text("DEBUG=0\nSECRET_KEY=from-the-file\nDATABASE_URL=sqlite:///x.db\n")
    result = load_settings(ENV_FILE=str(env_file))
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["django.db.backends.sqlite3", "False"]
    result = load_settings(ENV_FILE=str(env_file), DEBUG="1")  # the real environment wins
    assert result.stdout.split() == ["django.db.backends.sqlite3", "True"]


def test_debug_must_be_a_boolean():
    result = load_settings(DEBUG="maybe", SECRET_KEY="x")
    assert result.returncode != 0 and "DEBUG='maybe' is not a boolean" in result.stderr


def test_bad_database_url_fails():
    result = load_settings(DEBUG="1", DATABASE_URL="nosuchdb://x")
    assert result.returncode != 0 and "DATABASE_URL" in result.stderr


@pytest.mark.parametrize(
    ("url", "engine"),
    [("sqlite:///tmp.db", "sqlite3"), ("postgres://postgres@127.0.0.1:5432/x", "postgresql")],
)
def test_database_url_selects_engine(url, engine):
    result = load_settings(DEBUG="1", DATABASE_URL=url)
    assert result.returncode == 0, result.stderr
    assert engine in result.stdout


def test_cache_url_selects_a_shared_cache(tmp_path):
    code = "import readerstudy.config.settings as s; print(s.CACHES['default']['BACKEND'])"
    for url, backend in [
        (None, "locmem.LocMemCache"),
        (f"file://{tmp_path}", "filebased.FileBasedCache"),
        ("redis://127.0.0.1:6379/1", "redis.RedisCache"),
    ]:
        env = {k: v for k, v in os.environ.items() if k != "CACHE_URL"}
        env.update(ENV_FILE=os.devnull, DEBUG="1", **({"CACHE_URL": url} if url else {}))
        result = subprocess.run(
            [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True
        )
        assert result.stdout.strip().endswith(backend), result.stderr


@pytest.mark.parametrize("url", ["memcached://x", "file://relative/dir", "redis://"])
def test_a_bad_cache_url_is_refused_at_start_up(url):
    result = load_settings(DEBUG="1", CACHE_URL=url)
    assert result.returncode != 0
    assert "is not a cache URL" in result.stderr


def _tasks_settings(**env) -> subprocess.CompletedProcess:
    code = (
        "import readerstudy.config.settings as s; "
        "print(s.TASKS['default']['BACKEND'], s.CACHES['default']['BACKEND'], s.RQ_QUEUES)"
    )
    clean = {k: v for k, v in os.environ.items() if k not in {"TASKS_URL", "CACHE_URL"}}
    clean.update(ENV_FILE=os.devnull, DEBUG="1", **env)
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=clean, capture_output=True, text=True
    )


@pytest.mark.parametrize(
    ("url", "backend"),
    [
        (None, "django_tasks_db.DatabaseBackend"),
        ("db://", "django_tasks_db.DatabaseBackend"),
        ("redis://127.0.0.1:6379/6", "django_tasks_rq.RQBackend"),
        ("immediate://", "ImmediateBackend"),
    ],
)
def test_tasks_url_selects_the_task_engine(url, backend):
    result = _tasks_settings(**({"TASKS_URL": url} if url else {}))
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[0].endswith(backend)
    if url and url.startswith("redis"):
        assert "redis://127.0.0.1:6379/6" in result.stdout  # the queue RQ workers read


def test_with_a_worker_the_default_cache_is_shared_and_locmem_is_refused():
    result = _tasks_settings(TASKS_URL="db://")
    assert result.stdout.split()[1].endswith("FileBasedCache"), result.stderr
    refused = _tasks_settings(TASKS_URL="db://", CACHE_URL="locmem://")
    assert refused.returncode != 0 and "private to one process" in refused.stderr


def test_tasks_run_in_the_caller_keep_a_private_cache():
    result = _tasks_settings(TASKS_URL="immediate://")
    assert result.stdout.split()[1].endswith("LocMemCache"), result.stderr
    chosen = _tasks_settings(TASKS_URL="immediate://", CACHE_URL="locmem://")
    assert chosen.returncode == 0, chosen.stderr


@pytest.mark.parametrize("url", ["rq://x", "db://elsewhere", "redis://", "redis://h/x", "db"])
def test_a_bad_tasks_url_is_refused_at_start_up(url):
    result = _tasks_settings(TASKS_URL=url)
    assert result.returncode != 0
    assert "is not a task backend URL" in result.stderr
