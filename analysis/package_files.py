"""The study's comparison as input files for the R/Java MRMC packages, and readers for them.

Readers, X-rays and questions appear as neutral codes (R01, X0001, Q00001; `id_map` gives the
key), so no name with a comma or a formula-like start reaches a package's parser or a
spreadsheet. Each file holds exactly the rows our own analysis uses
(`design_frame.comparison_rows`: the complete, paired questions, anchors aside, the
missing-answer policy applied), with the X-ray as the case, so the package's analysis and ours
rest on the same data. The tests read every file back into the cube `or_design` reads
(tests/analysis_tests/package_readers.py) and get the same result.

The two modalities are named so that the test one sorts first (`package_names`): MRMCaov and
RJafroc sort the names they read (RJafroc reads a file's modality list in that order, whatever
order the file gives) and print the first minus the second, so each prints the page's
difference, test - reference, with its sign.

- MRMCaov (`mrmcaov.csv`): its long format (the layout of its VanDyke data: reader,
  treatment, case, truth, rating), one row per question read: case = X-ray, rating = 1 if
  correct else 0, truth = 1, plus a `question` column (and `group` in a split-plot study).
  MRMCaov has no percent-correct metric but accepts a user-defined one (the mean rating); its
  jackknife leaves out every row of a case (the X-ray).
- iMRMC (`imrmc.imrmc`): its documented input (free text, "BEGIN DATA:", then rows
  readerID,caseID,modalityID,score with a "truth" row per case). One score per reader, X-ray
  and modality is all iMRMC accepts, so the score is the proportion of the X-ray's questions
  answered correctly: iMRMC's mean is then the X-ray-averaged accuracy, equal to ours only
  when every X-ray has the same number of questions (the file's header says which). iMRMC is
  not installed here: only the tests' reader reads it back.
- RJafroc (`rjafroc.xlsx`): its JAFROC Excel format (sheets TRUTH, FP, TP; FROC paradigm,
  factorial "FCTRL" design). RJafroc has no percent-correct figure of merit for ROC data;
  with each X-ray a case and each question a "lesion" marked (rating 2) when answered
  correctly, plus one rating-1 FP (NL) mark per X-ray as a floor, its AFROC1 FOM equals the
  proportion correct and its jackknife leaves out whole X-rays. RJafroc withdrew its
  split-plot analysis, so no file is written for split-plot studies.

`readme_lines` gives mrmc/README.txt's R commands per file; the `roracle` tests run exactly
those lines with MRMCaov 0.3.0 and RJafroc 2.1.3 and compare every number with the page.
Split-plot studies: MRMCaov has no such design (it would analyse the file as partially
paired); the README says so and gives lines that run MRMCaov per group and combine its
components as `or_design` does.
"""

from __future__ import annotations

import io

import pandas as pd

from analysis.stats import AnalysisInputError, Missing, Modalities, comparison_rows


def package_names(modalities: Modalities) -> tuple[str, str]:
    """The two modalities as the package files name them, test first.

    MRMCaov and RJafroc sort the modality names they read and print the first minus the
    second (RJafroc reads a file's modality list in that sorted order whatever order the file
    gives: a list "unaided,aided" came out as aided - unaided = -0.0857 where aided was
    better by 0.0857). Named so that they sort test first, every package prints the page's
    difference, test - reference, with its sign: the names themselves when they already sort
    so (aided < unaided, final < first), else numbered."""
    reference, test = modalities.names
    if str(test) < str(reference):
        return str(test), str(reference)
    return f"1-{test}", f"2-{reference}"


def _codes(rows: pd.DataFrame) -> dict[str, dict]:
    """Neutral codes for readers (R01...), X-rays (X0001...) and questions (Q00001...), in
    sorted order. The package files carry only codes: reader names and imported ids may hold
    commas (iMRMC's and RJafroc's lists split on them) or start like a spreadsheet formula,
    and the files need not name the readers. `id_map` gives the key."""
    out = {}
    for column, prefix in (("reader", "R"), ("case_id", "X"), ("question_id", "Q")):
        values = sorted(pd.unique(rows[column]), key=str)
        width = max(2, len(str(len(values))))
        out[column] = {v: f"{prefix}{i + 1:0{width}d}" for i, v in enumerate(values)}
    return out


def _rows(frame: pd.DataFrame, missing: Missing) -> tuple[Modalities, pd.DataFrame]:
    """The counted comparison rows with reader, X-ray and question ids replaced by codes."""
    modalities, rows, _, _ = comparison_rows(frame, missing)
    rows = rows[rows["counted"].astype(bool)]
    codes = _codes(rows)
    return modalities, rows.assign(**{c: rows[c].map(m) for c, m in codes.items()})


def id_map(frame: pd.DataFrame, missing: Missing = "wrong") -> pd.DataFrame:
    """code -> id for the readers, X-rays and questions of the package files (kind, code, id).
    Write it with `readerstudy.platform.spreadsheets.frame_csv`: ids come from users and imports."""
    _, rows, _, _ = comparison_rows(frame, missing)
    rows = rows[rows["counted"].astype(bool)]
    kinds = {"reader": "reader", "case_id": "X-ray", "question_id": "question"}
    return pd.DataFrame(
        [
            {"kind": kinds[column], "code": code, "id": str(value)}
            for column, mapping in _codes(rows).items()
            for value, code in mapping.items()
        ]
    )


# MRMCaov ----------------------------------------------------------------------------------


def to_mrmcaov(frame: pd.DataFrame, missing: Missing = "wrong") -> str:
    modalities, rows = _rows(frame, missing)
    names = dict(zip(modalities.names[::-1], package_names(modalities), strict=True))
    out = pd.DataFrame(
        {
            "reader": rows["reader"],
            "treatment": rows["modality"].map(names),
            "case": rows["case_id"],
            "question": rows["question_id"],
            "truth": 1,
            "rating": rows["right"].astype(int),
        }
    ).sort_values(["treatment", "reader", "case", "question"], key=lambda s: s.astype(str))
    if (rows["reader_group"] != "").any():  # split-plot: the README's recipe analyses by group
        out["group"] = rows["reader_group"].reindex(out.index)
    return out.to_csv(index=False, lineterminator="\n")


# iMRMC ------------------------------------------------------------------------------------


def to_imrmc(frame: pd.DataFrame, missing: Missing = "wrong") -> str:
    modalities, rows = _rows(frame, missing)
    test, reference = package_names(modalities)
    names = dict(zip(modalities.names[::-1], (test, reference), strict=True))
    rows = rows.assign(modality=rows["modality"].map(names))
    cells = rows.groupby(["reader", "modality", "case_id"]).agg(
        right=("right", "sum"), counted=("counted", "size")
    )
    per_cell = cells["counted"]
    equal = per_cell.nunique() == 1
    cases = sorted(pd.unique(rows["case_id"]), key=str)
    lines = [
        "ReaderStudy export for iMRMC: score = proportion of the X-ray's questions answered "
        "correctly; truth = 1 for every X-ray (accuracy, not ROC).",
        f"Modalities compared: {test} - {reference}.",
        (
            f"Every X-ray has {int(per_cell.iloc[0])} question(s) counted for every reader and "
            "modality: the mean score equals the per-question accuracy."
            if equal
            else "X-rays have different numbers of questions counted: the mean score is the "
            "X-ray-averaged accuracy, not the per-question accuracy of the other files."
        ),
        f"NR: {rows['reader'].nunique()}",
        "N0: 0",
        f"N1: {len(cases)}",
        "NM: 2",
        "BEGIN DATA:",
    ]
    lines += [f"truth,{case},truth,1" for case in cases]
    for (reader, modality, case), row in cells.iterrows():
        lines.append(f"{reader},{case},{modality},{row['right'] / row['counted']:.17g}")
    return "\n".join(lines) + "\n"


# RJafroc ----------------------------------------------------------------------------------


def to_rjafroc(frame: pd.DataFrame, missing: Missing = "wrong") -> bytes:
    """JAFROC Excel bytes; refuses split-plot studies (RJafroc no longer analyses them)."""
    from openpyxl import Workbook

    modalities, rows = _rows(frame, missing)
    if (rows["case_group"] != "").any():
        raise AnalysisInputError("RJafroc has no split-plot analysis; no RJafroc file is written")
    if (
        missing == "exclude"
        and not rows.groupby("question_id")["reader"]
        .size()
        .eq(rows.groupby("question_id")["reader"].size().max())
        .all()
    ):
        raise AnalysisInputError(
            "RJafroc needs every reader to be scored on the same lesions: use missing='wrong'"
        )
    cases = sorted(pd.unique(rows["case_id"]), key=str)
    case_number = {c: i + 1 for i, c in enumerate(cases)}
    questions = rows.drop_duplicates("question_id")[["question_id", "case_id"]]
    questions = questions.sort_values(["case_id", "question_id"], key=lambda s: s.astype(str))
    lesion = questions.groupby("case_id").cumcount() + 1
    lesion_of = dict(zip(questions["question_id"], lesion, strict=True))
    readers = sorted(pd.unique(rows["reader"]))
    book = Workbook()
    truth = book.active
    truth.title = "TRUTH"
    truth.append(["CaseID", "LesionID", "Weight", "ReaderID", "ModalityID", "Paradigm"])
    reader_list = ",".join(readers)
    # Test first, in the order RJafroc sorts them (package_names): its "trt<test>-trt<reference>"
    # is then the page's difference with its sign.
    order = package_names(modalities)
    names = dict(zip(modalities.names[::-1], order, strict=True))
    rows = rows.assign(modality=rows["modality"].map(names))
    modality_list = ",".join(order)
    for i, (question, case) in enumerate(
        zip(questions["question_id"], questions["case_id"], strict=True)
    ):
        paradigm = {0: "FROC", 1: "FCTRL"}.get(i)
        truth.append(
            [case_number[case], lesion_of[question], 0, reader_list, modality_list, paradigm]
        )
    # RJafroc's reader checks the sorted sheet names for FP/TP (NL/LL sort before TRUTH in the
    # wrong order), so the FROC sheets carry their older names.
    nl = book.create_sheet("FP")
    nl.append(["ReaderID", "ModalityID", "CaseID", "FP_Rating"])
    for modality in order:
        for reader in readers:
            for case in cases:
                nl.append([reader, modality, case_number[case], 1])
    ll = book.create_sheet("TP")
    ll.append(["ReaderID", "ModalityID", "CaseID", "LesionID", "TP_Rating"])
    marked = rows[rows["right"].astype(bool)]
    marked = marked.assign(arm=marked["modality"].map(order.index))
    for row in marked.sort_values(["arm", "reader", "case_id"]).itertuples():
        ll.append(
            [row.reader, row.modality, case_number[row.case_id], lesion_of[row.question_id], 2]
        )
    names = book.create_sheet("X-rays")  # sorts after TRUTH; RJafroc ignores it
    names.append(["CaseID", "case_id"])
    for case in cases:
        names.append([case_number[case], str(case)])
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()


def package_files(frame: pd.DataFrame, missing: Missing = "wrong") -> dict[str, bytes]:
    """The three files for the ZIP/API, by name (RJafroc's left out, with a note file, for a
    split-plot study)."""
    files = {
        "mrmcaov.csv": to_mrmcaov(frame, missing).encode(),
        "imrmc.imrmc": to_imrmc(frame, missing).encode(),
    }
    try:
        files["rjafroc.xlsx"] = to_rjafroc(frame, missing)
    except AnalysisInputError as error:
        files["rjafroc_not_written.txt"] = (str(error) + "\n").encode()
    return files


def _split_plot_recipe(alpha: float) -> list[str]:
    """R lines combining MRMCaov's per-group OR components as `or_design` does for a split-plot
    design; they leave a data frame `split_plot` with the page's two rows."""
    return [
        "per_group <- NULL",
        "for (g in split(d, d$group)) {",
        "  s <- summary(mrmc(accuracy(truth, rating), treatment, reader, case, data = g))",
        "  v <- setNames(s$vcov_comps$Estimate, rownames(s$vcov_comps))",
        "  per_group <- rbind(per_group, data.frame(r = length(unique(g$reader)),",
        "    var = v[['Error']], cov1 = v[['Cov1']], cov2 = v[['Cov2']], cov3 = v[['Cov3']],",
        "    ms_tr = s$test_equality[['MS(T:R)']]))",
        "}",
        "pooled <- function(x, w) sum(x * w) / sum(w)",
        "p <- per_group; pairs <- p$r * (p$r - 1)",
        "var <- pooled(p$var, p$r); cov1 <- pooled(p$cov1, p$r)",
        "cov2 <- pooled(p$cov2, pairs); cov3 <- pooled(p$cov3, pairs)",
        "ms_tr <- pooled(p$ms_tr, p$r - 1); df_tr <- sum(p$r - 1)",
        "r <- sum(p$r); r_tilde <- sum(p$r^2) / r",
        "foms <- tapply(d$rating, list(d$treatment, d$reader), mean)",
        "m <- rowMeans(foms); estimate <- m[[1]] - m[[2]]",
        "den <- ms_tr + r_tilde * max(cov2 - cov3, 0)",
        "fixed_den <- var - cov1 + (r_tilde - 1) * (cov2 - cov3)",
        "se <- sqrt(2 / r * c(den, fixed_den)); df <- c(den^2 / (ms_tr^2 / df_tr), Inf)",
        f"q <- ifelse(is.finite(df), qt(1 - {alpha:g} / 2, df), qnorm(1 - {alpha:g} / 2))",
        "split_plot <- data.frame(",
        "  analysis = c('random readers', 'fixed readers'),",
        "  comparison = paste(names(m), collapse = ' - '), estimate = estimate, se = se, df = df,",
        "  ci_low = estimate - q * se, ci_high = estimate + q * se,",
        "  p_value = ifelse(is.finite(df), 2 * pt(-abs(estimate / se), df),",
        "                   2 * pnorm(-abs(estimate / se))))",
        "print(split_plot)",
    ]


# README ------------------------------------------------------------------------------------

R_BLOCK = "In R (in this folder, R_LIBS holding the package):"


def _recipe(lines: list[str]) -> list[str]:
    """An R program as README lines: the `R_BLOCK` line, then the commands indented by four
    spaces (the tests run exactly these lines)."""
    return [f"  {R_BLOCK}", *(f"    {line}" for line in lines)]


def readme_lines(
    modalities: Modalities,
    files: set[str],
    split_plot: bool,
    cov2_below_cov3: bool = False,
    alpha: float = 0.05,
) -> list[str]:
    """mrmc/README.txt's part on the package files: per file, what it holds and the R
    commands that print the page's numbers, with the page's sign (or, where no package
    command gives the page's numbers, why not, in words)."""
    test, reference = package_names(modalities)
    lines = [
        f"Every file names the two modalities {test!r} and {reference!r}: the packages sort "
        f"them and print the first minus the second, {test} - {reference}, which is the page's "
        f"{modalities.comparison} with its sign.",
        "",
        "mrmcaov.csv: MRMCaov long format (reader, treatment, case = X-ray, question, truth = "
        "1, rating = 1 correct / 0 wrong; MRMCaov's percent-correct metric is the mean rating, "
        "its jackknife leaves out whole X-rays).",
    ]
    mrmcaov = [
        "library(MRMCaov)",
        'd <- read.csv("mrmcaov.csv")',
        "accuracy <- function(truth, rating) mean(rating)",
    ]
    if split_plot:
        lines += [
            "  Split-plot study (readers and X-rays in groups; `group` column): MRMCaov 0.3.0 has "
            "no split-plot design. Its own command on the whole file analyses a 'partially "
            "paired' design, whose standard error, df, CI and p are NOT the page's, and no "
            "command of MRMCaov or RJafroc gives the page's split-plot analysis. The lines "
            "below run MRMCaov in each group and combine its components as the page does "
            "(Obuchowski, Gallas & Hillis 2012: MS(T×R) pooled within groups, Cov2/Cov3 over "
            "readers of the same group, r~ = sum(r_g^2) / r); they print the page's two rows.",
            *_recipe([*mrmcaov, *_split_plot_recipe(alpha)]),
        ]
    else:
        lines += [
            f"  MRMCaov 0.3.0 prints the page's random-readers row as its comparison "
            f"'{test} - {reference}' (Estimate, StdErr, df, CI, t, p-value), its F test and "
            "variance components; with fixed(reader), the fixed-readers row (z, X2).",
            *_recipe(
                [
                    *mrmcaov,
                    "random_readers <- mrmc(accuracy(truth, rating), treatment, reader, case, "
                    "data = d)",
                    "print(summary(random_readers))",
                    "fixed_readers <- mrmc(accuracy(truth, rating), treatment, fixed(reader), "
                    "case, data = d)",
                    "print(summary(fixed_readers))",
                ]
            ),
        ]
    lines += [
        "",
        "imrmc.imrmc: iMRMC input (readerID,caseID,modalityID,score after 'BEGIN DATA:'; score "
        "= proportion of the X-ray's questions correct). It is read by iMRMC (the FDA's Java "
        "program, or its R package iMRMC), which this project does not install: no test here "
        "runs iMRMC on it. In iMRMC compare modalities "
        f"{test!r} and {reference!r} in that order for {test} - {reference}"
        + (" (split-plot: not the page's analysis, as above)." if split_plot else "."),
    ]
    if "rjafroc.xlsx" in files:
        lines += [
            "",
            "rjafroc.xlsx: RJafroc JAFROC Excel (TRUTH/FP/TP, X-ray = case, question = lesion "
            "marked when correct; its AFROC1 figure of merit is then the proportion correct).",
            f"  RJafroc 2.1.3 prints the page's difference as 'trt{test}-trt{reference}': RRRC "
            '(analysisOption "RRRC") is the random-readers row, FRRC the fixed-readers row '
            "(its Chisq is the page's X2); ANOVA$TRanova holds MS(T), MS(R), MS(T×R).",
            *_recipe(
                [
                    'ds <- RJafroc::DfReadDataFile("rjafroc.xlsx", newExcelFileFormat = TRUE)',
                    'random_readers <- RJafroc::St(ds, FOM = "AFROC1", method = "OR", '
                    'analysisOption = "RRRC")',
                    "print(random_readers)",
                    'fixed_readers <- RJafroc::St(ds, FOM = "AFROC1", method = "OR", '
                    'analysisOption = "FRRC")',
                    "print(fixed_readers$FRRC)",
                ]
            ),
        ]
        if cov2_below_cov3:
            lines.append(
                "  Here Cov2 < Cov3: RJafroc replaces Cov2 - Cov3 by 0 in its fixed-readers "
                "(FRRC) analysis and in VarTR and VarR, so those differ from the page's, which "
                "are MRMCaov's (Cov2 - Cov3 as estimated). Its RRRC row is the page's."
            )
    return lines
