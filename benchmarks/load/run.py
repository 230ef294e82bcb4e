"""Load-and-fault benchmark: 20 readers at once on a 200-case study, then a SIGKILL mid-run.

PostgreSQL (a fresh database on 127.0.0.1:5432, dropped afterwards) and gunicorn on 127.0.0.1,
production settings (DEBUG=0, WhiteNoise, collected static files). Two runs:

1. clean: every reader answers every case; latency of the case page and of the answer post
   beside /healthz's (a trivial endpoint) under the same load;
2. fault: the same on a second study, and when half the answers are acknowledged every
   gunicorn process is killed with SIGKILL; it is restarted after a second and readers retry.

After each run the database is checked: every answer acknowledged with a 2xx is there with the
acknowledged choice (lost = 0), no reader has two answers for one question (duplicates = 0), a
repeated identical post created no revision, and no response was a 5xx.

Run: .venv/bin/python benchmarks/load/run.py [--readers 20] [--cases 200] [--workers 5]
Needs: PostgreSQL on 127.0.0.1:5432 (user postgres, trust auth), psql on the PATH.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
PASSWORD = "load-bench-pass-1"
PORT = 8765
BASE = f"http://127.0.0.1:{PORT}"


def psql(sql: str) -> None:
    subprocess.run(
        ["psql", "-h", "127.0.0.1", "-U", "postgres", "-d", "postgres", "-qc", sql],
        check=True,
        capture_output=True,
    )


def server_env(database_url: str, work: Path) -> dict[str, str]:
    return {
        **os.environ,
        "DEBUG": "0",
        "SECRET_KEY": "load-bench-" + "q8Zr2" * 10,
        "DATABASE_URL": database_url,
        "MEDIA_ROOT": str(work / "media"),
        "STATIC_ROOT": str(work / "static"),
        "ALLOWED_HOSTS": "127.0.0.1",
        # Plain HTTP on loopback; the production recipe terminates TLS in front.
        "SECURE_SSL_REDIRECT": "0",
        "SESSION_COOKIE_SECURE": "0",
        "CSRF_COOKIE_SECURE": "0",
    }


class Server:
    """gunicorn in its own process group, so SIGKILL reaches the master and every worker."""

    def __init__(self, env: dict[str, str], workers: int, log: Path):
        self.env, self.workers, self.log = env, workers, log
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        command = [
            str(Path(sys.executable).parent / "gunicorn"),
            "readerstudy.config.wsgi",
            f"--bind=127.0.0.1:{PORT}",
            f"--workers={self.workers}",
            "--timeout=60",
        ]
        with self.log.open("a") as log:
            self.process = subprocess.Popen(
                command, cwd=ROOT, env=self.env, stdout=log, stderr=log, start_new_session=True
            )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if requests.get(f"{BASE}/healthz", timeout=10).status_code == 200:
                    return
            except requests.RequestException:
                time.sleep(0.2)
        raise RuntimeError(f"gunicorn did not come up; see {self.log}")

    def kill(self) -> None:
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(timeout=30)


def percentile(values: list[float], q: float) -> float:
    return (
        statistics.quantiles(values, n=100, method="inclusive")[q - 1] if values else float("nan")
    )


def run_readers(slug: str, usernames: list[str], n_cases: int, on_progress=None):
    from benchmarks.load.reader import Reader

    readers = [Reader(BASE, name, PASSWORD, slug, seed=i) for i, name in enumerate(usernames)]
    stop = threading.Event()
    watcher = None
    if on_progress is not None:

        def watch():
            while not stop.wait(0.05):
                if on_progress(sum(len(r.tally.acked) for r in readers)):
                    return

        watcher = threading.Thread(target=watch)
        watcher.start()
    started = time.perf_counter()
    with ThreadPoolExecutor(len(readers)) as pool:
        tallies = list(pool.map(lambda r: r.read(n_cases), readers))
    elapsed = time.perf_counter() - started
    stop.set()
    if watcher:
        watcher.join()
    return readers, tallies, elapsed


def verify(slug: str, readers) -> dict:
    """Compare what the server acknowledged with what the database holds."""
    from django.contrib.auth import get_user_model
    from django.db.models import Count

    from annotation.models import Answer, AnswerRevision
    from annotation.selectors import ordered_item_ids
    from readerstudy.models import ReaderStudy

    study = ReaderStudy.objects.get(slug=slug)
    users = {u.username: u for u in get_user_model().objects.filter(username__startswith="load")}
    lost = wrong = acked = 0
    for reader in readers:
        user = users[reader.username]
        order = ordered_item_ids(study, user)
        stored = dict(
            Answer.objects.filter(item__study=study, reader=user).values_list("item_id", "choice")
        )
        for number, choice in reader.tally.acked.items():
            acked += 1
            held = stored.get(order[number - 1])
            lost += held is None
            wrong += held is not None and held != choice
    answers = Answer.objects.filter(item__study=study)
    duplicates = (
        answers.values("item_id", "reader_id").annotate(n=Count("id")).filter(n__gt=1).count()
    )
    return {
        "acknowledged": acked,
        "answers_in_db": answers.count(),
        "lost": lost,
        "changed": wrong,
        "duplicates": duplicates,
        "revisions": AnswerRevision.objects.filter(answer__item__study=study).count(),
    }


def summarise(tallies, elapsed: float) -> dict:
    latency: dict[str, list[float]] = {}
    statuses: dict[int, int] = {}
    for tally in tallies:
        for kind, values in tally.latency.items():
            latency.setdefault(kind, []).extend(values)
        for code, n in tally.statuses.items():
            statuses[code] = statuses.get(code, 0) + n
    ms = {
        kind: {
            "n": len(values),
            "p50_ms": round(1000 * percentile(values, 50), 1),
            "p95_ms": round(1000 * percentile(values, 95), 1),
        }
        for kind, values in latency.items()
    }
    base = ms["healthz"]
    for kind in ("case page", "submit"):
        ms[kind]["p50_ratio"] = round(ms[kind]["p50_ms"] / base["p50_ms"], 1)
        ms[kind]["p95_ratio"] = round(ms[kind]["p95_ms"] / base["p95_ms"], 1)
    return {
        "seconds": round(elapsed, 1),
        "requests": sum(statuses.values()),
        "requests_per_s": round(sum(statuses.values()) / elapsed, 1),
        "status_codes": dict(sorted(statuses.items())),
        "5xx": sum(n for code, n in statuses.items() if code >= 500),
        "duplicate_posts": sum(t.duplicate_posts for t in tallies),
        "reloads": sum(t.reloads for t in tallies),
        "connection_errors_retried": sum(t.connection_errors for t in tallies),
        "latency": ms,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--readers", type=int, default=20)
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--workers", type=int, default=5, help="gunicorn workers (2 x cores + 1)")
    parser.add_argument("--out", type=Path, help="Write the figures as JSON here too.")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="load-bench-"))
    database = f"readerstudy_load_{os.getpid()}"
    database_url = f"postgres://postgres@127.0.0.1:5432/{database}"
    psql(f"CREATE DATABASE {database}")
    env = server_env(database_url, work)
    os.environ.update(env)
    server = Server(env, args.workers, work / "gunicorn.log")
    try:
        import django

        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "readerstudy.config.settings")
        django.setup()
        from django.core.management import call_command

        from benchmarks.load.fixtures import create_data, create_readers

        call_command("migrate", verbosity=0)
        call_command("collectstatic", "--noinput", verbosity=0)
        usernames = create_readers(args.readers, PASSWORD)
        create_data(work / "data", n_cases=args.cases, readers=usernames, slugs=["load", "fault"])
        server.start()

        print(f"clean run: {args.readers} readers x {args.cases} cases ...", flush=True)
        readers, tallies, elapsed = run_readers("load", usernames, args.cases)
        clean = {**summarise(tallies, elapsed), "database": verify("load", readers)}

        print("fault run: SIGKILL at half the answers ...", flush=True)
        half = args.readers * args.cases // 2
        killed: dict[str, object] = {}

        def kill_at_half(acked: int) -> bool:
            if acked < half:
                return False
            killed["acknowledged_before_kill"] = acked
            server.kill()
            time.sleep(1.0)
            started = time.perf_counter()
            server.start()
            killed["restart_s"] = round(time.perf_counter() - started, 1)
            return True

        readers, tallies, elapsed = run_readers("fault", usernames, args.cases, kill_at_half)
        fault = {**summarise(tallies, elapsed), **killed, "database": verify("fault", readers)}
    finally:
        server.stop()
        from django.db import connections

        connections.close_all()
        psql(f"DROP DATABASE IF EXISTS {database}")

    results = {
        "readers": args.readers,
        "cases": args.cases,
        "gunicorn_workers": args.workers,
        "cpus": os.cpu_count(),
        "clean": clean,
        "fault": fault,
    }
    print(json.dumps(results, indent=2))
    if args.out:
        args.out.write_text(json.dumps(results, indent=2) + "\n")
    ok = all(
        run["5xx"] == 0
        and run["database"]["lost"] == 0
        and run["database"]["changed"] == 0
        and run["database"]["duplicates"] == 0
        and run["database"]["revisions"] == 0
        and run["database"]["acknowledged"] == args.readers * args.cases
        for run in (clean, fault)
    )
    print("OK: nothing lost, nothing duplicated, no 5xx" if ok else "FAILED", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
