"""Images derived before issue 26 get the new "default" window by migration: their "auto"
window when the header window held every value (RG1), their header window otherwise."""

import importlib

import pytest
from django.apps import apps

from readerstudy.models import Image
from tests.factories import ImageFactory

pytestmark = pytest.mark.django_db

migration = importlib.import_module("readerstudy.migrations.0009_study_reading_window_and_breaks")

AUTO = [8743.6, 13859.1]


def derived_before(header, value_min, value_max) -> Image:
    return ImageFactory(
        depth="depth/x.png",
        value_min=value_min,
        value_max=value_max,
        dicom_windows=[[*header, ""]],
        window_presets={"default": header, "lung": [10000.0, 12000.0], "auto": AUTO},
    )


def test_a_whole_range_header_window_gives_way_to_auto_and_a_reading_window_stays():
    rg1 = derived_before([15000.0, 30000.0], 874.0, 26479.0)
    clinical = derived_before([1000.0, 800.0], 0.0, 4095.0)
    migration.default_window_from_reading_windows(apps, None)
    rg1.refresh_from_db()
    clinical.refresh_from_db()
    assert rg1.window_presets["default"] == AUTO
    assert rg1.window_presets["lung"] == [10000.0, 12000.0]
    assert rg1.dicom_windows == [[15000.0, 30000.0, ""]]
    assert clinical.window_presets["default"] == [1000.0, 800.0]
