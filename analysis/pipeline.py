"""The analysis pipeline of a study: one policy (`AnalysisSettings`) applied to the long
responses frame gives every table the page, the API and the exports show (`analyse`).

No Django here: a notebook can run the same pipeline on `responses.csv`.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from analysis import stats
from analysis.stats.comparisons import ai_vs_readers_table


@dataclass(frozen=True)
class AnalysisSettings:
    missing: stats.Missing = "wrong"
    scale: str = "answer"
    include_excluded: bool = False
    vrange: str = "-1,1"
    ci_method: str = "wilson"

    def describe(self) -> str:
        missing = (
            "missing answers count as wrong"
            if self.missing == "wrong"
            else "missing answers are excluded"
        )
        excluded = (
            "excluded questions included"
            if self.include_excluded
            else "excluded questions left out"
        )
        return f"{missing}; {excluded}; {self.ci_method} 95% CIs"


@dataclass
class AnalysisResult:
    settings: AnalysisSettings
    responses: pd.DataFrame
    analysed: pd.DataFrame
    accuracy: pd.DataFrame
    accuracy_by_category: pd.DataFrame
    kappas: dict[str, pd.DataFrame]
    ai_vs_readers: pd.DataFrame
    failed: pd.DataFrame

    @property
    def humans(self) -> list[str]:
        return list(
            dict.fromkeys(self.responses.loc[self.responses.rater_kind == "human", "rater"])
        )

    @property
    def models(self) -> list[str]:
        return list(
            dict.fromkeys(self.responses.loc[self.responses.rater_kind == "model", "rater"])
        )


def analyse(responses: pd.DataFrame, settings: AnalysisSettings) -> AnalysisResult:
    analysed = responses if settings.include_excluded else responses[~responses["excluded"]]
    kind = responses.drop_duplicates("rater").set_index("rater")["rater_kind"]
    if analysed.empty:
        empty = pd.DataFrame()
        return AnalysisResult(settings, responses, analysed, empty, empty, {}, empty, empty)
    prepared = stats.prepare(analysed)
    humans = [r for r in prepared.raters if kind.get(r) == "human"]
    models = [r for r in prepared.raters if kind.get(r) == "model"]
    failed = stats.failed_extractions(prepared)
    return AnalysisResult(
        settings=settings,
        responses=responses,
        analysed=analysed,
        accuracy=stats.accuracy_table(prepared, settings.missing, settings.ci_method),
        accuracy_by_category=stats.accuracy_table(
            prepared, settings.missing, settings.ci_method, by="category"
        ),
        kappas=stats.kappa_matrices(prepared, settings.scale),
        ai_vs_readers=ai_vs_readers_table(analysed, humans, models, settings.missing),
        failed=failed[failed["rater"].isin(models)].reset_index(drop=True),
    )
