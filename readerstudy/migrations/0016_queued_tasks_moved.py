"""Tasks queued on the database backend before their functions moved to their homes (the
analysis preparation, the design's study creation, the jobs' sweep) are stored under the old
dotted paths, which no longer import: a worker would fail each one, and a running one could not
be found to run again. Point every stored record at the function's new path, so what was queued
runs and what was running can be queued again. (RQ stores paths in Redis: drain its queues
before such an upgrade, as docs/operations.md says.)"""

from django.db import migrations

MOVED = {
    "analysis.tasks.analysis_prepare": "analysis.preparation.analysis_prepare",
    "analysis.tasks.analysis_refresh": "analysis.preparation.analysis_refresh",
    "analysis.tasks.designed_study_create_task": "readerstudy.design.tasks.study_create_task",
    "readerstudy.tasks.jobs_sweep_task": "readerstudy.jobs.sweep.jobs_sweep_task",
}


def point_at_new_paths(apps, schema_editor, moves=MOVED):
    records = apps.get_model("django_tasks_database", "DBTaskResult").objects
    for old, new in moves.items():
        records.filter(task_path=old).update(task_path=new)


def point_at_old_paths(apps, schema_editor):
    point_at_new_paths(apps, schema_editor, {new: old for old, new in MOVED.items()})


class Migration(migrations.Migration):
    dependencies = [
        ("readerstudy", "0015_confidence_scale_binary_questions"),
        ("django_tasks_database", "0021_conditional_partial_index_ordering"),
    ]

    operations = [migrations.RunPython(point_at_new_paths, point_at_old_paths)]
