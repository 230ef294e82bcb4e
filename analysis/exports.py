"""Every analysis output of a study as files: CSV tables, figures (PNG 300 dpi, SVG with
text, PDF with TrueType fonts), one XLSX report, policy.json and README.txt.

Every CSV is a plain table (one header row, then data: it opens in Excel and in
`pd.read_csv(path)` as it is). What each table's numbers rest on (unit, method, the policy
values that apply) is written once per table in README.txt and in the XLSX's "about" sheet;
the whole policy is policy.json and the XLSX's "settings" sheet.

The same bytes go to `export_analysis`'s folder, the page's ZIP and the single downloads.
Cells that a spreadsheet would run as a formula are neutralised (readerstudy.platform.spreadsheets).
"""

from __future__ import annotations

import datetime as dt
import functools
import gc
import io
import json
import logging
import shutil
import tempfile
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import pandas as pd

from analysis.confidence_analysis import CONFIDENCE_TABLES
from analysis.figure_formats import FORMATS
from analysis.figures import FIGURES, drawing, figure_builders, figure_kind
from analysis.package_files import id_map, package_files, readme_lines
from analysis.pipeline import AnalysisResult, fast_mask
from analysis.reporting import counted_arm, methods_markdown, table_arm
from analysis.roc_package_files import auc_package_files, auc_readme_lines
from analysis.selectors import COLUMNS, FIRST_ANSWER_COLUMNS, RATING_COLUMNS
from analysis.stats import conclusions, describe_scale, power_table, right
from readerstudy.platform.downloads import export_filename
from readerstudy.platform.spreadsheets import frame_csv, write_frame_csv, write_sheet, xlsx_writer

log = logging.getLogger(__name__)

ALREADY_COMPRESSED = (".png", ".xlsx")
# The policy values an aided-vs-unaided table rests on (AnalysisSettings.design_policy).
DESIGN_POLICY_KEYS = (
    "missing",
    "missing_means",
    "alpha",
    "ci_level",
    "ni_margin",
    "ni_margin_means",
    "excluded_questions",
    "rejected_questions",
    "key",
    "key_means",
)
# The policy values a table of a study with a confidence scale rests on
# (AnalysisSettings.confidence_policy, and the questions every table keeps); the missing-answer
# policy is not one of them: an unrated question is left out of a reader's AUC.
CONFIDENCE_POLICY_KEYS = (
    "alpha",
    "ci_level",
    "bootstrap",
    "min_readers",
    "excluded_questions",
    "rejected_questions",
    "key",
    "key_means",
)
# What the aided-vs-unaided tables do with too-fast answers, whatever exclude_fast says: the
# design reads every reader on every question of their group in each arm.
DESIGN_FAST_LINE = (
    "too_fast_answers: kept in the aided-vs-unaided tables (exclude_fast applies to the "
    "single-arm tables only)"
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


# Which reading an answer belongs to: every answer of every arm is a row of the export.
ARM_COLUMNS = ["arm", "session", *FIRST_ANSWER_COLUMNS, "ai_answer"]


def responses_table(result: AnalysisResult) -> pd.DataFrame:
    """Every answer, in every arm, with its arm and session, whether it is correct and whether
    it was too fast (policy). A two-arm study's analysis reads the counted arm (the unaided
    one in a crossover) and compares the arms on the design frame; this export holds both:
    the counted arm's rows (every question and rater, models included) and, for each other
    arm, a row per reader and question of their group. `first_answer`, `first_confidence`: a
    second read's answer before the AI was shown and its rating; `ai_answer`: the AI's answer
    shown in the aided arm."""
    r = _with_arm(result, result.responses)
    r = pd.concat([r, _other_arms(result, r)], ignore_index=True)
    out = r.assign(
        correct=pd.Series(right(r), index=r.index).where(r["answer"].notna()),
        too_fast=fast_mask(r, result.settings.fast_answer_ms),
    )
    columns = [*RESPONSE_COLUMNS, *ARM_COLUMNS, "too_fast"]
    return out[[c for c in columns if c in out.columns]]


def _with_arm(result: AnalysisResult, responses: pd.DataFrame) -> pd.DataFrame:
    """The counted arm's rows with their arm and session (a reader's; models: none)."""
    counted = counted_arm(result.facts)
    if counted is None:  # not from a study (a notebook's frame): nothing to say
        return responses
    human = responses["rater_kind"].eq("human").to_numpy()
    out = responses.assign(arm=pd.Series(counted, index=responses.index).where(human, None))
    frame = result.arm_answers
    if frame is None:  # one arm, read in session 1
        return out.assign(session=pd.Series(1, index=out.index).where(human, None))
    own = frame[frame["arm"] == counted].set_index(["reader", "question_id"])
    keys = pd.MultiIndex.from_arrays([out["rater"], out["question_id"]])
    for column in ARM_COLUMNS[1:]:
        values = own[column].reindex(keys).to_numpy(dtype=object)
        out[column] = pd.Series(values, index=out.index).where(human, None)
    return out


def _other_arms(result: AnalysisResult, responses: pd.DataFrame) -> pd.DataFrame:
    """The rows of the arms the single-arm tables do not read: one per reader and question of
    their group (answer empty where not given yet), the question's columns as in the counted
    arm's rows."""
    counted, frame = counted_arm(result.facts), result.arm_answers
    if counted is None or frame is None:
        return pd.DataFrame()
    rows = frame[frame["arm"] != counted]
    if rows.empty:
        return pd.DataFrame()
    question_columns = [c for c in QUESTION_COLUMNS if c != "question_id"]
    questions = responses.drop_duplicates("question_id").set_index("question_id")
    questions = questions[[c for c in question_columns if c in questions.columns]]
    columns = ["question_id", "reader", "rater_id", "answer", "time_ms", *RATING_COLUMNS]
    # Each answer scored against the version its reader was shown (design_frame's columns).
    columns += [c for c in ("accepted", "key_version") if c in rows.columns]
    out = (
        rows[columns]
        .rename(columns={"reader": "rater"})
        .assign(
            rater_kind="human",
            presented=True,
            **{column: rows[column] for column in ARM_COLUMNS},
        )
    )
    out = out.join(questions, on="question_id")
    return out.reset_index(drop=True)


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


PRACTICE_WORDS = (
    "A practice set: every answer was given with feedback (right or wrong, the key and the "
    "explanation shown after it). These numbers describe practice, not a reader study; no "
    "research study's analysis counts these answers."
)


@dataclass(frozen=True)
class ExportInfo:
    """Which study and data the files are of: README.txt's first lines and the file names."""

    slug: str
    title: str = ""
    version: str = ""  # the data version (analysis.cache.data_version)
    date: dt.date | None = None  # when the files were written (UTC)
    practice: bool = False  # a practice set: every answer was given with feedback

    @property
    def kind_words(self) -> str:
        return PRACTICE_WORDS if self.practice else ""

    def filename(self, stem: str, ext: str) -> str:
        """`<slug>-<stem>-v<version>-<date>.<ext>`
        (readerstudy.platform.downloads.export_filename)."""
        return export_filename(self.slug, stem, ext, version=self.version, date=self.date)


def table_about(result: AnalysisResult, name: str) -> list[str]:
    """What table `name`'s numbers rest on: unit, method and the policy values that apply
    (a design table: its own unit, method and policy)."""
    design = result.design_table(name)
    if design is not None and name in CONFIDENCE_TABLES:
        policy = result.settings.policy()
        lines = [
            *design.header_lines(),
            *(f"{key}: {policy[key]}" for key in CONFIDENCE_POLICY_KEYS),
            f"key_version: {result.key_version}",
            f"confidence_scale: {describe_scale(result.confidence['scale'])}",
        ]
        lines.append(result.confidence_fast_line())
    elif design is not None:
        policy = result.settings.policy()
        keys = (f"{key}: {policy[key]}" for key in DESIGN_POLICY_KEYS)
        lines = [
            *design.header_lines(),
            *keys,
            f"key_version: {result.key_version}",
            DESIGN_FAST_LINE,
        ]
    else:
        lines = result.header_lines(name)
    arm = table_arm(result.facts, name)
    if arm:
        lines.append(f"arm: {arm}")
    if any(line.startswith("excluded_questions:") for line in lines):
        # The policy lines say what is done with them; this one counts them.
        lines.append(f"questions_left_out: {result.selection_note()}")
    return lines


def _is_matrix(name: str) -> bool:
    return name.startswith(("kappa_answer_", "kappa_correct_"))


def table_csv(result: AnalysisResult, name: str, frame: pd.DataFrame) -> bytes:
    """A plain table (the matrices with their rater index); what it rests on: `table_about`."""
    matrix = _is_matrix(name)
    return frame_csv(frame, index=matrix, index_label="rater" if matrix else None).encode()


def write_table_csv(name: str, frame: pd.DataFrame, stream: BinaryIO) -> None:
    """`table_csv` into `stream`, a block of rows at a time."""
    matrix = _is_matrix(name)
    write_frame_csv(frame, stream, index=matrix, index_label="rater" if matrix else None)


def table_xlsx(result: AnalysisResult, frames: dict[str, pd.DataFrame]) -> bytes:
    """The tables as sheets, after a "settings" sheet (the policy) and an "about" sheet (per
    table: unit, method and the policy values it rests on)."""
    buffer = io.BytesIO()
    write_table_xlsx(result, frames, buffer)
    return buffer.getvalue()


def write_table_xlsx(result: AnalysisResult, frames: dict[str, pd.DataFrame], target) -> None:
    """`table_xlsx` into `target` (a file name or a seekable binary stream), a row at a time."""
    policy = pd.DataFrame(list(result.policy().items()), columns=["setting", "value"])
    about = pd.DataFrame(
        [
            (name, *line.split(": ", 1)) if ": " in line else (name, "", line)
            for name in frames
            for line in table_about(result, name)
        ],
        columns=["table", "about", "value"],
    )
    with xlsx_writer(target) as xlsx:
        write_sheet(xlsx, policy, "settings", index=False)
        write_sheet(xlsx, about, "about", index=False)
        for name, frame in frames.items():
            matrix = _is_matrix(name)
            sheet = name.replace("kappa_answer_", "k_ans_").replace("kappa_correct_", "k_cor_")
            write_sheet(xlsx, frame, sheet, index=matrix, index_label="rater" if matrix else None)


def failed_figure_lines(failed: dict[str, str]) -> list[str]:
    """README.txt's words on figures that could not be drawn (none: no lines)."""
    if not failed:
        return []
    lines = ["", "Figures that could not be drawn (every table is complete without them):"]
    return lines + [f"  {name}: {reason}" for name, reason in failed.items()]


def readme_txt(
    result: AnalysisResult,
    tables: dict[str, pd.DataFrame],
    files: list[str],
    info: ExportInfo | None = None,
    failed: dict[str, str] | None = None,
) -> bytes:
    """README.txt of an export: which study and data, the policy in force, how to read the
    files, per table what its numbers rest on (what were `#` rows above each CSV), and the
    figures: what each shows, and which could not be drawn (`failed`: name -> why)."""
    s = result.settings
    lines = []
    if info is not None:
        title = f" ({info.title})" if info.title else ""
        lines.append(f"Study: {info.slug}{title}")
        if info.version:
            lines.append(f"Data version: {info.version}")
        lines.append(f"Written: {(info.date or dt.datetime.now(dt.UTC).date()).isoformat()}")
        if info.kind_words:
            lines.append(info.kind_words)
    lines += [
        f"Policy in force: {s.describe()}.",
        f"Key version: {result.key_version} (key_changes.csv; accuracy_by_key.csv).",
        f"Fast answers: {s.fast_means()} (fast_answer_ms = {s.fast_answer_ms}, "
        f"exclude_fast = {str(s.exclude_fast).lower()}).",
        "",
        "Every CSV is a plain table: one header row, comma-separated, UTF-8; read it with",
        '  pandas.read_csv("accuracy.csv")   (kappa matrices: index_col="rater").',
        "Raters: `rater` is the display name in every table; raters.csv maps it to `rater_id`",
        "(kind:id) and `username` (readers) so a table can be joined to people.",
        "The whole policy: policy.json, and the `settings` sheet of report.xlsx. The lines",
        "below are also the `about` sheet of report.xlsx.",
        "",
        "Tables (unit, method and the policy values each rests on):",
    ]
    for name in tables:
        lines.append(f"{name}.csv")
        lines += [f"  {line}" for line in table_about(result, name)]
    others = [f for f in files if not f.endswith(".csv") and f != "README.txt"]
    figures = sorted({f.rsplit(".", 1)[0] for f in others if f.endswith(tuple(FORMATS))})
    if figures:
        lines += ["", "Figures (PNG 300 dpi, SVG, PDF; the footnote states the policy applied):"]
        lines += [f"  {name}: {FIGURES[figure_kind(name)]}" for name in figures]
    lines += failed_figure_lines(failed or {})
    stated = conclusions(result.design)
    if stated:
        lines += ["", "Aided against unaided, in words (non_inferiority.csv, `conclusion`):"]
        lines += [f"  {analysis}: {conclusion}" for analysis, conclusion in stated]
    if "power.csv" in files:
        lines += ["", "power.csv", *(f"  {line}" for line in power_about(result))]
    lines += [
        "",
        "methods.md: the Methods and participants text, generated from the data.",
        "report.xlsx: every table as a sheet, with the settings and about sheets.",
    ]
    if any(f.startswith("mrmc/") for f in files):
        lines.append("mrmc/: input files for the MRMC packages; mrmc/README.txt says how.")
    return ("\n".join(lines) + "\n").encode()


def figure_failure_words(error: Exception) -> str:
    """Why a figure could not be drawn, in one line for the page and README.txt."""
    return f"could not be drawn ({type(error).__name__}: {error})"[:500]


FigureSource = Callable[[str, str], bytes]
# One file of an export: writes its bytes to a binary stream. The writers (a folder, a ZIP)
# make one file at a time, so an export is never in memory whole: ReXVQA's test split
# (40,826 questions, 11 raters) has a 32 MB responses.csv and a 17 MB report.xlsx.
FileBody = Callable[[BinaryIO], object]


def _bytes(body: bytes) -> FileBody:
    return lambda stream: stream.write(body)


def figure_files(
    result: AnalysisResult, figure: FigureSource | None = None, failed=()
) -> dict[str, FileBody]:
    """name.fmt -> body for every figure but the `failed` ones (known not to draw);
    `figure(name, fmt)` may supply cached ones.

    Without, each file is drawn afresh: a saved figure keeps a 300 dpi raster of itself (the
    PNG's canvas; the colour bar, a bitmap in SVG and PDF too), so a drawing saved in three
    formats held two (73 MB for the kappa heatmaps, against 40 MB for one format at a time);
    drawing a figure again costs a fraction of a second.
    """

    def write(stream: BinaryIO, name: str, fmt: str, build) -> None:
        if figure is not None:
            stream.write(figure(name, fmt))
            return
        stream.write(drawing().figure_bytes(build(), fmt))
        # A figure is a web of references (figure, axes, artists, canvas) that only the cycle
        # collector frees, with its raster: now, before the next is drawn, not when it runs.
        gc.collect()

    return {
        f"{name}.{fmt}": functools.partial(write, name=name, fmt=fmt, build=build)
        for name, build in figure_builders(result).items()
        if name not in failed
        for fmt in FORMATS
    }


# The power section of the exports: the page's and `mrmc_power`'s defaults.
POWER_EFFECT, POWER_TARGET = 0.05, 0.8


def package_files_of(result: AnalysisResult) -> dict[str, bytes]:
    """`design_files` and the AUC comparison's package files (`auc_files`), one
    mrmc/README.txt saying how to read every file in mrmc/."""
    files = design_files(result)
    extra, lines = auc_files(result)
    if not extra:
        return files
    readme = files.get("mrmc/README.txt", b"").decode()
    if not readme:
        readme = f"Policy: {result.settings.confidence_policy().describe()}\n"
    files |= extra
    files["mrmc/README.txt"] = (readme + "\n".join(lines) + "\n").encode()
    return files


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
    files["power.csv"] = frame_csv(table.data).encode()
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
    cube = result.design["cube"]
    c = result.design["result"].components
    alpha = result.settings.alpha
    below = c.cov2 < c.cov3
    lines += ["", *readme_lines(cube.modalities, set(packaged), cube.split_plot, below, alpha)]
    if "rjafroc_not_written.txt" in packaged:
        lines.append("rjafroc_not_written.txt: why RJafroc's file is not written for this design.")
    files["mrmc/README.txt"] = ("\n".join(lines) + "\n").encode()
    return files


def auc_files(result: AnalysisResult) -> tuple[dict[str, bytes], list[str]]:
    """A study with an aided-vs-unaided AUC comparison: its package files under mrmc/ and
    their README lines (analysis.roc_package_files); nothing otherwise."""
    compared = (result.confidence or {}).get("compared")
    if not compared:
        return {}, []
    ratings, groups = compared["ratings"], compared["groups"]
    packaged = auc_package_files(ratings, groups)
    cube = result.confidence["mrmc"].cube
    lines = auc_readme_lines(
        ratings,
        set(packaged),
        delong=compared["delong"] is not None,
        one_per_xray=cube.one_question_per_case,
        split_plot=bool(groups),
    )
    return {f"mrmc/{name}": body for name, body in packaged.items()}, lines


def power_about(result: AnalysisResult) -> list[str]:
    """What power.csv rests on (the export's default effect and power)."""
    if result.design is None:
        return []
    table = power_table(result.design, POWER_EFFECT, POWER_TARGET, result.settings.alpha)
    return table.header_lines()


def analysis_files(
    result: AnalysisResult,
    figure: FigureSource | None = None,
    info: ExportInfo | None = None,
    failed: dict[str, str] | None = None,
) -> dict[str, FileBody]:
    """Every output file by name, README.txt first, each as the function writing it.
    `failed`: figures that could not be drawn (name -> why), left out and named in README."""
    tables = all_tables(result)
    files = {"policy.json": _bytes(json.dumps(result.policy(), indent=2).encode())}
    files["methods.md"] = _bytes(methods_markdown(result).encode())
    for name, frame in tables.items():
        files[f"{name}.csv"] = functools.partial(write_table_csv, name, frame)
    files |= {name: _bytes(body) for name, body in package_files_of(result).items()}
    files |= figure_files(result, figure, failed or {})
    files["report.xlsx"] = functools.partial(_write_report, result, tables)
    readme = readme_txt(result, tables, list(files), info, failed)
    return {"README.txt": _bytes(readme), **files}


def _write_report(result: AnalysisResult, tables: dict[str, pd.DataFrame], stream) -> None:
    """report.xlsx, made in a temporary file (the workbook zips itself when it closes: a
    seekable file gives the same bytes whatever the stream is)."""
    with tempfile.TemporaryFile() as made:
        write_table_xlsx(result, tables, made)
        made.seek(0)
        shutil.copyfileobj(made, stream)


def write_files(files: dict[str, FileBody], out: Path) -> list[Path]:
    """`analysis_files` into the folder `out`, each body taken out of `files` as it is
    written, the figures last: once the tables are written nothing here holds the long
    frames (ReXVQA's test split: 52 MB of responses), and a caller that has let go of the
    result too (export_analysis) draws the figures without them."""

    def write(name: str) -> Path:
        body = files.pop(name)
        path = out / name
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("wb") as stream:
            body(stream)
        return path

    out.mkdir(parents=True, exist_ok=True)
    figures = [name for name in files if name.endswith(tuple(f".{fmt}" for fmt in FORMATS))]
    written = [write(name) for name in list(files) if name not in figures]
    gc.collect()  # what the tables' bodies held, before the figures are drawn
    failed: dict[str, str] = {}
    for name in figures:
        stem = name.rsplit(".", 1)[0]
        if stem in failed:
            files.pop(name)
            continue
        try:
            written.append(write(name))
        except Exception as error:  # one figure must not cost the others (or the tables)
            log.exception("figure %s could not be drawn", stem)
            (out / name).unlink(missing_ok=True)
            failed[stem] = figure_failure_words(error)
    if failed:  # README.txt is written first: what it could not know yet goes at its end
        with (out / "README.txt").open("a", encoding="utf-8") as readme:
            readme.write("\n".join(failed_figure_lines(failed)) + "\n")
    return written


def analysis_zip(
    result: AnalysisResult,
    figure: FigureSource | None = None,
    info: ExportInfo | None = None,
    failed: dict[str, str] | None = None,
) -> bytes:
    """The export as a ZIP, made in a temporary file one member at a time; `failed`: the
    figures that could not be drawn (left out, named in README.txt)."""
    with tempfile.TemporaryFile() as made:
        with zipfile.ZipFile(made, "w", zipfile.ZIP_DEFLATED) as archive:
            for name, body in analysis_files(result, figure, info, failed).items():
                member = zipfile.ZipInfo(name, date_time=time.localtime()[:6])
                member.external_attr = 0o600 << 16  # as ZipFile.writestr
                # PNG and XLSX are compressed already: deflating them again saves nothing.
                packed = name.endswith(ALREADY_COMPRESSED)
                member.compress_type = zipfile.ZIP_STORED if packed else zipfile.ZIP_DEFLATED
                with archive.open(member, "w") as stream:
                    body(stream)
        made.seek(0)
        return made.read()
