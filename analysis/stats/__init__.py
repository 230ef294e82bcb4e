"""Reader-study statistics: pure functions on pandas DataFrames, with no Django import.

A notebook can use them directly (`from analysis import stats`); the web pages, the API and
`export_analysis` call the same functions. `import-linter` keeps this package free of Django.
See `frame.py` for the long input format, the case (X-ray) unit and the missing-answer
policies. `stats.prepare(df)` once and pass the result to every function to skip re-checking
the frame on each call.

scipy and statsmodels are imported inside the functions that use them, and matplotlib never
(the figures drawn from these results are `analysis.plots`, the R/Java packages' input files
`analysis.package_files`): importing the package (as every web process does) costs numpy and
pandas, not the ~150 MB those bring (tests/readerstudy_tests/test_startup_imports.py). The
tables' normal, t and F functions and Wilson's interval come from scipy.special through
`distributions`, so an analysis imports neither scipy.stats nor statsmodels (~50 MB) unless a
rarer method asks for them (Clopper-Pearson, power).
"""

from analysis.stats.accuracy import accuracy_table
from analysis.stats.calibration import Binning, calibration, multiclass_brier_table
from analysis.stats.comparisons import ai_vs_readers_table, reader_panel_accuracy
from analysis.stats.confidence import accuracy_by_confidence, confidence_discrimination
from analysis.stats.flow import Flow, flow_tables
from analysis.stats.frame import (
    ALL,
    LETTERS,
    REQUIRED,
    AnalysisInputError,
    Missing,
    Prepared,
    correct_wide,
    failed_extractions,
    prepare,
    validate,
)
from analysis.stats.kappa import (
    fleiss_kappa,
    fleiss_table,
    kappa_matrices,
    kappa_matrix,
    kappa_pairs,
    panel_answers,
)
from analysis.stats.or_hillis import ORHillisResult, or_hillis, or_single
from analysis.stats.paired import (
    McNemarResult,
    mcnemar_pairs,
    mcnemar_table,
    mcnemar_test,
)
from analysis.stats.roc import auc_table, empirical_auc, roc_curves, roc_points
from analysis.stats.roc_frame import RatingsCube, ratings_cube
from analysis.stats.roc_mrmc import AucMrmc, auc_mrmc, auc_panel
from analysis.stats.roc_power import auc_pilot, auc_power, auc_sample_size_table
from analysis.stats.roc_vs_models import auc_vs_models_table, readers_vs_model
from analysis.stats.timing import accuracy_by_time, reading_time_table

__all__ = [
    "ALL",
    "LETTERS",
    "REQUIRED",
    "AnalysisInputError",
    "AucMrmc",
    "Binning",
    "Flow",
    "McNemarResult",
    "Missing",
    "ORHillisResult",
    "Prepared",
    "RatingsCube",
    "accuracy_by_confidence",
    "accuracy_by_time",
    "accuracy_table",
    "ai_vs_readers_table",
    "auc_mrmc",
    "auc_panel",
    "auc_pilot",
    "auc_power",
    "auc_sample_size_table",
    "auc_table",
    "auc_vs_models_table",
    "calibration",
    "confidence_discrimination",
    "correct_wide",
    "empirical_auc",
    "failed_extractions",
    "fleiss_kappa",
    "fleiss_table",
    "flow_tables",
    "kappa_matrices",
    "kappa_matrix",
    "kappa_pairs",
    "mcnemar_pairs",
    "mcnemar_table",
    "mcnemar_test",
    "multiclass_brier_table",
    "or_hillis",
    "or_single",
    "panel_answers",
    "prepare",
    "ratings_cube",
    "reader_panel_accuracy",
    "readers_vs_model",
    "reading_time_table",
    "roc_curves",
    "roc_points",
    "validate",
]
