"""When a reader's answer is too fast to be a reading of the image (a key burst, a guess):
declared once, for every page and file that marks or counts such answers (the dashboard, the
answers export, a reader's debrief, the analysis' flow table and its `exclude_fast` policy).

The threshold is the reading policy's (`FAST_ANSWER_MS`, or the analysis' `fast_answer_ms`);
without one nothing is fast. A time of 0 or none is "not recorded" (an import, the API without
a time), not fast.
"""

from __future__ import annotations

import pandas as pd


def too_fast(time_ms: int | pd.Series | None, fast_ms: int | None) -> bool | pd.Series:
    """Whether an answer shown for `time_ms` on screen was given in less than `fast_ms`: one
    answer (an int or None) or a numeric column of times (NaN is not recorded), so a page
    that looks at one answer and the analysis that looks at a frame apply the same rule."""
    if not fast_ms or time_ms is None:
        return False
    return (time_ms > 0) & (time_ms < fast_ms)
