"""Readers against an AI model on AUC, the model's probabilities as its ratings.

The model is one fixed rater (its AUC does not vary over readers), so the question is whether
the readers' mean AUC differs from the model's. As the accuracy comparison does
(`comparisons.ai_vs_readers_table`), each reader's difference d_j = AUC_j - AUC_model is
analysed as one modality with Obuchowski-Rockette / Hillis (Hillis 2007, section 5.3; RJafroc's
`StCadVsRad(method = "1T-RRRC")`): the covariance of the differences over X-rays is
L C L' from the covariance C of the readers' and the model's AUCs (jackknife by X-ray, DeLong
or unbiased; L subtracts the model), and

- random readers and cases: SE = sqrt(MS(R)/r + max(Cov2, 0)), Hillis df;
- fixed readers (these readers only): SE = sqrt((Var + (r - 1) max(Cov2, 0))/r), normal;
- random readers, fixed cases: the one-sample t test of the d_j ("1T-RRFC").

The comparison is on the questions the model rated; each reader's AUC is over those of them
the reader rated.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping

import numpy as np
import pandas as pd

from analysis.stats.auc_covariance import METHOD_WORDS, CovarianceMethod, auc_covariance
from analysis.stats.bounded import difference_note
from analysis.stats.comparisons import DEFAULT_MIN_READERS, few_readers_warning
from analysis.stats.frame import AnalysisInputError
from analysis.stats.or_core import SingleModality, or_single
from analysis.stats.roc_frame import ratings_cube

VS_MODEL_COLUMNS = [
    "modality",
    "model",
    "readers",
    "n_questions",
    "n_cases",
    "reader_mean",
    "model_auc",
    "difference",
    "se",
    "df",
    "ci_low",
    "ci_high",
    "p_value",
    "ms_r",
    "var",
    "cov2",
    "se_fixed",
    "ci_low_fixed",
    "ci_high_fixed",
    "p_fixed",
    "note",
    "warning",
]


def _readers_and_model(ratings: pd.DataFrame, model: pd.DataFrame, name: str) -> pd.DataFrame:
    for column in ("question_id", "rating"):
        if column not in model.columns:
            raise AnalysisInputError(f"the model's ratings need a {column} column")
    if model["question_id"].duplicated().any():
        raise AnalysisInputError(f"the model {name} has more than one rating for a question")
    if name in set(ratings["reader"].astype(str)):
        raise AnalysisInputError(f"the model's name {name!r} is also a reader's")
    if "question_id" not in ratings.columns:
        ratings = ratings.assign(question_id=ratings["case_id"])
    rated = ratings[ratings["question_id"].isin(model["question_id"])]
    questions = rated.drop_duplicates("question_id")[["question_id", "case_id", "truth"]]
    model_rows = questions.merge(model[["question_id", "rating"]], on="question_id")
    combined = pd.concat([rated, model_rows.assign(reader=name)], ignore_index=True).assign(
        modality="all"
    )
    return combined[["reader", "modality", "case_id", "question_id", "truth", "rating"]]


def readers_vs_model(
    ratings: pd.DataFrame,
    model: pd.DataFrame,
    *,
    name: str = "model",
    cov: CovarianceMethod = "jackknife",
    alpha: float = 0.05,
    reader_groups: Mapping[str, Hashable] | None = None,
) -> tuple[SingleModality, dict]:
    """Readers' mean AUC minus the model's (module docstring).

    ratings: one modality's long ratings (reader, case_id, question_id, truth, rating);
    model: the model's question_id and rating (its probability). `reader_groups` (reader ->
    group): a split-plot study, its readers' differences analysed by group as the accuracy
    analysis does (MS(R) within groups, Cov2 over same-group pairs; readers of different groups
    must share no X-ray). Returns the single-modality analysis of the differences and the
    counts it rests on (readers, questions, X-rays, the readers' mean AUC and the model's).
    """
    if "modality" in ratings.columns and ratings["modality"].nunique() > 1:
        raise AnalysisInputError("compare the readers with a model one modality at a time")
    combined = _readers_and_model(ratings.drop(columns="modality", errors="ignore"), model, name)
    if combined.empty or (combined["reader"] == name).sum() == 0:
        raise AnalysisInputError(f"the model {name} rated none of the readers' questions")
    cube = ratings_cube(combined)
    fom, covariance = auc_covariance(cube, cov)
    readers = [i for i, reader in enumerate(cube.readers) if reader != name]
    if len(readers) < 2:
        raise AnalysisInputError("the comparison needs at least two readers")
    m = cube.readers.index(name)
    contrast = np.zeros((len(readers), len(cube.readers)))
    contrast[np.arange(len(readers)), readers] = 1.0
    contrast[:, m] = -1.0
    differences = fom[0, readers] - fom[0, m]
    groups = None
    if reader_groups is not None:
        missing = [cube.readers[i] for i in readers if cube.readers[i] not in reader_groups]
        if missing:
            raise AnalysisInputError(f"no split-plot group for reader(s) {missing}")
        labels = [str(reader_groups[cube.readers[i]]) for i in readers]
        groups = np.unique(labels, return_inverse=True)[1]
    result = or_single(
        differences,
        contrast @ covariance @ contrast.T,
        alpha=alpha,
        design=cube.design,
        groups=groups,
        label=f"readers − {name}",
        null=0.0,
    )
    counts = {
        "readers": len(readers),
        "n_questions": len(cube.question_ids),
        "n_cases": len(cube.case_ids),
        "reader_mean": float(fom[0, readers].mean()),
        "model_auc": float(fom[0, m]),
        "reader_aucs": dict(zip([cube.readers[i] for i in readers], fom[0, readers], strict=True)),
    }
    return result, counts


def method(cov: CovarianceMethod) -> str:
    """What every readers-vs-model output says of its method."""
    return (
        "readers' mean empirical AUC minus the model's: Obuchowski-Rockette / Hillis on the "
        "readers' differences from the model (Hillis 2007, section 5.3; RJafroc StCadVsRad "
        f"1T-RRRC), covariance: {METHOD_WORDS[cov]}; fixed readers: normal reference; the "
        "model is fixed, its probabilities its ratings"
    )


def auc_vs_models_table(
    ratings: pd.DataFrame,
    models: pd.DataFrame,
    *,
    cov: CovarianceMethod = "jackknife",
    alpha: float = 0.05,
    min_readers: int = DEFAULT_MIN_READERS,
    reader_groups: Mapping[str, Hashable] | None = None,
) -> pd.DataFrame:
    """Per modality and model: the readers' mean AUC, the model's, the difference (readers -
    model) with its random-readers CI and p (Hillis), the variance components and the
    fixed-readers CI and p; `warning` with fewer than `min_readers` readers.

    ratings: the long ratings frame (reader, modality, case_id, question_id, truth, rating);
    models: model, question_id, rating (the model's probability that the finding is present).
    `reader_groups`: a split-plot study's groups (`readers_vs_model`).
    """
    if "modality" not in ratings.columns:
        ratings = ratings.assign(modality="all")
    rows = []
    for modality, part in ratings.groupby("modality", sort=True):
        for name, predictions in models.groupby("model", sort=True):
            result, counts = readers_vs_model(
                part,
                predictions,
                name=str(name),
                cov=cov,
                alpha=alpha,
                reader_groups=reader_groups,
            )
            random, fixed = result.random, result.fixed_readers
            note = (
                difference_note(random.ci_low, random.ci_high)
                if np.isfinite(random.se) and random.se > 0
                else ("not estimable: the differences vary neither over readers nor X-rays")
            )
            fixed_note = difference_note(fixed.ci_low, fixed.ci_high)
            if fixed_note:
                note = "; ".join(part for part in (note, f"fixed readers: {fixed_note}") if part)
            rows.append(
                {
                    "modality": modality,
                    "model": name,
                    **{k: v for k, v in counts.items() if k != "reader_aucs"},
                    "difference": result.estimate,
                    "se": random.se,
                    "df": random.df,
                    "ci_low": random.ci_low,
                    "ci_high": random.ci_high,
                    "p_value": random.p_value,
                    "ms_r": result.ms_r,
                    "var": result.var,
                    "cov2": result.cov2,
                    "se_fixed": fixed.se,
                    "ci_low_fixed": fixed.ci_low,
                    "ci_high_fixed": fixed.ci_high,
                    "p_fixed": fixed.p_value,
                    "note": note,
                    "warning": few_readers_warning(counts["readers"], min_readers),
                }
            )
    return pd.DataFrame(rows, columns=VS_MODEL_COLUMNS)
