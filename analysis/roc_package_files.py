"""The AUC comparison as input files for the MRMC packages, with README lines whose R commands
print the page's numbers (tests/design_tests/test_roracle_auc.py runs them).

The files hold exactly the ratings the page's aided-vs-unaided AUC analysis reads
(`confidence_analysis.comparison_ratings`: readers who rated in both arms, anchor X-rays of a
split-plot study left out), with neutral codes for readers (R01), X-rays (X0001) and questions
(Q00001) and the modalities named as the accuracy files name them (test first, so every
package prints the page's aided − unaided with its sign: `package_names`).

- MRMCaov (`mrmcaov_auc.csv`): its long format (reader, treatment, case = X-ray, question,
  truth, rating), so its jackknife leaves out whole X-rays as the page's does:
  `mrmc(empirical_auc(truth, rating), treatment, reader, case, data = d)` prints the page's
  jackknife rows; with `cov = DeLong` (one question per X-ray, fully paired) its DeLong rows.
- iMRMC (`imrmc_auc.imrmc`): one score per reader, case and modality with a truth row per
  case, the case being the binary question (iMRMC has no X-ray of several questions).
- RJafroc (`rjafroc_auc.xlsx`): its ROC Excel format (TRUTH, FP = ratings of the negatives,
  TP = ratings of the positives; factorial "FCTRL"), the case being the question; written only
  when every reader rated every question in both arms (RJafroc reads no missing rating).

iMRMC's and RJafroc's analyses equal the page's when every X-ray holds one binary question:
otherwise their jackknife leaves out a question, not an X-ray; the README says which.
"""

from __future__ import annotations

import io

import pandas as pd

from analysis.package_files import R_BLOCK, _codes, package_names
from analysis.stats import SECOND_READ, Modalities


def _readings(ratings: pd.DataFrame) -> tuple[Modalities, dict[str, str], str]:
    """The two readings compared as the accuracy files name them (their Modalities), each
    arm's name in the files, and the page's comparison in words (test − reference). A second
    read's are "first" and "final" (RJafroc reads no space in a modality's name)."""
    from analysis.confidence_analysis import ARMS, FIRST_READ

    present = set(ratings["modality"])
    reference, test = [a for a in ARMS if a in present]
    if reference == FIRST_READ:
        modalities, arm_names = SECOND_READ, {FIRST_READ: "first", test: "final"}
    else:
        modalities = Modalities((reference, test), (reference, test), "")
        arm_names = {reference: reference, test: test}
    named = dict(zip(modalities.names[::-1], package_names(modalities), strict=True))
    return (
        modalities,
        {arm: named[name] for arm, name in arm_names.items()},
        f"{test} − {reference}",
    )


def _coded(ratings: pd.DataFrame, groups: dict) -> pd.DataFrame:
    codes = _codes(ratings)
    _, names, _ = _readings(ratings)
    return ratings.assign(
        group=ratings["reader"].map(lambda r: str(groups.get(str(r), ""))),
        treatment=ratings["modality"].map(names),
        **{column: ratings[column].map(mapping) for column, mapping in codes.items()},
    )


def to_mrmcaov_auc(ratings: pd.DataFrame, groups: dict) -> str:
    rows = _coded(ratings, groups)
    out = pd.DataFrame(
        {
            "reader": rows["reader"],
            "treatment": rows["treatment"],
            "case": rows["case_id"],
            "question": rows["question_id"],
            "truth": rows["truth"].astype(int),
            "rating": rows["rating"].astype(float),
        }
    ).sort_values(["treatment", "reader", "case", "question"])
    if groups:
        out["group"] = rows["group"].reindex(out.index)
    return out.to_csv(index=False, lineterminator="\n", float_format="%.17g")


def to_imrmc_auc(ratings: pd.DataFrame, groups: dict) -> str:
    rows = _coded(ratings, groups)
    test, reference = package_names(_readings(ratings)[0])
    questions = rows.drop_duplicates("question_id").sort_values("question_id")
    lines = [
        "ReaderStudy export for iMRMC: the ratings of the binary questions (score = rating, "
        "higher = more sure the finding is present); case = binary question; truth 1 = the "
        "finding present.",
        f"Modalities compared: {test} - {reference}.",
        f"NR: {rows['reader'].nunique()}",
        f"N0: {int((questions['truth'] == 0).sum())}",
        f"N1: {int((questions['truth'] == 1).sum())}",
        "NM: 2",
        "BEGIN DATA:",
    ]
    pairs = zip(questions["question_id"], questions["truth"], strict=True)
    lines += [f"-1,{q},0,{int(t)}" for q, t in pairs]
    ordered = rows.sort_values(["reader", "question_id", "treatment"])
    lines += [
        f"{r},{q},{m},{v:.17g}"
        for r, q, m, v in zip(
            ordered["reader"],
            ordered["question_id"],
            ordered["treatment"],
            ordered["rating"],
            strict=True,
        )
    ]
    return "\n".join(lines) + "\n"


def to_rjafroc_auc(ratings: pd.DataFrame, groups: dict) -> bytes | None:
    """RJafroc's ROC Excel bytes; None when a reader left a question unrated in an arm or the
    study is split-plot (RJafroc reads neither)."""
    from openpyxl import Workbook

    rows = _coded(ratings, groups)
    cells = rows.groupby(["reader", "treatment"])["question_id"].nunique()
    if groups or not (cells == rows["question_id"].nunique()).all():
        return None
    order = package_names(_readings(ratings)[0])
    readers = sorted(pd.unique(rows["reader"]))
    questions = rows.drop_duplicates("question_id").sort_values(["truth", "question_id"])
    number = {q: i + 1 for i, q in enumerate(questions["question_id"])}
    book = Workbook()
    truth = book.active
    truth.title = "TRUTH"
    truth.append(["CaseID", "LesionID", "Weight", "ReaderID", "ModalityID", "Paradigm"])
    for i, (q, t) in enumerate(zip(questions["question_id"], questions["truth"], strict=True)):
        paradigm = {0: "ROC", 1: "FCTRL"}.get(i)
        truth.append([number[q], int(t), float(t), ",".join(readers), ",".join(order), paradigm])
    rating = rows.set_index(["reader", "treatment", "question_id"])["rating"]
    negatives = questions[questions["truth"] == 0]["question_id"]
    positives = questions[questions["truth"] == 1]["question_id"]
    fp = book.create_sheet("FP")
    fp.append(["ReaderID", "ModalityID", "CaseID", "FP_Rating"])
    tp = book.create_sheet("TP")
    tp.append(["ReaderID", "ModalityID", "CaseID", "LesionID", "TP_Rating"])
    for modality in order:
        for reader in readers:
            for q in negatives:
                fp.append([reader, modality, number[q], float(rating[(reader, modality, q)])])
            for q in positives:
                tp.append([reader, modality, number[q], 1, float(rating[(reader, modality, q)])])
    key = book.create_sheet("X-questions")  # sorts after TRUTH (RJafroc checks): ignored
    key.append(["CaseID", "question"])
    for q in questions["question_id"]:
        key.append([number[q], q])
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()


def auc_id_map(ratings: pd.DataFrame) -> pd.DataFrame:
    """code -> id of the AUC files (kind, code, id): their own codes, made from the binary
    questions' ratings (the accuracy files' id_map.csv may code a reader differently)."""
    kinds = {"reader": "reader", "case_id": "X-ray", "question_id": "question"}
    return pd.DataFrame(
        [
            {"kind": kinds[column], "code": code, "id": str(value)}
            for column, mapping in _codes(ratings).items()
            for value, code in mapping.items()
        ]
    )


def auc_package_files(ratings: pd.DataFrame, groups: dict) -> dict[str, bytes]:
    """The AUC files by name (RJafroc's replaced by a note where it cannot read the study)."""
    from readerstudy.platform.spreadsheets import frame_csv

    files = {
        "mrmcaov_auc.csv": to_mrmcaov_auc(ratings, groups).encode(),
        "imrmc_auc.imrmc": to_imrmc_auc(ratings, groups).encode(),
        "id_map_auc.csv": frame_csv(auc_id_map(ratings)).encode(),
    }
    rjafroc = to_rjafroc_auc(ratings, groups)
    if rjafroc is not None:
        files["rjafroc_auc.xlsx"] = rjafroc
    return files


def _recipe(lines: list[str]) -> list[str]:
    return [f"  {R_BLOCK}", *(f"    {line}" for line in lines)]


def auc_readme_lines(
    ratings: pd.DataFrame,
    files: set[str],
    *,
    delong: bool,
    one_per_xray: bool,
    split_plot: bool,
) -> list[str]:
    """mrmc/README.txt's part on the AUC files: what each holds and the R commands that print
    the page's auc_difference rows, with its sign."""
    modalities, _, comparison = _readings(ratings)
    test, reference = package_names(modalities)
    lines = [
        "",
        "The AUC files (the ratings of the binary questions; the page's auc_difference table): "
        f"the packages print {test} - {reference}, the page's {comparison} with its sign. "
        "id_map_auc.csv is their key (their own codes).",
        "",
        "mrmcaov_auc.csv: MRMCaov long format (reader, treatment, case = X-ray, question, truth "
        "= 1 when the finding is present, rating = the reader's rating, higher = more sure it "
        "is present). MRMCaov's jackknife leaves out whole X-rays, as the page's.",
    ]
    mrmcaov = [
        "library(MRMCaov)",
        'd <- read.csv("mrmcaov_auc.csv")',
        "random_readers <- mrmc(empirical_auc(truth, rating), treatment, reader, case, data = d)",
        "print(summary(random_readers))",
        "fixed_readers <- mrmc(empirical_auc(truth, rating), treatment, fixed(reader), case, "
        "data = d)",
        "print(summary(fixed_readers))",
    ]
    if delong:
        mrmcaov += [
            "delong <- mrmc(empirical_auc(truth, rating), treatment, reader, case, data = d, "
            "cov = DeLong)",
            "print(summary(delong))",
        ]
    if split_plot:
        lines.append(
            "  Split-plot study (readers and X-rays in groups; `group` column): MRMCaov 0.3.0 "
            "has no split-plot design and analyses the file as partially paired: its AUCs and "
            "its difference are the page's, its standard error, df, CI and p are NOT."
        )
    else:
        lines.append(
            "  MRMCaov 0.3.0 prints the page's jackknife rows (random readers; with "
            "fixed(reader), fixed readers)"
            + ("; with cov = DeLong, its DeLong rows." if delong else ".")
        )
    lines += _recipe(mrmcaov)
    clustered = (
        ""
        if one_per_xray
        else " Here X-rays hold several binary questions: its jackknife leaves out one "
        "question, not an X-ray, so its SE, df, CI and p are not the page's (its AUCs and "
        "difference are)."
    )
    lines += [
        "",
        "imrmc_auc.imrmc: iMRMC input (truth rows '-1,case,0,truth', then "
        "reader,case,modality,rating; case = binary question). iMRMC is not installed here: "
        f"no test runs it. Compare {test!r} with {reference!r}.{clustered}",
    ]
    if "rjafroc_auc.xlsx" in files:
        lines += [
            "",
            "rjafroc_auc.xlsx: RJafroc ROC Excel (TRUTH, FP = ratings of the negatives, TP = of "
            "the positives; case = binary question). RJafroc 2.1.3 prints "
            f"'trt{test}-trt{reference}': RRRC is the page's random-readers jackknife row, "
            f"FRRC its fixed-readers row.{clustered}",
            *_recipe(
                [
                    'ds <- RJafroc::DfReadDataFile("rjafroc_auc.xlsx", newExcelFileFormat = TRUE)',
                    'random_readers <- RJafroc::St(ds, FOM = "Wilcoxon", method = "OR", '
                    'analysisOption = "RRRC")',
                    "print(random_readers)",
                    'fixed_readers <- RJafroc::St(ds, FOM = "Wilcoxon", method = "OR", '
                    'analysisOption = "FRRC")',
                    "print(fixed_readers$FRRC)",
                ]
            ),
        ]
    else:
        lines += [
            "",
            "No rjafroc_auc.xlsx: RJafroc reads a factorial study in which every reader rated "
            "every binary question in both arms; this one is not.",
        ]
    return lines
