"""A task queued on the database backend under a path its function has since left is run by the
worker after the upgrade's migration (readerstudy 0016), not failed with an import error; the
migration's map names every stored path a task of this project has had."""

import importlib
import uuid

import pytest
from django.apps import apps
from django.utils import timezone
from django_tasks.base import Task

from tests.analysis_tests.test_analysis_downloads import DB_TASKS, run_db_worker
from tests.factories import ReaderStudyFactory

pytestmark = pytest.mark.django_db

moved = importlib.import_module("readerstudy.migrations.0016_queued_tasks_moved")


def queued(path: str, **kwargs):
    from django_tasks_db.models import DBTaskResult

    return DBTaskResult.objects.create(
        id=uuid.uuid4(),
        task_path=path,
        args_kwargs={"args": [], "kwargs": kwargs},
        backend_name="default",
        run_after=timezone.now(),
        exception_class_path="",
        traceback="",
    )


def test_every_new_path_is_a_task_and_no_old_one_imports():
    from django.utils.module_loading import import_string

    for old, new in moved.MOVED.items():
        assert isinstance(import_string(new), Task), new
        with pytest.raises(ImportError):
            import_string(old)


def test_a_refresh_queued_under_its_old_path_runs_after_the_migration(settings):
    settings.TASKS = DB_TASKS
    settings.ANALYSIS_PREPARE_DOWNLOADS = False
    study = ReaderStudyFactory()
    record = queued("analysis.tasks.analysis_refresh", study_id=study.pk)
    moved.point_at_new_paths(apps, None)
    run_db_worker()
    record.refresh_from_db()
    assert record.status == "SUCCESSFUL", (record.task_path, record.traceback[-300:])
    assert record.task_path == "analysis.preparation.analysis_refresh"


def test_without_the_migration_the_worker_fails_the_old_path(settings):
    """The defect the migration removes: the record names a module that is gone."""
    settings.TASKS = DB_TASKS
    record = queued("analysis.tasks.analysis_refresh", study_id=0)
    run_db_worker()
    record.refresh_from_db()
    assert record.status == "FAILED"
    assert "ModuleNotFoundError" in record.exception_class_path
