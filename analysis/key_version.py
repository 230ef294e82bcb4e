"""The key version an analysis rests on, in words, and its two key tables (pure: no Django).

- `key_statement`: the sentence every output carries (the page, the API, each table's README
  lines, methods.md): "keys as adjudicated on DATE: N questions re-keyed, M given several
  valid answers", or that the keys are the imported ones, and how many answers were scored
  against earlier words their readers saw.
- `key_changes_table`: one row per version of a study question after the imported one (old
  key -> new key or accepted set, error type, who decided, when, where), from the study's
  key facts (analysis.key_scoring.study_key_facts).
- `accuracy_by_key`: every rater's (readers' and AI models') accuracy under the original and
  the adjudicated keys and the difference, on the rows the analysis counts, under its
  missing-answer policy: the responses frame scores each row under both
  (`original_accepted`, `adjudicated_accepted`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis import stats
from analysis.stats import ACCEPTED, correct_matrix

KEY_CHANGE_COLUMNS = [
    "question_id",
    "version",
    "change",
    "old_key",
    "old_accepted",
    "new_key",
    "new_accepted",
    "error_type",
    "error_label",
    "reverses",
    "decided_by",
    "rule",
    "decided_in",
    "decided_at",
    "words_changed",
]
ACCURACY_BY_KEY_COLUMNS = [
    "rater",
    "kind",
    "task",
    "n",
    "correct_original",
    "accuracy_original",
    "correct_adjudicated",
    "accuracy_adjudicated",
    "difference",
    "answers_rescored",
]


def _plural(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else (many or one + 's')}"


def adjudicated_words(keys: dict) -> str:
    """What the adjudicated keys are, from the study's key facts."""
    if not keys.get("changes"):
        return "keys as imported: no correction accepted for the study's questions"
    words = (
        f"keys as adjudicated on {keys['adjudicated_on']}: "
        f"{_plural(keys.get('rekeyed', 0), 'question')} re-keyed, "
        f"{keys.get('several_valid', 0)} given several valid answers"
    )
    if keys.get("reworded"):
        words += f", {_plural(keys['reworded'], 'question')} reworded"
    return words


def key_statement(policy: str, keys: dict, earlier_words: int = 0) -> str:
    """The key version of an analysis in one sentence (see the module docstring)."""
    if policy == "original":
        accepted = len(keys.get("changes", []))
        return "original keys (as imported)" + (
            f"; not applied: {adjudicated_words(keys)}" if accepted else ""
        )
    words = adjudicated_words(keys)
    if earlier_words:
        words += (
            f"; {_plural(earlier_words, 'answer')} given to earlier words "
            f"{'is' if earlier_words == 1 else 'are'} scored against the key of the words "
            "their readers saw"
        )
    return words


def earlier_words_count(responses: pd.DataFrame) -> int:
    """Answers scored against words a later version changed (counted once per answer)."""
    if responses.empty or "earlier_words" not in responses:
        return 0
    given = responses["answer"].notna() & responses["earlier_words"].fillna(False).astype(bool)
    return int(given.sum())


def key_changes_table(keys: dict) -> pd.DataFrame:
    return pd.DataFrame(keys.get("changes", []), columns=KEY_CHANGE_COLUMNS)


def accuracy_by_key(analysed: pd.DataFrame, kinds: dict[str, str], missing) -> pd.DataFrame:
    """Per rater (then per task, "All" first): n and correct under each key, the accuracies
    and adjudicated − original; `answers_rescored`: answers whose score differs."""
    if analysed.empty or "original_accepted" not in analysed:
        return pd.DataFrame(columns=ACCURACY_BY_KEY_COLUMNS)
    scored = {
        name: correct_matrix(
            stats.prepare(analysed.assign(**{ACCEPTED: analysed[f"{name}_accepted"]})), missing
        )
        for name in ("original", "adjudicated")
    }
    data = stats.prepare(analysed)
    rows = []
    for task in [None, *data.tasks()]:
        select = data.rows(task)
        original = scored["original"][select]
        adjudicated = scored["adjudicated"][select]
        counted = ~np.isnan(original)
        n = counted.sum(axis=0)
        right_original = np.nansum(original, axis=0)
        right_adjudicated = np.nansum(adjudicated, axis=0)
        changed = (np.nan_to_num(original) != np.nan_to_num(adjudicated)) & counted
        for index, rater in enumerate(data.raters):
            if rater not in kinds:
                continue
            total = int(n[index])
            before = right_original[index] / total if total else float("nan")
            after = right_adjudicated[index] / total if total else float("nan")
            rows.append(
                {
                    "rater": rater,
                    "kind": kinds[rater],
                    "task": stats.ALL if task is None else task,
                    "n": total,
                    "correct_original": int(right_original[index]),
                    "accuracy_original": before,
                    "correct_adjudicated": int(right_adjudicated[index]),
                    "accuracy_adjudicated": after,
                    "difference": after - before,
                    "answers_rescored": int(changed[:, index].sum()),
                }
            )
    return pd.DataFrame(rows, columns=ACCURACY_BY_KEY_COLUMNS)
