"""python manage.py jobs_sweep: housekeeping of background jobs, once.

Jobs whose worker was killed (silent for TASK_STALE_SECONDS) are queued again, or marked
failed in words after TASK_MAX_ATTEMPTS; finished jobs and the database engine's task records
older than TASK_RETENTION_DAYS are deleted. Workers do this themselves every
TASK_SWEEP_SECONDS while there is work; run this from cron (or before starting a worker) so an
idle installation is swept too.
"""

from __future__ import annotations

from django.core.management.base import BaseCommand

from readerstudy.jobs import jobs_sweep


class Command(BaseCommand):
    help = "Re-queue jobs of killed workers, fail those tried too often, prune old finished jobs."

    def handle(self, *args, **options) -> None:
        counts = jobs_sweep()
        self.stdout.write(
            "{requeued} job(s) queued again, {failed} marked failed, {pruned} finished job(s) "
            "and {task_records} task record(s) pruned.".format(**counts)
        )
