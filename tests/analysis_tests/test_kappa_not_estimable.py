"""A κ heatmap panel with n = 1 (a task with one question) showed 0.00 where two raters
disagreed and "–" where they agreed: neither is a measurement. Such cells are drawn as not
estimable, and the legend says why (issue 32)."""

import pandas as pd
from matplotlib.text import Text

from analysis import plots, stats
from analysis.figures import kappa_counts, kappa_spans


def _responses() -> pd.DataFrame:
    """Three readers; task "big" has 6 questions, task "one" a single question on which
    reader 1 and 2 agree and reader 3 disagrees."""
    rows = []
    answers = {
        "Reader 1": "ABCDAB" + "A",
        "Reader 2": "ABCDBA" + "A",
        "Reader 3": "ABDDAB" + "C",
    }
    for rater, letters in answers.items():
        for q, letter in enumerate(letters):
            rows.append(
                {
                    "question_id": f"q{q}",
                    "rater": rater,
                    "answer": letter,
                    "correct_answer": "A",
                    "task": "one" if q == 6 else "big",
                    "case_id": f"x{q}",
                }
            )
    return pd.DataFrame(rows)


def _texts(fig) -> list[str]:
    return [t.get_text() for t in fig.findobj(Text)]


def test_cells_with_one_question_in_common_are_not_estimable_and_the_legend_says_why():
    data = stats.prepare(_responses())
    matrices = stats.kappa_matrices(data, "answer")
    pairs = pd.concat(
        [
            stats.kappa_pairs(data, task, "answer", n_boot=20).assign(
                task=stats.ALL if task is None else task
            )
            for task in [None, *data.tasks()]
        ]
    )
    assert (pairs.loc[pairs["task"] == "one", "n"] == 1).all()
    fig = plots.kappa_figure(
        matrices, n_by_panel=kappa_spans(pairs), n_matrices=kappa_counts(pairs)
    )
    one = next(ax for ax in fig.axes if ax.get_title().startswith("one"))
    cells = [t.get_text() for t in one.texts if "\n" in t.get_text() or t.get_text() == "–"]
    assert cells == ["n.e.\nn=1"] * 3  # not "0.00" (a disagreement) nor "–" (an agreement)
    big = next(ax for ax in fig.axes if ax.get_title().startswith("big"))
    assert all(not t.get_text().startswith("n.e.") for t in big.texts)
    legend = " ".join(_texts(fig))
    assert "n.e. not estimable: fewer than 2 questions in common" in legend
    plots.figure_bytes(fig, "svg")


def test_no_not_estimable_entry_when_every_pair_shares_two_questions():
    data = stats.prepare(_responses().query("task == 'big'"))
    pairs = stats.kappa_pairs(data, None, "answer", n_boot=20).assign(task=stats.ALL)
    fig = plots.kappa_figure(stats.kappa_matrices(data, "answer"), n_matrices=kappa_counts(pairs))
    assert "not estimable" not in " ".join(_texts(fig))
