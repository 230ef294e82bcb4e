"""The one lock between a study's design and its readers' work.

A PI may change the design until the first answer or finished session (readerstudy.design); an
answer saved at that moment must be judged by one design or the other, never stored under the
old one after the new one committed. On PostgreSQL a transaction-scoped advisory lock per
study does it: answers and finishes take it shared (they never wait for each other), a design
change takes it exclusively (it waits for answers in flight, and they wait for it). SQLite
runs one writer at a time and refuses a write on a stale read, so there it is a no-op.
"""

from __future__ import annotations

from django.db import connection

# The lock's namespace (first key of the two-key advisory lock): "RSDL".
_DESIGN_NAMESPACE = 0x5253444C


def design_lock(study_id: int, *, shared: bool) -> None:
    """Hold the study's design lock until the current transaction ends (call inside one)."""
    if connection.vendor != "postgresql":
        return
    function = "pg_advisory_xact_lock_shared" if shared else "pg_advisory_xact_lock"
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {function}(%s, %s)", [_DESIGN_NAMESPACE, int(study_id)])
