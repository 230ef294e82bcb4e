"""Write every analysis output of a study to a folder: CSV tables, figures, one XLSX report."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from django.utils.text import slugify

from analysis.pipeline import AnalysisResult
from analysis.stats import plots


def kappa_slug(name: str) -> str:
    return "all" if name == "All tasks" else slugify(name)


def write_analysis(result: AnalysisResult, out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []

    def save(name: str, data: bytes | str) -> None:
        path = out / name
        path.write_bytes(data if isinstance(data, bytes) else data.encode())
        written.append(path)

    note = result.settings.describe()
    save("accuracy.csv", result.accuracy.to_csv(index=False))
    save("accuracy_by_category.csv", result.accuracy_by_category.to_csv(index=False))
    for name, matrix in result.kappas.items():
        slug = kappa_slug(name)
        save(f"kappa_{slug}.csv", matrix.to_csv(index_label="rater"))
        for fmt in plots.FORMATS:
            figure = plots.kappa_figure(
                {name: matrix},
                scale=result.settings.scale,
                vrange=result.settings.vrange,
                note=note,
            )
            save(f"kappa_{slug}.{fmt}", plots.figure_bytes(figure, fmt))
    if result.kappas:
        figure = plots.kappa_figure(
            result.kappas, scale=result.settings.scale, vrange=result.settings.vrange, note=note
        )
        save("kappa_panels.png", plots.figure_bytes(figure, "png"))
    if not result.accuracy.empty:
        save(
            "accuracy.png",
            plots.figure_bytes(plots.accuracy_figure(result.accuracy, note=note), "png"),
        )
    responses = result.responses.assign(
        correct=(result.responses["answer"] == result.responses["correct_answer"])
    )
    responses_out = responses[
        [
            "question_id",
            "rater",
            "rater_kind",
            "answer",
            "correct",
            "difficulty",
            "alignment",
            "time_ms",
            "excluded",
        ]
    ]
    save("responses.csv", responses_out.to_csv(index=False))
    questions = result.responses.drop_duplicates("question_id")[
        ["question_id", "task", "category", "correct_answer", "excluded"]
    ]
    save("questions.csv", questions.to_csv(index=False))
    report = out / "report.xlsx"
    with pd.ExcelWriter(report, engine="openpyxl") as xlsx:
        pd.DataFrame({"setting": ["policy"], "value": [note]}).to_excel(
            xlsx, sheet_name="settings", index=False
        )
        result.accuracy.to_excel(xlsx, sheet_name="accuracy", index=False)
        result.accuracy_by_category.to_excel(xlsx, sheet_name="accuracy_by_category", index=False)
        for name, matrix in result.kappas.items():
            matrix.to_excel(xlsx, sheet_name=f"kappa_{kappa_slug(name)}"[:31], index_label="rater")
        result.ai_vs_readers.to_excel(xlsx, sheet_name="ai_vs_readers", index=False)
        result.failed.to_excel(xlsx, sheet_name="failed_extractions", index=False)
        responses_out.to_excel(xlsx, sheet_name="responses", index=False)
        questions.to_excel(xlsx, sheet_name="questions", index=False)
    written.append(report)
    return written
