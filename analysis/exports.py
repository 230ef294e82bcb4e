"""Every analysis output of a study as files: CSV tables (each headed by the policy), figures
(PNG 300 dpi, SVG with text, PDF with TrueType fonts), one XLSX report and policy.json.

The same bytes go to `export_analysis`'s folder, the page's ZIP and the single downloads.
Cells that a spreadsheet would run as a formula are neutralised (readerstudy.spreadsheets).
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Callable
from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure

from analysis.pipeline import AnalysisResult
from analysis.reporting import methods_markdown
from analysis.selectors import COLUMNS
from analysis.stats import plots
from analysis.stats.design import power_table
from analysis.stats.mrmc_formats import README_LINES, id_map, package_files
from readerstudy.spreadsheets import frame_csv, write_sheet, xlsx_writer

ALREADY_COMPRESSED = (".png", ".xlsx")
# The policy values an aided-vs-unaided table rests on (AnalysisSettings.design_policy).
DESIGN_POLICY_KEYS = (
    "missing",
    "missing_means",
    "alpha",
    "ci_level",
    "ni_margin",
    "ni_margin_means",
)
QUESTION_COLUMNS = [
    "question_id",
    "case_id",
    "task",
    "category",
    "correct_answer",
    "excluded",
    "excluded_reason",
    "rejected",
    "rejected_by",
]
# The responses export: the analysis's columns (analysis.selectors.COLUMNS, so a new answer
# column reaches it from there) less what is the question's (questions.csv), with whether the
# answer is correct in place of the key.
RESPONSE_COLUMNS = [
    "correct" if c == "correct_answer" else c
    for c in COLUMNS
    if c == "correct_answer"
    or c not in set(QUESTION_COLUMNS) - {"question_id", "excluded", "rejected"}
]


def responses_table(result: AnalysisResult) -> pd.DataFrame:
    r = result.responses
    out = r.assign(correct=(r["answer"] == r["correct_answer"]).where(r["answer"].notna()))
    return out[[c for c in RESPONSE_COLUMNS if c in out.columns]]


def questions_table(result: AnalysisResult) -> pd.DataFrame:
    q = result.responses.drop_duplicates("question_id")
    return q[[c for c in QUESTION_COLUMNS if c in q.columns]]


def all_tables(result: AnalysisResult) -> dict[str, pd.DataFrame]:
    """Every table by file stem, kappa matrices included (kappa_<scale>_<task>)."""
    return {
        **result.tables(),
        **result.matrices(),
        "responses": responses_table(result),
        "questions": questions_table(result),
    }


def table_csv(result: AnalysisResult, name: str, frame: pd.DataFrame) -> bytes:
    matrix = name.startswith(("kappa_answer_", "kappa_correct_"))
    design = result.design_table(name)
    if design is not None:  # its own unit, method and policy, and the policy values it uses
        policy = result.settings.policy()
        header = [
            f"table: {name}",
            *design.header_lines(),
            *(f"{key}: {policy[key]}" for key in DESIGN_POLICY_KEYS),
        ]
    else:
        header = [f"table: {name}", *result.settings.header_lines(name)]
    text = frame_csv(
        frame, index=matrix, index_label="rater" if matrix else None, header_lines=header
    )
    return text.encode()


def table_xlsx(result: AnalysisResult, frames: dict[str, pd.DataFrame]) -> bytes:
    buffer = io.BytesIO()
    policy = pd.DataFrame(list(result.settings.policy().items()), columns=["setting", "value"])
    with xlsx_writer(buffer) as xlsx:
        write_sheet(xlsx, policy, "settings", index=False)
        for name, frame in frames.items():
            matrix = name.startswith(("kappa_answer_", "kappa_correct_"))
            sheet = name.replace("kappa_answer_", "k_ans_").replace("kappa_correct_", "k_cor_")
            write_sheet(xlsx, frame, sheet, index=matrix, index_label="rater" if matrix else None)
    return buffer.getvalue()


def kappa_spans(result: AnalysisResult, scale: str) -> dict[str, tuple[int, int]]:
    """Per panel: smallest and largest n of a pair (questions both answered)."""
    pairs = result.kappa_pairs.get(scale)
    if pairs is None or pairs.empty:
        return {}
    grouped = pairs.groupby("task")["n"]
    return {
        task: (int(lo), int(hi))
        for task, lo, hi in zip(grouped.min().index, grouped.min(), grouped.max(), strict=True)
    }


def kappa_counts(result: AnalysisResult, scale: str) -> dict[str, pd.DataFrame]:
    """Per panel: questions both raters answered, as a symmetric rater x rater matrix."""
    pairs = result.kappa_pairs.get(scale)
    if pairs is None or pairs.empty:
        return {}
    out = {}
    for task, part in pairs.groupby("task"):
        both = pd.concat([part, part.rename(columns={"rater_a": "rater_b", "rater_b": "rater_a"})])
        out[task] = both.pivot(index="rater_a", columns="rater_b", values="n")
    return out


def figure_builders(result: AnalysisResult) -> dict[str, Callable[[], Figure]]:
    """Figure name -> function drawing it; only figures with something to show."""
    s = result.settings
    out: dict[str, Callable[[], Figure]] = {}
    if not result.accuracy.empty:
        out["accuracy_by_task"] = lambda: plots.accuracy_figure(
            result.accuracy, models=result.models, note=s.note("accuracy"), title="Accuracy by task"
        )
        out["accuracy_by_category"] = lambda: plots.accuracy_figure(
            result.accuracy_by_category,
            models=result.models,
            by="category",
            note=s.note("accuracy"),
            title="Accuracy by category",
        )
    for scale, matrices in result.kappa_by_scale.items():
        # The policy's scale only: the other scale's tables are in every export, and its
        # figure is one switch away (a kappa figure is the slowest thing to draw).
        if matrices and scale == s.scale:
            out[f"kappa_{scale}"] = lambda scale=scale, matrices=matrices: plots.kappa_figure(
                matrices,
                scale=scale,
                vrange=s.vrange,
                models=result.models,
                n_by_panel=kappa_spans(result, scale),
                n_matrices=kappa_counts(result, scale),
                note=s.note("kappa", scale),
            )
    if not result.reading_time.empty and result.reading_time["n"].sum() > 0:
        out["reading_time"] = lambda: plots.time_figure(
            result.reading_time, result.accuracy_by_time, note=s.note("time")
        )
    return out


FigureSource = Callable[[str, str], bytes]


def figure_files(result: AnalysisResult, figure: FigureSource | None = None) -> dict[str, bytes]:
    """name.fmt -> bytes for every figure; `figure(name, fmt)` may supply cached ones."""
    files = {}
    for name, build in figure_builders(result).items():
        if figure is None:
            drawn = plots.all_formats(build())
        else:
            drawn = {fmt: figure(name, fmt) for fmt in plots.FORMATS}
        for fmt, body in drawn.items():
            files[f"{name}.{fmt}"] = body
    return files


# The power section of the exports: the page's and `mrmc_power`'s defaults.
POWER_EFFECT, POWER_TARGET = 0.05, 0.8


def design_files(result: AnalysisResult) -> dict[str, bytes]:
    """A study with an aided arm: the power table (this study as the pilot), and under mrmc/
    the three MRMC-package input files, the key from their ids to the study's, and a README
    saying the design and how to load each file in R. Empty for a single-arm study."""
    if result.design_error:
        return {"design_not_analysed.txt": (result.design_error + "\n").encode()}
    if result.design is None:
        return {}
    frame, missing = result.design_frame, result.settings.missing
    files = {}
    table = power_table(result.design, POWER_EFFECT, POWER_TARGET, result.settings.alpha)
    header = ["table: power", *table.header_lines()]
    files["power.csv"] = frame_csv(table.data, header_lines=header).encode()
    if result.design.get("result") is None:  # nothing to compare yet: no package files
        return files
    packaged = package_files(frame, missing)
    files |= {f"mrmc/{name}": body for name, body in packaged.items()}
    files["mrmc/id_map.csv"] = frame_csv(id_map(frame, missing)).encode()
    lines = [
        f"Design: {result.design['design']}",
        f"Policy: {result.settings.design_policy().describe()}",
        "",
        "id_map.csv: the key from the ids in these files to the study's readers, X-rays and "
        "questions (keep it with the files; the files themselves carry no names).",
    ]
    lines += [f"{name}: {line}" for name, line in README_LINES.items() if name in packaged]
    if "rjafroc_not_written.txt" in packaged:
        lines.append("rjafroc_not_written.txt: why RJafroc's file is not written for this design.")
    files["mrmc/README.txt"] = ("\n".join(lines) + "\n").encode()
    return files


def analysis_files(result: AnalysisResult, figure: FigureSource | None = None) -> dict[str, bytes]:
    """Every output file by name."""
    tables = all_tables(result)
    files = {"policy.json": json.dumps(result.settings.policy(), indent=2).encode()}
    files["methods.md"] = methods_markdown(result).encode()
    files |= {f"{name}.csv": table_csv(result, name, frame) for name, frame in tables.items()}
    files |= design_files(result)
    files |= figure_files(result, figure)
    files["report.xlsx"] = table_xlsx(result, tables)
    return files


def write_analysis(result: AnalysisResult, out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, body in analysis_files(result).items():
        path = out / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(body)
        written.append(path)
    return written


def analysis_zip(result: AnalysisResult, figure: FigureSource | None = None) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, body in analysis_files(result, figure).items():
            # PNG and XLSX are compressed already: deflating them again costs time, saves nothing.
            packed = name.endswith(ALREADY_COMPRESSED)
            archive.writestr(name, body, zipfile.ZIP_STORED if packed else zipfile.ZIP_DEFLATED)
    return buffer.getvalue()
