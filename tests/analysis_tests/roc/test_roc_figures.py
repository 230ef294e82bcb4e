"""The ROC and calibration figures: every label on the page, an AI model's curve beside the
readers', and a figure without a reliability diagram when nobody gave probabilities."""

import numpy as np
import pandas as pd

from analysis import roc_plots
from analysis.confidence_analysis import POOLED, confidence_results
from tests.analysis_tests.roc.scales import FIVE
from tests.analysis_tests.roc.test_roc_ratings import vandyke_answers
from tests.analysis_tests.test_figures import texts_outside


def with_model():
    frame = vandyke_answers().assign(reader=lambda d: "Reader with a long name " + d["reader"])
    questions = frame.drop_duplicates("question_id")
    truth = (questions["correct_answer"] == "A").to_numpy()
    noise = np.random.default_rng(2).normal(0, 1, len(truth))
    present = 1 / (1 + np.exp(-(2 * (truth - 0.5) + noise)))
    models = pd.DataFrame(
        {
            "model": "Qwen2.5-VL-72B-Instruct",
            "case_id": questions["case_id"],
            "question_id": questions["question_id"],
            "correct": ((present > 0.5) == truth).astype(int),
            "probability": np.where(present > 0.5, present, 1 - present),
            "present_probability": present,
            "answer_present": (present > 0.5).astype(float),
        }
    )
    return confidence_results(frame, FIVE, models=models)["tables"]


def test_roc_figure_draws_readers_and_the_model_in_each_arm_within_the_page():
    tables = with_model()
    aucs = tables["auc"].data
    aucs = aucs[aucs["analysis"] == "this reader (normal)"]
    fig = roc_plots.roc_figure(
        tables["roc_points"].data,
        tables["roc_operating_points"].data,
        aucs,
        arms=["unaided", "aided"],
        note="A footnote that runs on " * 12,
        title="ROC curves",
    )
    assert texts_outside(fig) == []
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert any(label.startswith("Qwen2.5-VL-72B-Instruct (AI; AUC 0.") for label in legend)
    assert sum(label.startswith("Reader with a long name") for label in legend) == 5
    # every panel: 5 readers' curves and their answers' points, the model's curve and point
    for ax in fig.axes:
        assert ax.get_title().split(":")[0] in ("Unaided", "Aided")
        assert len(ax.get_lines()) == 1 + 5 * 2 + 2


def test_the_legend_names_the_ais_marker_only_where_an_ai_is_drawn():
    for models, said in ((None, False), (with_model, True)):
        tables = models() if models else confidence_results(vandyke_answers(), FIVE)["tables"]
        aucs = tables["auc"].data
        fig = roc_plots.roc_figure(
            tables["roc_points"].data,
            tables["roc_operating_points"].data,
            aucs[aucs["analysis"] == "this reader (normal)"],
            arms=["unaided", "aided"],
        )
        legend = " ".join(t.get_text() for t in fig.legends[0].get_texts())
        assert ("AI: ★" in legend) is said, legend


def test_calibration_figure_with_and_without_probabilities():
    tables = with_model()
    levels = tables["accuracy_by_confidence"].data
    both = roc_plots.calibration_figure(
        tables["calibration_bins"].data,
        levels,
        models=["Qwen2.5-VL-72B-Instruct"],
        pooled=POOLED,
        note="Calibration footnote " * 10,
    )
    assert texts_outside(both) == [] and len(both.axes) == 2
    alone = roc_plots.calibration_figure(None, levels, models=[], pooled=POOLED)
    assert texts_outside(alone) == [] and len(alone.axes) == 1
    assert alone.axes[0].get_title() == "Accuracy per confidence level"
