"""Scale benchmark on loopback: 2 web servers, 2 task workers, one PostgreSQL, one Redis;
100 simulated readers, a PI, and one web server and one worker SIGKILLed mid-run.

The deployment is the README's Production layout on one machine: two independent gunicorn
servers (DEBUG=0, a real SECRET_KEY, ALLOWED_HOSTS) on free loopback ports, two task workers
(`manage.py db_worker`, TASKS_URL=db://, the Production section's engine; `--tasks rq` runs RQ
workers on Redis instead), a fresh PostgreSQL database `readerstudy_scale_<pid>` (dropped at the
end) and Redis as the shared cache (CACHE_URL=redis://, an empty Redis database of its own,
flushed at the end).

The study is generated (`benchmarks/load/fixtures.py`: a ReXVQA-shaped file imported with
`import_rexvqa`, the study made with `create_study --readers … --pis …`, i.e. the services a PI
uses); the 100 reader accounts are made with Django's `create_user`. Readers are split between
the two servers and answer `--answers` cases each through the reading page's JSON endpoint,
as its outbox does (benchmarks/scale/reader.py). During the run:

- at `--kill-web-at` of the expected answers, server A's gunicorn (master and workers) gets
  SIGKILL; readers fail over to server B (a load balancer's health check), and A is started
  again `--restart-after` seconds later (systemd's Restart=always);
- at `--kill-worker-at`, worker 1 gets SIGKILL, preferably while it runs a task;
- halfway, the PI opens the analysis page (with its figures) and asks for the ZIP.

Afterwards: the time until the analysis of the final data is in the cache (watched without
asking for it); the ZIP asked for `--zip-after` seconds after the last answer, timed against a
case page; the database checked against every acknowledged answer; the tasks and jobs left;
and the workers' and servers' logs read for an analysis computed, or a figure drawn, twice.

Run: .venv/bin/python benchmarks/scale/run.py [--readers 100] [--answers 20] [--out FILE]
Needs: PostgreSQL on 127.0.0.1:5432 (user postgres, trust auth), Redis on 127.0.0.1:6379,
psql on the PATH.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import redis
import requests

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
PASSWORD = "scale-bench-pass-1"
SLUG = "scale"
PI_NAME = "scale-pi"


def psql(sql: str) -> None:
    subprocess.run(
        ["psql", "-h", "127.0.0.1", "-U", "postgres", "-d", "postgres", "-qc", sql],
        check=True,
        capture_output=True,
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def empty_redis_dbs(n: int) -> list[int]:
    """`n` Redis databases that hold nothing now (8–15: the low ones are the usual defaults)."""
    found = []
    for db in range(15, 7, -1):
        if redis.Redis(host="127.0.0.1", port=6379, db=db).dbsize() == 0:
            found.append(db)
        if len(found) == n:
            return found
    raise RuntimeError("no empty Redis database among 8-15")


def percentile(values: list[float], q: int) -> float:
    if len(values) < 2:
        return values[0] if values else float("nan")
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def ms(values: list[float]) -> dict:
    return {
        "n": len(values),
        "p50_ms": round(1000 * percentile(values, 50), 1),
        "p95_ms": round(1000 * percentile(values, 95), 1),
    }


class Process:
    """A server or worker in its own process group, so SIGKILL reaches all its processes."""

    def __init__(self, name: str, command: list[str], env: dict[str, str], log: Path):
        self.name, self.command, self.env, self.log = name, command, env, log
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        with self.log.open("a") as log:
            self.process = subprocess.Popen(
                self.command,
                cwd=ROOT,
                env=self.env,
                stdout=log,
                stderr=log,
                start_new_session=True,
            )

    def kill(self) -> None:
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()


def wait_up(base: str, timeout: float = 120) -> float:
    started = time.perf_counter()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if requests.get(f"{base}/healthz", timeout=10).status_code == 200:
                return time.perf_counter() - started
        except requests.RequestException:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"{base} did not come up")


def make_env(args, work: Path, database_url: str, cache_db: int, rq_db: int) -> dict[str, str]:
    tasks_url = "db://" if args.tasks == "db" else f"redis://127.0.0.1:6379/{rq_db}"
    return {
        **os.environ,
        "DEBUG": "0",
        "SECRET_KEY": "scale-bench-" + os.urandom(24).hex(),
        "ALLOWED_HOSTS": "127.0.0.1",
        "DATABASE_URL": database_url,
        "CACHE_URL": f"redis://127.0.0.1:6379/{cache_db}",
        "TASKS_URL": tasks_url,
        "MEDIA_ROOT": str(work / "media"),
        "STATIC_ROOT": str(work / "static"),
        "TASK_STALE_SECONDS": str(args.stale_seconds),
        # Plain HTTP on loopback; the production recipe terminates TLS in front.
        "SECURE_SSL_REDIRECT": "0",
        "SESSION_COOKIE_SECURE": "0",
        "CSRF_COOKIE_SECURE": "0",
    }


def seed(args, work: Path) -> list[str]:
    """Readers, a PI and the study, through the services a PI uses."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.hashers import make_password
    from django.core.management import call_command

    from benchmarks.load.fixtures import DATASET, write_rexvqa_file

    call_command("migrate", verbosity=0)
    call_command("collectstatic", "--noinput", verbosity=0)
    users = get_user_model()
    # One PBKDF2 hash for everyone (salted once; valid for each account): 100 hashes would
    # take 40 s of CPU before anything is measured. Signing in still checks it for real.
    hashed = make_password(PASSWORD)
    names = [f"scale{i:03d}" for i in range(1, args.readers + 1)]
    for name in [*names, PI_NAME]:
        user = users.objects.create_user(name)
        user.password = hashed
        user.save(update_fields=["password"])
    path = write_rexvqa_file(work / "data", args.cases)
    call_command("import_rexvqa", str(path), "--dataset", DATASET, verbosity=0)
    call_command(
        "create_study",
        SLUG,
        "--dataset",
        DATASET,
        "--sample",
        str(args.cases),
        "--one-per-case",
        "--readers",
        ",".join(names),
        "--pis",
        PI_NAME,
        verbosity=0,
    )
    return names


def analysis_state() -> dict:
    """Whether the analysis (and the ZIP) of the data as it is now is in the cache, looked at
    from outside without asking for it (no job is started by looking)."""
    from analysis.cache import StudyAnalysis
    from analysis.pipeline import AnalysisSettings
    from readerstudy.models import ReaderStudy

    analysis = StudyAnalysis(ReaderStudy.objects.get(slug=SLUG), AnalysisSettings())
    return {"result": analysis.has("result"), "zip": analysis.has("zip")}


def verify(readers) -> dict:
    """Every acknowledged answer against what the database holds."""
    from django.db.models import Count

    from annotation.models import Answer, AnswerRevision
    from annotation.selectors import ordered_item_ids
    from readerstudy.models import ReaderStudy

    study = ReaderStudy.objects.get(slug=SLUG)
    lost, changed, acked = [], [], 0
    for reader in readers:
        from django.contrib.auth import get_user_model

        user = get_user_model().objects.get(username=reader.username)
        order = ordered_item_ids(study, user)
        stored = dict(
            Answer.objects.filter(item__study=study, reader=user).values_list("item_id", "choice")
        )
        for number, choice in reader.tally.acked.items():
            acked += 1
            held = stored.get(order[number - 1])
            if held is None:
                lost.append(f"{reader.username} case {number}")
            elif held != choice:
                changed.append(f"{reader.username} case {number}: {choice} -> {held}")
    answers = Answer.objects.filter(item__study=study)
    duplicates = (
        answers.values("item_id", "reader_id", "session")
        .annotate(n=Count("id"))
        .filter(n__gt=1)
        .count()
    )
    return {
        "acknowledged": acked,
        "answers_in_db": answers.count(),
        "lost": len(lost),
        "lost_examples": lost[:5],
        "changed": len(changed),
        "duplicates": duplicates,
        # Every post was a first answer or its identical repeat: a revision means a repeat
        # was taken for a change.
        "revisions": AnswerRevision.objects.filter(answer__item__study=study).count(),
    }


def tasks_left(args, killed_worker: str) -> dict:
    """The jobs and engine tasks at the end: what the killed worker left behind."""
    from django.db.models import Count

    from readerstudy.models import BackgroundJob

    jobs = BackgroundJob.objects.filter(study__slug=SLUG)
    out = {
        "jobs_by_status": dict(jobs.values_list("status").annotate(n=Count("id"))),
        "jobs_rerun": list(jobs.filter(attempt__gt=1).values("key", "status", "attempt")),
        "jobs_not_done": list(
            jobs.exclude(status="done").values("key", "kind", "status", "attempt", "error")
        ),
    }
    if args.tasks == "db":
        from django_tasks_db.models import DBTaskResult

        tasks = DBTaskResult.objects.all()
        out["db_tasks_by_status"] = dict(tasks.values_list("status").annotate(n=Count("id")))
        out["db_tasks_of_killed_worker"] = [
            {"task": t.task_path.rsplit(".", 1)[-1], "status": t.status, "args": t.args_kwargs}
            for t in tasks.filter(worker_ids__contains=[killed_worker])
            if t.status not in ("SUCCESSFUL",)
        ]
    for job in out["jobs_not_done"]:
        job["status"] = str(job["status"])
    return out


LOGGED = re.compile(
    r"^(analysed|drew|rendered) (\S+) study=(\d+) version=(\w+) policy=(\w+) pid=(\d+)"
)


def work_done_twice(logs: list[Path]) -> dict:
    """From the servers' and workers' logs: each analysis computed, figure drawn and format
    rendered, and those done more than once for the same study, data version and policy."""
    seen: dict[tuple, list[str]] = collections.defaultdict(list)
    for log in logs:
        if not log.exists():
            continue
        for line in log.read_text(errors="replace").splitlines():
            match = LOGGED.match(line)
            if match:
                verb, what, study, version, policy, pid = match.groups()
                seen[(verb, what, study, version, policy)].append(f"{log.stem}:{pid}")
    counts = collections.Counter(key[0] for key in seen)
    twice = {
        f"{verb} {what} @{version[:8]}": where
        for (verb, what, _, version, _), where in seen.items()
        if len(where) > 1
    }
    versions = {key[3] for key in seen if key[0] == "analysed"}
    return {
        "analyses": counts["analysed"],
        "versions_analysed": len(versions),
        "figures_drawn": counts["drew"],
        "figure_formats_rendered": counts["rendered"],
        "done_twice": twice,
        "web_server_did_work": sorted(
            {w for where in seen.values() for w in where if w.startswith("web")}
        ),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--readers", type=int, default=100)
    parser.add_argument("--cases", type=int, default=30, help="questions in the study")
    parser.add_argument("--answers", type=int, default=20, help="cases each reader answers")
    parser.add_argument(
        "--think", type=float, nargs=2, default=(1.0, 3.0), help="seconds on a case (range)"
    )
    parser.add_argument("--web-workers", type=int, default=3, help="gunicorn workers per server")
    parser.add_argument("--tasks", choices=["db", "rq"], default="db")
    parser.add_argument("--kill-web-at", type=float, default=0.35)
    parser.add_argument("--kill-worker-at", type=float, default=0.5)
    parser.add_argument("--restart-after", type=float, default=5.0)
    parser.add_argument("--zip-after", type=float, default=60.0)
    parser.add_argument("--stale-seconds", type=int, default=120, help="TASK_STALE_SECONDS")
    parser.add_argument("--max-seconds", type=float, default=900, help="bound on the reading")
    parser.add_argument("--out", type=Path, help="write the figures as JSON here too")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="scale-bench-"))
    database = f"readerstudy_scale_{os.getpid()}"
    database_url = f"postgres://postgres@127.0.0.1:5432/{database}"
    cache_db, rq_db = empty_redis_dbs(2)
    psql(f"CREATE DATABASE {database}")
    env = make_env(args, work, database_url, cache_db, rq_db)
    os.environ.update(env)
    bin_dir = Path(sys.executable).parent
    ports = [free_port(), free_port()]
    servers = [f"http://127.0.0.1:{p}" for p in ports]
    webs = [
        Process(
            f"web{i + 1}",
            [
                str(bin_dir / "gunicorn"),
                "readerstudy.config.wsgi",
                f"--bind=127.0.0.1:{port}",
                f"--workers={args.web_workers}",
                "--timeout=120",
                # Django is imported once, before the workers fork: a restart under load
                # takes one import, not one per worker at once.
                "--preload",
            ],
            env,
            work / f"web{i + 1}.log",
        )
        for i, port in enumerate(ports)
    ]
    if args.tasks == "db":
        worker_command = ["manage.py", "db_worker", "--no-reload", "--interval", "0.5"]
        worker_ids = ["--worker-id"]
    else:
        worker_command = [
            "manage.py",
            "rqworker",
            "--job-class",
            "django_tasks_rq.Job",
            "--with-scheduler",
        ]
        worker_ids = ["--name"]
    workers = [
        Process(
            f"worker{i}",
            [sys.executable, *worker_command, *worker_ids, f"bench-w{i}"],
            env,
            work / f"worker{i}.log",
        )
        for i in (1, 2)
    ]
    stop = threading.Event()
    events: dict[str, object] = {"load_before": [round(x, 2) for x in os.getloadavg()]}
    results: dict[str, object] = {}
    try:
        import django

        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "readerstudy.config.settings")
        django.setup()
        from benchmarks.scale.reader import PI, Balancer, Reader

        print(f"seeding: {args.readers} readers, {args.cases} questions ...", flush=True)
        started = time.perf_counter()
        names = seed(args, work)
        events["seed_s"] = round(time.perf_counter() - started, 1)
        for process in [*webs, *workers]:
            process.start()
        for base in servers:
            wait_up(base)

        balancer = Balancer(servers)
        readers = [
            Reader(balancer, i % 2, name, PASSWORD, SLUG, seed=i, think_s=tuple(args.think))
            for i, name in enumerate(names)
        ]
        pi = PI(balancer, 1, PI_NAME, PASSWORD)
        pi_after = PI(balancer, 0, PI_NAME, PASSWORD)  # the same PI later, in another tab
        deadline = time.monotonic() + args.max_seconds
        print("signing in ...", flush=True)
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda r: r.sign_in(deadline), [*readers, pi, pi_after]))

        expected = args.readers * args.answers
        acked = lambda: sum(len(r.tally.acked) for r in readers)  # noqa: E731

        def chaos() -> None:
            """SIGKILL a web server and a worker mid-run; the PI looks halfway."""
            while not stop.wait(0.1) and acked() < args.kill_web_at * expected:
                pass
            if stop.is_set():
                return
            events["web1_killed_at_answers"] = acked()
            events["web1_killed_at"] = time.time()
            webs[0].kill()
            print(f"  SIGKILL web1 at {acked()} answers", flush=True)
            restarted = threading.Timer(args.restart_after, restart_web)
            restarted.daemon = True
            restarted.start()
            while not stop.wait(0.1) and acked() < args.kill_worker_at * expected:
                pass
            if stop.is_set():
                return
            busy_by = time.monotonic() + 20
            while args.tasks == "db" and time.monotonic() < busy_by and not busy("bench-w1"):
                time.sleep(0.1)
            events["worker1_killed_at_answers"] = acked()
            events["worker1_was_running"] = running_on("bench-w1")
            workers[0].kill()
            print(f"  SIGKILL worker1 at {acked()} answers", flush=True)

        def restart_web() -> None:
            webs[0].start()
            events["web1_restart_s"] = round(args.restart_after + wait_up(servers[0], 600), 1)
            events["web1_up_at"] = time.time()

        def busy(worker_id: str) -> bool:
            return bool(running_on(worker_id))

        def running_on(worker_id: str) -> list[str]:
            if args.tasks != "db":
                return []
            from django_tasks_db.models import DBTaskResult

            return [
                t.task_path.rsplit(".", 1)[-1]
                for t in DBTaskResult.objects.filter(
                    status="RUNNING", worker_ids__contains=[worker_id]
                )
            ]

        def pi_midway() -> None:
            while not stop.wait(0.2) and acked() < 0.5 * expected:
                pass
            if stop.is_set():
                return
            events["pi_opened_at_answers"] = acked()
            events["pi_page"] = pi.open_analysis(SLUG, deadline)
            events["pi_zip_during_run"] = "still waiting when the readers finished"
            events["pi_zip_during_run"] = pi.fetch_zip(SLUG, deadline)
            print(f"  PI: page and ZIP during the run: {events['pi_zip_during_run']}", flush=True)

        print(f"reading: {args.readers} readers x {args.answers} answers ...", flush=True)
        side = [
            threading.Thread(target=chaos, daemon=True),
            threading.Thread(target=pi_midway, daemon=True),
        ]
        for thread in side:
            thread.start()
        started = time.perf_counter()
        ramp = time.monotonic()
        with ThreadPoolExecutor(len(readers)) as pool:
            list(
                pool.map(
                    lambda r: r.read(
                        args.answers, deadline, ramp + (r.rng.random() * args.think[1])
                    ),
                    readers,
                )
            )
        reading_s = time.perf_counter() - started
        stop.set()
        side[0].join()  # the PI's ZIP may still be on its way: it is recorded when it comes

        last_answer = max(t for r in readers for t in r.tally.acked_at.values())
        print("waiting for the analysis of the final data ...", flush=True)
        # The PI asks for the ZIP --zip-after seconds after the last answer (and follows its
        # progress page until it is served), while the analysis is watched from outside.
        final: dict[str, dict] = {}

        def ask_zip() -> None:
            time.sleep(max(0.0, last_answer + args.zip_after - time.time()))
            final["zip"] = pi_after.fetch_zip(SLUG, time.monotonic() + args.max_seconds)

        asker = threading.Thread(target=ask_zip, daemon=True)
        asker.start()
        reflected = zip_ready = None
        watch_until = last_answer + args.max_seconds
        while time.time() < watch_until and (reflected is None or zip_ready is None):
            state = analysis_state()
            now = time.time()
            if state["result"] and reflected is None:
                reflected = round(now - last_answer, 1)
            if state["zip"] and zip_ready is None:
                zip_ready = round(now - last_answer, 1)
            time.sleep(0.5)
        asker.join(args.max_seconds)
        final_zip = final.get("zip", {"seconds": float("nan"), "is_zip": False})
        probe = readers[0]
        probe.tally.latency.pop("quiet case page", None)
        for _ in range(7):
            probe.get("quiet case page", f"/s/{SLUG}/read/1/", time.monotonic() + 60)
        case_quiet = statistics.median(s for _, s in probe.tally.latency["quiet case page"])

        samples: dict[str, list[tuple[float, float]]] = collections.defaultdict(list)
        statuses: collections.Counter = collections.Counter()
        for person in [*readers, pi, pi_after]:
            for kind, values in person.tally.latency.items():
                samples[kind].extend(values)
            statuses.update(person.tally.statuses)
        samples["reader (case page + submit)"] = samples["case page"] + samples["submit"]
        # The outage: from web1's SIGKILL until it answered again (+2 s). A request sent to it
        # then waits in its listen queue while its workers boot; whichever request of a case
        # comes first (/healthz) takes that wait, so the ratios are given without it too.
        outage = (events.get("web1_killed_at", 0), events.get("web1_up_at", 0) + 2)

        def table_of(keep) -> dict:
            return {
                kind: ms([s for at, s in values if keep(at)])
                for kind, values in sorted(samples.items())
            }

        table = table_of(lambda at: True)
        steady = table_of(lambda at: not outage[0] <= at <= outage[1])
        reader, health = "reader (case page + submit)", "healthz"
        results = {
            "readers": args.readers,
            "answers_each": args.answers,
            "questions": args.cases,
            "think_s": list(args.think),
            "web_servers": 2,
            "gunicorn_workers_each": args.web_workers,
            "task_workers": 2,
            "tasks": "db:// (db_worker)" if args.tasks == "db" else "redis:// (RQ)",
            "cache": "redis://",
            "cpus": os.cpu_count(),
            "load_before": events.pop("load_before", None),
            "load_at_end": [round(x, 2) for x in os.getloadavg()],
            "reading_s": round(reading_s, 1),
            "requests": sum(statuses.values()),
            "status_codes": dict(sorted(statuses.items())),
            "5xx": sum(n for code, n in statuses.items() if code >= 500),
            "server_errors": [e for r in [*readers, pi, pi_after] for e in r.tally.server_errors][
                :10
            ],
            "refused": [e for r in readers for e in r.tally.refused][:10],
            "unfinished": sum(r.tally.unfinished for r in readers),
            "connection_errors": sum(r.tally.connection_errors for r in [*readers, pi, pi_after]),
            "timeouts": sum(r.tally.timeouts for r in [*readers, pi, pi_after]),
            "failovers": sum(r.tally.failovers for r in [*readers, pi, pi_after]),
            "retries": sum(r.tally.retries for r in [*readers, pi, pi_after]),
            "double_posts": sum(r.tally.duplicate_posts for r in readers),
            "latency": table,
            "latency_outside_outage": steady,
            "reader_p50_over_healthz": round(table[reader]["p50_ms"] / table[health]["p50_ms"], 2),
            "reader_p95_over_healthz": round(table[reader]["p95_ms"] / table[health]["p95_ms"], 2),
            "reader_p50_over_healthz_outside_outage": round(
                steady[reader]["p50_ms"] / steady[health]["p50_ms"], 2
            ),
            "reader_p95_over_healthz_outside_outage": round(
                steady[reader]["p95_ms"] / steady[health]["p95_ms"], 2
            ),
            "analysis_reflects_last_answer_s": reflected,
            "zip_ready_after_last_answer_s": zip_ready,
            "zip_at_plus_60s": final_zip,
            "case_page_quiet_ms": round(1000 * case_quiet, 1),
            "zip_over_case_page": round(final_zip["seconds"] / case_quiet, 1),
            **events,
            "database": verify(readers),
            "tasks_left": tasks_left(args, "bench-w1"),
            "work": work_done_twice([p.log for p in [*webs, *workers]]),
            "logs": str(work),
        }
    finally:
        stop.set()
        for process in [*webs, *workers]:
            process.stop()
        from django.db import connections

        connections.close_all()
        psql(f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")
        for db in (cache_db, rq_db):
            redis.Redis(host="127.0.0.1", port=6379, db=db).flushdb()

    print(json.dumps(results, indent=2, default=str))
    if args.out:
        args.out.write_text(json.dumps(results, indent=2, default=str) + "\n")
    db = results["database"]
    checks = {
        "0 lost": db["lost"] == 0 and db["changed"] == 0,
        "0 duplicated": db["duplicates"] == 0 and db["revisions"] == 0,
        "0 5xx": results["5xx"] == 0,
        "every answer acknowledged": db["acknowledged"] == args.readers * args.answers,
        "reader p95 <= 3x /healthz": results["reader_p95_over_healthz"] <= 3
        and results["reader_p95_over_healthz_outside_outage"] <= 3,
        "ZIP at +60 s <= 50x a case page": results["zip_at_plus_60s"]["is_zip"]
        and results["zip_over_case_page"] <= 50,
        "no figure drawn twice": not any(
            k.startswith("drew") for k in results["work"]["done_twice"]
        ),
    }
    for name, ok in checks.items():
        print(f"{'ok  ' if ok else 'FAIL'} {name}")
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
