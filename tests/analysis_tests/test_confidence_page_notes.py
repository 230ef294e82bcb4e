"""Every ROC and confidence table the page shows carries its rows' notes: a row whose
interval is empty ("not estimable: ...", "no interval: ...", an interval past its range) says
why on the page as in its CSV, never a bare "–"."""

import pandas as pd
import pytest

from analysis.confidence_analysis import CONFIDENCE_TABLES
from analysis.confidence_page import NOT_SHOWN, page_table
from analysis.stats import DesignTable

WHY = "not estimable: the differences vary neither over readers nor over X-rays"


@pytest.mark.parametrize("name", [n for n in CONFIDENCE_TABLES if n not in NOT_SHOWN])
def test_a_rows_note_is_shown_on_the_page(name):
    row = {
        "comparison": "aided − unaided",
        "modality": "unaided",
        "reader": "Reader 1",
        "rater": "Reader 1",
        "arm": "unaided",
        "model": "m",
        "analysis": "random readers, random cases",
        "auc": 0.5,
        "difference": 0.0,
        "se": 0.0,
        "ci_low": float("nan"),
        "ci_high": float("nan"),
        "note": WHY,
    }
    shown = page_table(name, DesignTable(pd.DataFrame([row]), "u", "m", "p"), {}, "keys")
    assert "Note" in shown["labels"], name
    assert WHY in shown["rows"][0], name
