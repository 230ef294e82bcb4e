"""A simulated reader: signs in, then reads every case of a study in the browser's way.

Per case: the trivial endpoint (the latency baseline under the same load), the case page, a
random reload, the answer post as the reading page sends it (JSON receipt) and, one time in
ten, the same post twice at once (a double click or a second tab). A connection error while
the server is down is retried, as a reader would press again; an answer counts as
acknowledged only on a 2xx response.
"""

from __future__ import annotations

import random
import re
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field

import requests

from readerstudy.vocabulary import LETTERS

RETRY_FOR_S = 120.0


@dataclass
class Tally:
    """What one reader saw; merged by the runner."""

    latency: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    statuses: dict[int, int] = field(default_factory=lambda: defaultdict(int))
    acked: dict[int, str] = field(default_factory=dict)  # case number -> acknowledged choice
    connection_errors: int = 0
    duplicate_posts: int = 0
    reloads: int = 0


class Reader:
    def __init__(self, base: str, username: str, password: str, slug: str, seed: int):
        self.base = base
        self.username = username
        self.password = password
        self.slug = slug
        self.rng = random.Random(seed)
        self.session = requests.Session()
        self.tally = Tally()
        self._lock = threading.Lock()

    def _request(self, kind: str, method: str, path: str, session=None, **kwargs):
        session = session or self.session
        deadline = time.monotonic() + RETRY_FOR_S
        while True:
            start = time.perf_counter()
            try:
                response = session.request(method, self.base + path, timeout=30, **kwargs)
            except requests.ConnectionError:
                with self._lock:
                    self.tally.connection_errors += 1
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
                continue
            with self._lock:
                self.tally.latency[kind].append(time.perf_counter() - start)
                self.tally.statuses[response.status_code] += 1
            return response

    def sign_in(self) -> None:
        page = self._request("login", "GET", "/accounts/login/")
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
        response = self._request(
            "login",
            "POST",
            "/accounts/login/",
            data={
                "username": self.username,
                "password": self.password,
                "csrfmiddlewaretoken": token,
            },
            allow_redirects=False,
        )
        if response.status_code != 302:
            raise RuntimeError(f"{self.username} could not sign in: {response.status_code}")

    def _twin(self) -> requests.Session:
        """A second tab: its own connection, the same cookies."""
        twin = requests.Session()
        twin.cookies.update(self.session.cookies)
        return twin

    def _post_answer(self, number: int, data: dict, session=None) -> None:
        session = session or self.session
        headers = {
            "Accept": "application/json",
            "X-CSRFToken": self.session.cookies["csrftoken"],
            "Referer": f"{self.base}/s/{self.slug}/read/{number}/",
        }
        path = f"/s/{self.slug}/read/{number}/answer/"
        response = self._request(
            "submit", "POST", path, session=session, data=data, headers=headers
        )
        if 200 <= response.status_code < 300:
            with self._lock:
                self.tally.acked[number] = data["choice"]

    def read(self, n_cases: int) -> Tally:
        self.sign_in()
        for number in range(1, n_cases + 1):
            self._request("healthz", "GET", "/healthz")
            self._request("case page", "GET", f"/s/{self.slug}/read/{number}/")
            if self.rng.random() < 0.1:
                self.tally.reloads += 1
                self._request("case page", "GET", f"/s/{self.slug}/read/{number}/")
            data = {
                "choice": self.rng.choice(LETTERS),
                "difficulty": self.rng.choice(["easy", "medium", "hard"]),
                "alignment": self.rng.choice(["yes", "yes", "partly", "no"]),
                "comment": "",
                "time_ms": str(self.rng.randrange(2_000, 60_000)),
            }
            if self.rng.random() < 0.1:
                self.tally.duplicate_posts += 1
                twin = threading.Thread(target=self._post_answer, args=(number, data, self._twin()))
                twin.start()
                self._post_answer(number, data)
                twin.join()
            else:
                self._post_answer(number, data)
        return self.tally
