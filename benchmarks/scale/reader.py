"""Simulated people for the scale benchmark: readers that send answers the way the reading
page's outbox does (static/js/reader-outbox.js), and a PI who opens the analysis and the ZIP.

A reader signs in, then per case: `/healthz` (the latency baseline under the same load), the
case page, a pause (reading), and the answer POST as the page sends it: form fields, `time_ms`,
`base` (what the page showed as saved: all empty on a fresh case), `Accept: application/json`
and the CSRF token in `X-CSRFToken`. Like the outbox:

- a connection error or a 5xx is retried after 1, 2, 4 … 30 s with the same values (an
  identical repeat is recorded once by the server); on a connection error the next attempt
  goes to the other server, as a load balancer whose health check failed would send it;
- a 403 marked `X-CSRF-Failed` fetches a fresh token from the session URL once and sends again;
- 400/403/404/409/422 are refusals (counted; the benchmark expects none);
- an answer counts as acknowledged only on a 2xx JSON receipt (`saved`).

One post in ten is sent twice at once from a second connection with the same cookies (a double
click or a second tab). Everything is bounded: a reader stops at its deadline.
"""

from __future__ import annotations

import contextlib
import json
import random
import re
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field

import requests

from readerstudy.vocabulary import LETTERS

RETRY_FIRST_S = 1.0
RETRY_MAX_S = 30.0
REFUSED = {400, 403, 404, 409, 422}
EMPTY_BASE = {"choice": "", "difficulty": "", "alignment": "", "comment": ""}


@dataclass
class Tally:
    """What one simulated person saw; merged by the runner."""

    # kind -> (time.time() at the start, seconds) per response
    latency: dict[str, list[tuple[float, float]]] = field(default_factory=lambda: defaultdict(list))
    statuses: dict[int, int] = field(default_factory=lambda: defaultdict(int))
    acked: dict[int, str] = field(default_factory=dict)  # case number -> acknowledged choice
    acked_at: dict[int, float] = field(default_factory=dict)  # case number -> time.time()
    refused: list[str] = field(default_factory=list)
    server_errors: list[str] = field(default_factory=list)
    connection_errors: int = 0
    timeouts: int = 0
    failovers: int = 0
    retries: int = 0
    duplicate_posts: int = 0
    csrf_refreshes: int = 0
    unfinished: int = 0  # answers still waiting at the deadline


class Balancer:
    """The load balancer in front of the servers: a server whose connection failed is taken
    out of rotation until its `/healthz` answers again (checked every second)."""

    def __init__(self, servers: list[str]):
        self.servers = servers
        self.up = [True] * len(servers)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._check, daemon=True)
        self._thread.start()

    def choose(self, preferred: int) -> int:
        if self.up[preferred]:
            return preferred
        others = [i for i, up in enumerate(self.up) if up]
        return others[0] if others else preferred

    def failed(self, index: int) -> None:
        self.up[index] = False

    def _check(self) -> None:
        while not self._stop.wait(1.0):
            for i, base in enumerate(self.servers):
                if self.up[i]:
                    continue
                with contextlib.suppress(requests.RequestException):
                    self.up[i] = requests.get(f"{base}/healthz", timeout=2).status_code == 200

    def close(self) -> None:
        self._stop.set()


class Person:
    def __init__(self, balancer: Balancer, primary: int, username: str, password: str):
        self.balancer = balancer
        self.servers = balancer.servers
        self.primary = primary
        self.current = primary
        self.username = username
        self.password = password
        self.session = requests.Session()
        self.tally = Tally()
        self._lock = threading.Lock()

    @property
    def base(self) -> str:
        return self.servers[self.current]

    def _failover(self) -> None:
        self.balancer.failed(self.current)
        with self._lock:
            self.current = self.balancer.choose((self.current + 1) % len(self.servers))
            self.tally.failovers += 1

    def _once(self, kind: str, method: str, path: str, session=None, **kwargs):
        """One request; None on a connection error (counted, and the next goes elsewhere)."""
        session = session or self.session
        start, at = time.perf_counter(), time.time()
        try:
            response = session.request(method, self.base + path, timeout=60, **kwargs)
        except (requests.ConnectionError, requests.Timeout) as exc:
            # The outbox treats any failed fetch alike (a timed-out answer may have been
            # saved: sending it again is harmless, the server records it once).
            with self._lock:
                if isinstance(exc, requests.Timeout):
                    self.tally.timeouts += 1
                else:
                    self.tally.connection_errors += 1
            self._failover()
            return None
        elapsed = time.perf_counter() - start
        with self._lock:
            self.tally.latency[kind].append((at, elapsed))
            self.tally.statuses[response.status_code] += 1
            if response.status_code >= 500:
                self.tally.server_errors.append(f"{method} {path} -> {response.status_code}")
        return response

    def get(self, kind: str, path: str, deadline: float, **kwargs):
        """A page load; reloaded after a second while the server cannot be reached or fails."""
        while True:
            response = self._once(kind, "GET", path, **kwargs)
            if response is not None and response.status_code < 500:
                return response
            if time.monotonic() > deadline:
                return response
            with self._lock:
                self.tally.retries += 1
            time.sleep(1.0)

    def sign_in(self, deadline: float) -> None:
        page = self.get("sign-in", "/accounts/login/", deadline)
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
        data = {"username": self.username, "password": self.password, "csrfmiddlewaretoken": token}
        while True:
            response = self._once(
                "sign-in",
                "POST",
                "/accounts/login/",
                data=data,
                headers={"Referer": self.base + "/accounts/login/"},
                allow_redirects=False,
            )
            if response is not None and response.status_code == 302:
                return
            if response is not None and response.status_code < 500:
                raise RuntimeError(f"{self.username} could not sign in: {response.status_code}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.username} could not sign in before the deadline")
            time.sleep(1.0)


class Reader(Person):
    def __init__(self, balancer, primary, username, password, slug: str, seed: int, think_s):
        super().__init__(balancer, primary, username, password)
        self.slug = slug
        self.rng = random.Random(seed)
        self.think_s = think_s

    def _send(self, number: int, action: str, data: dict, deadline: float, session=None) -> None:
        """The outbox's send loop for one entry: until saved, refused or the deadline."""
        session = session or self.session
        delay = 0.0
        csrf_tries = 0
        while True:
            headers = {
                "Accept": "application/json",
                "X-CSRFToken": session.cookies.get("csrftoken", ""),
                "Referer": f"{self.base}/s/{self.slug}/read/{number}/",
            }
            response = self._once(
                "submit", "POST", action, session=session, data=data, headers=headers
            )
            if response is not None:
                is_json = "application/json" in response.headers.get("Content-Type", "")
                body = response.json() if is_json else {}
                csrf_failed = response.status_code == 403 and response.headers.get("X-CSRF-Failed")
                if csrf_failed and csrf_tries < 1:
                    csrf_tries += 1
                    with self._lock:
                        self.tally.csrf_refreshes += 1
                    fresh = self.get("session", f"/s/{self.slug}/read/session/", deadline)
                    session.cookies.set("csrftoken", fresh.json()["csrf"])
                    continue
                if response.ok and body.get("saved"):
                    with self._lock:
                        self.tally.acked[number] = data["choice"]
                        self.tally.acked_at[number] = time.time()
                    return
                if response.status_code in REFUSED:
                    with self._lock:
                        self.tally.refused.append(
                            f"case {number}: {response.status_code} {body.get('error', '')}"
                        )
                    return
                if response.status_code < 500:  # a page instead of a receipt: signed out
                    with self._lock:
                        self.tally.refused.append(f"case {number}: {response.status_code} page")
                    return
            delay = min(RETRY_MAX_S, delay * 2 if delay else RETRY_FIRST_S)
            if time.monotonic() + delay > deadline:
                with self._lock:
                    self.tally.unfinished += 1
                return
            with self._lock:
                self.tally.retries += 1
            time.sleep(delay)

    def _twin(self) -> requests.Session:
        """A second tab: its own connection, the same cookies."""
        twin = requests.Session()
        twin.cookies.update(self.session.cookies)
        return twin

    def read(self, n_cases: int, deadline: float, start_at: float) -> Tally:
        """Answer cases 1..n_cases (this reader's own order) until done or the deadline."""
        time.sleep(max(0.0, start_at - time.monotonic()))
        for number in range(1, n_cases + 1):
            if time.monotonic() > deadline:
                break
            self.current = self.balancer.choose(self.primary)  # back once its health check passes
            self.get("healthz", "/healthz", deadline)
            page = self.get("case page", f"/s/{self.slug}/read/{number}/", deadline)
            if page is None or page.status_code != 200:
                continue
            match = re.search(r'id="answer-form"[^>]*action="([^"]+)"', page.text)
            action = match.group(1).replace("&amp;", "&")
            time.sleep(self.rng.uniform(*self.think_s))
            data = {
                "choice": self.rng.choice(LETTERS),
                "difficulty": self.rng.choice(["easy", "medium", "hard"]),
                "alignment": self.rng.choice(["yes", "yes", "partly", "no"]),
                "comment": "",
                "time_ms": str(self.rng.randrange(2_000, 60_000)),
                "base": json.dumps(EMPTY_BASE),
            }
            if self.rng.random() < 0.1:
                with self._lock:
                    self.tally.duplicate_posts += 1
                twin = threading.Thread(
                    target=self._send, args=(number, action, data, deadline, self._twin())
                )
                twin.start()
                self._send(number, action, data, deadline)
                twin.join()
            else:
                self._send(number, action, data, deadline)
        return self.tally


class PI(Person):
    """Opens the analysis page (and its figures, as the browser does), then asks for the ZIP
    and follows its progress page until the ZIP is served."""

    def open_analysis(self, slug: str, deadline: float) -> dict:
        """The page, then each figure as the browser gets it: an `<img>` once drawn, else its
        placeholder asked again every second (htmx) until it holds the picture."""
        page = self.get("analysis page", f"/s/{slug}/analysis/", deadline)
        images = re.findall(r'<img src="([^"]*/analysis/figure/[^"]+)"', page.text)
        slots = re.findall(r'hx-get="([^"]*/analysis/figure-slot/[^"]+)"', page.text)
        waited = 0
        while slots and time.monotonic() < deadline:
            pending = []
            for url in slots:
                slot = self.get(
                    "figure", url.replace("&amp;", "&"), deadline, headers={"HX-Request": "true"}
                )
                found = re.findall(r'<img src="([^"]+)"', slot.text) if slot is not None else []
                images += found
                if not found:
                    pending.append(url)
            slots = pending
            if slots:
                waited += 1
                time.sleep(1.0)
        for url in images:
            self.get("figure", url.replace("&amp;", "&"), deadline)
        return {
            "status": page.status_code,
            "as_of_older_version": "Showing the analysis as of" in page.text,
            "computing": "A worker is computing" in page.text,
            "figures_shown": len(images),
            "figures_never_shown": len(slots),
            "slot_rounds_waited": waited,
        }

    def fetch_zip(self, slug: str, deadline: float, poll_s: float = 1.0) -> dict:
        started = time.perf_counter()
        first = self.get("zip", f"/s/{slug}/analysis/export.zip", deadline)
        response, polls = first, 0
        while response is not None and response.status_code == 202:
            if time.monotonic() > deadline:
                break
            time.sleep(poll_s)
            polls += 1
            status = self.get(
                "analysis status",
                f"/s/{slug}/analysis/status/?want=zip",
                deadline,
                headers={"HX-Request": "true"},
            )
            if status is not None and status.headers.get("HX-Redirect"):
                response = self.get("zip", status.headers["HX-Redirect"], deadline)
        ok = response is not None and response.status_code == 200
        return {
            "first_status": first.status_code if first is not None else None,
            "status": response.status_code if response is not None else None,
            "polls": polls,
            "bytes": len(response.content) if ok else 0,
            "seconds": round(time.perf_counter() - started, 3),
            "is_zip": ok and response.content[:2] == b"PK",
        }
