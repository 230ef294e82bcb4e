"""The analysis page, its figures and the export ZIP against a reader's case page.

A study of 200 questions on 50 X-rays (4 per X-ray) with 3 readers and 8 AI models, in a
fresh SQLite database; then, when PostgreSQL answers on 127.0.0.1:5432, the export ZIP with
18 raters (10 readers, 8 models) there. Requests go through Django's test client (no server).

Goals: the analysis page with its figures <= 5x a case page; the export ZIP <= 50x; the
18-rater ZIP well within a 30 s worker timeout. "Cold" clears the cache first (the first
visit after the data changed); "warm" is every later visit at the same data version.

The analysis is computed by a task worker (analysis.preparation; the database backend, its worker
loop run here in process): the page never computes (cold, it shows a progress bar or the
previous version "as of HH:MM"); measured are the page cold, the worker's time to prepare the
tables, figures and downloads ("worker_prepares"), the page with its figures and the ZIP once
prepared (the goals), and the ZIP asked for before it is prepared ("zip_cold": the progress
page it answers with).
A two-arm study (crossover unaided / aided, concurrent, washout 0): 6 readers x 200 questions
(50 X-rays) x 2 arms, answered through the answer service in both sessions, with the design-aware
section (aided vs unaided MRMC, reliance, power) on its page. Goal: its warm page with figures
<= 5x a case page of the same study (a reader in the aided arm, the AI's answer shown).
Run: .venv/bin/python benchmarks/analysis_page_bench.py [--skip-postgres] [--two-arm-only]

Growth with the study's size (issue 27, "the work grows; the wait does not"):
`--questions 200,40826` builds, for each size, a study over that many questions (4 per X-ray;
40,826 is ReXVQA's public test split), 3 readers who answered every question (written in bulk:
the answer service's per-answer checks are not what is measured) and 8 AI models whose
predictions go through the import service, and reports how each cost grows: the questions
written (bulk), the prediction import per model (goal <= 3 s), the case page, the analysis
page cold (it only enqueues) and warm with its figures, the worker's preparation (a real
`manage.py db_worker --batch` process: wall time and peak memory), the ZIP once prepared, and
`export_analysis` (its own process: wall time, peak memory; goal <= 300 MB). With
--questions only this growth table is run.
"""

from __future__ import annotations

import os
import re
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
PG_ADMIN = "postgres://postgres@127.0.0.1:5432/postgres"


def timed(fn, repeat: int = 1) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def build(n_xrays: int, n_readers: int, n_models: int):
    """A study made as a PI makes one: a ReXVQA file of `n_xrays` X-rays with 4 questions
    each imported, all its questions sampled, readers who answer through the answer service
    and models whose predictions go through the import service."""
    import random

    from django.conf import settings
    from django.contrib.auth import get_user_model

    from annotation.services import answer_submit
    from readerstudy.models import Dataset, Task
    from readerstudy.predictions.services import predictions_import
    from readerstudy.rexvqa_synthetic import record, write_file, write_png
    from readerstudy.services.importing import rexvqa_import
    from readerstudy.services.studies import study_create
    from readerstudy.vocabulary import LETTERS

    rng = random.Random(0)
    tag = uuid.uuid4().hex[:6]
    source = Path(settings.MEDIA_ROOT) / f"bench-source-{tag}"
    tasks = list(Task)
    records = {}
    for x in range(n_xrays):
        image = f"images/xray-{x}.png"
        write_png(source / image, shade=(40 + 4 * x) % 256)  # its own pixels: its own X-ray
        for k in range(4):
            position = len(records)
            records[f"{tag}-q{position}"] = record(
                question=f"Finding {k} on X-ray {x}?",
                options=[f"Option {letter}" for letter in LETTERS],
                correct=rng.choice(LETTERS),
                task=tasks[position % len(tasks)].label,
                study_id=f"{tag}-xray-{x}",
                images=[image],
                views=["PA"],
                category=["Lung", "Heart", "Bone", "Pleura"][k],
            )
    rexvqa_import(
        path=write_file(source, records, name="bench"),
        dataset_name=f"bench {tag}",
        images_root=source,
    )
    dataset = Dataset.objects.get(name=f"bench {tag}")
    users = get_user_model()
    pi = users.objects.create_user(username=f"pi-{tag}")
    readers = [users.objects.create_user(username=f"reader{r}-{tag}") for r in range(n_readers)]
    study = study_create(
        slug=f"bench-{tag}",
        dataset=dataset,
        n=len(records),
        readers=[reader.username for reader in readers],
        pis=[pi.username],
    ).study
    items = list(study.items.select_related("question").order_by("position"))
    for reader in readers:
        for item in items:
            right = rng.random() < 0.7
            choice = item.question.correct if right else rng.choice(LETTERS)
            answer_submit(reader=reader, item=item, choice=choice, time_ms=rng.randint(4000, 90000))
    for m in range(n_models):
        rows = []
        for item in items:
            right = rng.random() < 0.6 + 0.03 * m
            letter = item.question.correct if right else rng.choice(LETTERS)
            rows.append(f"{item.question.source_id},{letter if rng.random() > 0.02 else 'none'}")
        content = "question_id,prediction\n" + "\n".join(rows) + "\n"
        predictions_import(dataset=study.dataset, model_name=f"model-{m}", content=content.encode())
    return study, pi, readers


def build_two_arm(n_xrays: int, n_readers: int):
    """A crossover of `n_readers` readers through both sessions, and one more reader who has
    not started (whose case page is the baseline)."""
    import random

    from django.contrib.auth import get_user_model

    from annotation import selectors
    from annotation.services import answer_submit, reader_finish
    from annotation.sessions import reading_of
    from readerstudy.design.rules import Design
    from readerstudy.design.services import study_design_set
    from readerstudy.models import Role
    from readerstudy.services.studies import membership_add
    from readerstudy.vocabulary import LETTERS

    study, pi, _ = build(n_xrays, 0, 1)  # questions and one imported model ("model-0")
    rng = random.Random(1)
    tag = study.slug.rsplit("-", 1)[1]
    readers = []
    for r in range(n_readers + 1):
        reader = get_user_model().objects.create_user(username=f"armreader{r}-{tag}")
        membership_add(study=study, user=reader, role=Role.READER)
        readers.append(reader)
    study_design_set(
        study=study,
        design=Design(arms="unaided,aided", aid_model="model-0", aid_mode="concurrent"),
    )
    for reader in readers[:n_readers]:
        for _session in (1, 2):
            reading = reading_of(study, reader)
            p_right = 0.75 if reading.arm == "aided" else 0.68
            for number in range(1, len(selectors.ordered_item_ids(study, reader, reading)) + 1):
                item = selectors.item_at(study, reader, number, reading=reading)
                right = rng.random() < p_right
                choice = item.question.correct if right else rng.choice(LETTERS)
                answer_submit(
                    reader=reader, item=item, choice=choice, time_ms=rng.randint(4000, 90000)
                )
            reader_finish(reader=reader, study=study)
    return study, pi, readers[n_readers]


def run_worker() -> None:
    """The task worker's loop (database backend), in process, until the queue is empty."""
    from readerstudy.jobs import run_queue_until_empty

    run_queue_until_empty(worker_id="bench")


def signed_in(study, pi, reader) -> tuple:
    """The PI's client, a reader's case page time (every figure is a multiple of it), and the
    analysis page's and the ZIP's URLs."""
    from django.test import Client
    from django.urls import reverse

    reader_client, pi_client = Client(HTTP_HOST="127.0.0.1"), Client(HTTP_HOST="127.0.0.1")
    reader_client.force_login(reader)
    pi_client.force_login(pi)
    case_url = reverse("reader-case", args=[study.slug, 1])
    assert reader_client.get(case_url).status_code == 200
    case = timed(lambda: reader_client.get(case_url), repeat=15)
    return (
        pi_client,
        case,
        reverse("analysis", args=[study.slug]),
        reverse("analysis-zip", args=[study.slug]),
    )


def fetch_pictures(pi_client, pictures: list[str]) -> None:
    """Every picture the page shows, as the browser asks for it."""
    assert pictures, "no figures on the page"
    for src in pictures:
        assert pi_client.get(src.replace("&amp;", "&")).status_code == 200, src


def run_two_arm(label: str, n_readers: int = 6) -> dict:
    from django.core.cache import cache

    t0 = time.perf_counter()
    study, pi, newcomer = build_two_arm(50, n_readers)
    print(
        f"[{label}] built 200 questions x 2 arms, {n_readers} readers through both sessions "
        f"in {time.perf_counter() - t0:.1f} s"
    )
    pi_client, case, page_url, zip_url = signed_in(study, pi, newcomer)
    out = {"case": case}

    def page_with_figures():
        """The page with its design section, each figure's slot (htmx), each picture."""
        html = pi_client.get(page_url).content.decode()
        assert 'data-design-table="mrmc_difference"' in html, "no MRMC difference on the page"
        assert 'data-design-table="power"' in html, "no power section on the page"
        slots = re.findall(r'hx-get="([^"]+figure-slot[^"]+)"', html)
        pictures = re.findall(r'<img src="([^"]+)"', html)
        for slot in slots:
            figure = pi_client.get(slot.replace("&amp;", "&")).content.decode()
            pictures += re.findall(r'<img src="([^"]+)"', figure)
        for src in pictures:
            assert pi_client.get(src.replace("&amp;", "&")).status_code == 200, src

    cache.clear()
    out["page_cold"] = timed(lambda: pi_client.get(page_url))  # enqueues, never computes
    out["worker_prepares"] = timed(run_worker)
    out["page_warm"] = timed(page_with_figures, repeat=5)
    out["zip_after_page"] = timed(lambda: pi_client.get(zip_url))
    case = out["case"]
    print(f"[{label}] case page {case * 1000:.0f} ms")
    for key in ("page_cold", "worker_prepares", "page_warm", "zip_after_page"):
        print(f"[{label}] {key:22s} {out[key]:7.2f} s = {out[key] / case:7.1f}x the case page")
    return out


def run(label: str, n_readers: int, n_models: int, *, page: bool) -> dict:
    from django.core.cache import cache

    t0 = time.perf_counter()
    study, pi, readers = build(50, n_readers, n_models)
    print(
        f"[{label}] built 200 questions, {n_readers} readers, {n_models} models "
        f"in {time.perf_counter() - t0:.1f} s"
    )
    out = {}
    pi_client, out["case"], page_url, zip_url = signed_in(study, pi, readers[0])

    def page_with_figures():
        """What a browser asks for: the page, each figure's slot (htmx), each picture."""
        html = pi_client.get(page_url).content.decode()
        slots = re.findall(r'hx-get="([^"]+figure-slot[^"]+)"', html)
        pictures = re.findall(r'<img src="([^"]+)"', html)
        for slot in slots:
            figure = pi_client.get(slot.replace("&amp;", "&")).content.decode()
            pictures += re.findall(r'<img src="([^"]+)"', figure)
        fetch_pictures(pi_client, pictures)

    def get_zip(status=200):
        response = pi_client.get(zip_url)
        assert response.status_code == status, response.status_code

    if page:
        cache.clear()
        out["page_cold"] = timed(lambda: pi_client.get(page_url))
        out["worker_prepares"] = timed(run_worker)
        out["page_warm"] = timed(page_with_figures, repeat=5)
        out["zip_after_page"] = timed(get_zip)
    cache.clear()
    out["zip_cold"] = timed(lambda: get_zip(202))
    out["worker_prepares_zip"] = timed(run_worker)
    out["zip_warm"] = timed(get_zip, repeat=5)
    case = out["case"]
    print(f"[{label}] case page {case * 1000:.0f} ms")
    keys = (
        "page_cold",
        "worker_prepares",
        "page_warm",
        "zip_after_page",
        "zip_cold",
        "worker_prepares_zip",
        "zip_warm",
    )
    for key in keys:
        if key in out:
            print(f"[{label}] {key:22s} {out[key]:7.2f} s = {out[key] / case:7.1f}x the case page")
    return out


def build_bulk(n_questions: int, n_readers: int, n_models: int) -> tuple:
    """A study over `n_questions` questions (4 per X-ray), readers' answers written in bulk,
    models imported through the service; returns (study, pi, readers, timings)."""
    import random

    from django.contrib.auth import get_user_model

    from annotation.models import Answer
    from readerstudy.models import (
        Case,
        Dataset,
        Image,
        Membership,
        Question,
        ReaderStudy,
        Role,
        StudyQuestion,
        Task,
    )
    from readerstudy.predictions.services import predictions_import
    from readerstudy.question_versions import QuestionVersion
    from readerstudy.services.versions import first_versions_create
    from readerstudy.vocabulary import LETTERS

    rng = random.Random(0)
    tag = uuid.uuid4().hex[:6]
    timings: dict[str, object] = {}
    t0 = time.perf_counter()
    dataset = Dataset.objects.create(name=f"bench {tag}")
    n_xrays = (n_questions + 3) // 4
    cases = Case.objects.bulk_create(
        (Case(dataset=dataset, study_id=f"{tag}-xray-{x}", patient_age=60) for x in range(n_xrays)),
        batch_size=2000,
    )
    Image.objects.bulk_create(
        (
            Image(
                case=case,
                position=0,
                view_position="PA",
                modality="CR",
                source_path="/nonexistent/source.png",
                display=f"display/aa/{tag}{n:058d}.png",
                thumbnail=f"thumbs/aa/{tag}{n:058d}.png",
                width=64,
                height=48,
                bits_stored=8,
            )
            for n, case in enumerate(cases)
        ),
        batch_size=2000,
    )
    tasks = list(Task)
    questions = Question.objects.bulk_create(
        (
            Question(
                dataset=dataset,
                case=cases[q // 4],
                source_id=f"{tag}-q{q}",
                text=f"Question {q}?",
                option_a=f"opacity {q}",
                option_b=f"effusion {q}",
                option_c=f"nodule {q}",
                option_d=f"normal {q}",
                correct=rng.choice(LETTERS),
                task=tasks[q % len(tasks)],
                category=["Lung", "Heart", "Bone", "Pleura"][q % 4],
            )
            for q in range(n_questions)
        ),
        batch_size=2000,
    )
    first_versions_create(q.pk for q in questions)  # version 1 of each, as an import writes
    shown = dict(
        QuestionVersion.objects.filter(question__in=questions, number=1).values_list(
            "question_id", "pk"
        )
    )
    study = ReaderStudy.objects.create(slug=f"bench-{tag}", title=f"Bench {tag}", dataset=dataset)
    items = StudyQuestion.objects.bulk_create(
        (StudyQuestion(study=study, question=q, position=i) for i, q in enumerate(questions)),
        batch_size=2000,
    )
    timings["questions_written"] = time.perf_counter() - t0
    users = get_user_model().objects
    pi = users.create_user(username=f"pi-{tag}")
    Membership.objects.create(study=study, user=pi, role=Role.PI)
    readers = []
    for r in range(n_readers):
        reader = users.create_user(username=f"reader{r}-{tag}")
        Membership.objects.create(study=study, user=reader, role=Role.READER)
        readers.append(reader)
        Answer.objects.bulk_create(
            (
                Answer(
                    item=item,
                    reader=reader,
                    choice=q.correct if rng.random() < 0.7 else rng.choice(LETTERS),
                    time_ms=rng.randint(4000, 90000),
                    question_version_id=shown[q.pk],
                )
                for item, q in zip(items, questions, strict=True)
            ),
            batch_size=2000,
        )
    imports = []
    for m in range(n_models):
        rows = ["question_id,prediction"]
        for q in questions:
            letter = q.correct if rng.random() < 0.6 + 0.03 * m else rng.choice(LETTERS)
            rows.append(f'{q.source_id},"The answer is {letter}."')
        content = ("\n".join(rows) + "\n").encode()
        wall, cpu = time.perf_counter(), time.process_time()
        predictions_import(dataset=dataset, model_name=f"model-{m}", content=content)
        imports.append((time.perf_counter() - wall, time.process_time() - cpu))
    timings["prediction_import"] = imports
    return study, pi, readers, timings


# Starts a command and prints its exit code and peak RSS (KiB). A process started from this
# one (vfork, then exec) has this process's peak resident set in its ru_maxrss (Linux carries
# the peak of the memory it was started in over the exec): started from a fresh launcher it
# carries the launcher's ~10 MB instead. From this process at 40,826 questions, a `python -c
# pass` child "peaked" at this process's 300+ MB.
LAUNCHER = (
    "import os, subprocess, sys\n"
    "proc = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)\n"
    "_, status, usage = os.wait4(proc.pid, 0)\n"
    "print(os.waitstatus_to_exitcode(status), usage.ru_maxrss)\n"
)


def _child(args: list[str]) -> tuple[float, float]:
    """Run `manage.py ARGS` in its own process: (wall seconds, its peak memory in MB)."""
    import subprocess

    t0 = time.perf_counter()
    command = [sys.executable, str(ROOT / "manage.py"), *args]
    launched = subprocess.run(
        [sys.executable, "-c", LAUNCHER, *command], capture_output=True, text=True, check=True
    )
    code, peak_kib = (int(x) for x in launched.stdout.split())
    assert code == 0, f"manage.py {' '.join(args)} failed ({code}): {launched.stderr[-2000:]}"
    return time.perf_counter() - t0, peak_kib / 1024


def run_size(n_questions: int, n_readers: int = 3, n_models: int = 8) -> dict:
    """The costs of one study size (see the module docstring)."""
    from django.core.cache import cache

    label = f"{n_questions} questions"
    study, pi, readers, out = build_bulk(n_questions, n_readers, n_models)
    imports = out["prediction_import"]
    print(
        f"[{label}] written in {out['questions_written']:.1f} s; prediction import per model: "
        + ", ".join(f"{w:.2f}" for w, _ in imports)
        + " s wall (CPU "
        + ", ".join(f"{c:.2f}" for _, c in imports)
        + f" s), load {os.getloadavg()[0]:.1f}"
    )
    pi_client, out["case"], page_url, zip_url = signed_in(study, pi, readers[0])

    def page_with_figures():
        html = pi_client.get(page_url).content.decode()
        assert "job-status" not in html, "the page is still waiting for the worker"
        pictures = re.findall(r'<img src="([^"]+)"', html)
        fetch_pictures(pi_client, pictures)

    cache.clear()
    out["page_cold"] = timed(lambda: pi_client.get(page_url))
    out["worker_prepares"], out["worker_mb"] = _child(
        ["db_worker", "--batch", "--no-reload", "--no-startup-delay", "-v0"]
    )
    out["page_warm"] = timed(page_with_figures, repeat=3)
    response = pi_client.get(zip_url)
    assert response.status_code == 200, response.status_code
    out["zip_mb"] = len(response.content) / 1e6
    out["zip_prepared"] = timed(lambda: pi_client.get(zip_url), repeat=3)
    with tempfile.TemporaryDirectory() as export_dir:
        out["export"], out["export_mb"] = _child(
            ["export_analysis", study.slug, "--out", export_dir]
        )
    case = out["case"]
    print(f"[{label}] case page {case * 1000:.0f} ms (load {os.getloadavg()[0]:.1f})")
    for key in ("page_cold", "page_warm", "zip_prepared", "worker_prepares", "export"):
        print(f"[{label}] {key:16s} {out[key]:8.2f} s = {out[key] / case:8.1f}x the case page")
    print(
        f"[{label}] worker peak {out['worker_mb']:.0f} MB; export_analysis peak "
        f"{out['export_mb']:.0f} MB; ZIP {out['zip_mb']:.1f} MB"
    )
    return out


def growth(sizes: list[int]) -> bool:
    """Each size in a fresh SQLite database; the growth table at the end."""
    import subprocess

    results = {}
    for n in sizes:
        child = subprocess.run(
            [sys.executable, __file__, "--size-child", str(n)], capture_output=True, text=True
        )
        print(child.stdout, end="")
        if child.returncode != 0:
            print(child.stderr[-3000:])
            return False
        line = [x for x in child.stdout.splitlines() if x.startswith("RESULT ")][-1]
        results[n] = __import__("json").loads(line[len("RESULT ") :])
    print("\ncost                              " + "".join(f"{n:>14,}" for n in sizes))
    rows = [
        ("questions written (bulk) s", lambda r: r["questions_written"]),
        (
            "prediction import / model s",
            lambda r: statistics.median(w for w, _ in r["prediction_import"]),
        ),
        ("  its CPU s", lambda r: statistics.median(c for _, c in r["prediction_import"])),
        ("case page ms", lambda r: r["case"] * 1000),
        ("analysis page cold s", lambda r: r["page_cold"]),
        ("analysis page warm + figures s", lambda r: r["page_warm"]),
        ("worker prepares s", lambda r: r["worker_prepares"]),
        ("worker peak MB", lambda r: r["worker_mb"]),
        ("ZIP once prepared s", lambda r: r["zip_prepared"]),
        ("ZIP MB", lambda r: r["zip_mb"]),
        ("export_analysis s", lambda r: r["export"]),
        ("export_analysis peak MB", lambda r: r["export_mb"]),
    ]
    for name, get in rows:
        print(f"{name:34s}" + "".join(f"{get(results[n]):14.2f}" for n in sizes))
    last = results[sizes[-1]]
    return (
        statistics.median(w for w, _ in last["prediction_import"]) <= 3
        and last["page_warm"] <= 5 * last["case"]
        and last["export_mb"] <= 300
    )


def setup_django(database_url: str, media: Path) -> None:
    os.environ["DATABASE_URL"] = database_url
    os.environ.setdefault("DEBUG", "1")
    os.environ["MEDIA_ROOT"] = str(media)
    os.environ["TASKS_URL"] = "db://"
    os.environ["CACHE_URL"] = f"file://{media}/cache"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "readerstudy.config.settings")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)


def postgres_available() -> bool:
    try:
        import psycopg

        with psycopg.connect(PG_ADMIN, connect_timeout=3):
            return True
    except Exception:
        return False


def main() -> int:
    skip_pg = "--skip-postgres" in sys.argv
    if "--size-child" in sys.argv:  # one size of the growth table, in a fresh process
        import json

        n = int(sys.argv[sys.argv.index("--size-child") + 1])
        with tempfile.TemporaryDirectory() as tmp:
            setup_django(f"sqlite:///{tmp}/bench.sqlite3", Path(tmp) / "media")
            os.environ["ENV_FILE"] = os.devnull  # the worker and export children: this env
            out = run_size(n)
        print("RESULT " + json.dumps(out))
        return 0
    if "--questions" in sys.argv:
        sizes = [int(x) for x in sys.argv[sys.argv.index("--questions") + 1].split(",")]
        ok = growth(sizes)
        print("goals met" if ok else "goals NOT met")
        return 0 if ok else 1
    if "--postgres-child" in sys.argv:  # 18 raters on PostgreSQL, in a fresh process
        url = sys.argv[sys.argv.index("--postgres-child") + 1]
        with tempfile.TemporaryDirectory() as media:
            setup_django(url, Path(media))
            result = run("PostgreSQL, 18 raters", 10, 8, page=False)
        return 0 if result["worker_prepares_zip"] < 30 else 1
    with tempfile.TemporaryDirectory() as tmp:
        setup_django(f"sqlite:///{tmp}/bench.sqlite3", Path(tmp) / "media")
        two_arm = run_two_arm("SQLite, two arms, 6 readers")
        ok = two_arm["page_warm"] <= 5 * two_arm["case"]
        if "--two-arm-only" in sys.argv:
            print("goals met" if ok else "goals NOT met")
            return 0 if ok else 1
        result = run("SQLite, 11 raters", 3, 8, page=True)
    ok = (
        ok
        and result["page_warm"] <= 5 * result["case"]
        and result["zip_after_page"] <= 50 * result["case"]
    )
    if not skip_pg and postgres_available():
        import subprocess

        import psycopg

        name = f"rs_analysis_bench_{uuid.uuid4().hex[:6]}"
        with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        try:
            url = PG_ADMIN.rsplit("/", 1)[0] + "/" + name
            child = subprocess.run([sys.executable, __file__, "--postgres-child", url])
            ok = ok and child.returncode == 0
        finally:
            with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    else:
        print("PostgreSQL not reachable (or --skip-postgres): 18-rater ZIP not measured")
    print("goals met" if ok else "goals NOT met")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
