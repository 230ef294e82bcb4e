"""Reader-study statistics: pure functions on pandas DataFrames, with no Django import.

A notebook can use them directly (`from analysis import stats`); the web pages, the API and
`export_analysis` call the same functions. `import-linter` keeps this package free of Django.
See `frame.py` for the long input format, the case (X-ray) unit and the missing-answer
policies. `stats.prepare(df)` once and pass the result to every function to skip re-checking
the frame on each call.

scipy, statsmodels and openpyxl are imported inside the functions that use them, and
matplotlib only by `plots`: importing the package (as every web process does) costs numpy and
pandas, not the ~150 MB those bring (tests/readerstudy_tests/test_startup_imports.py). The
tables' normal, t and F functions and Wilson's interval come from scipy.special through
`distributions`, so an analysis imports neither scipy.stats nor statsmodels (~50 MB) unless a
rarer method asks for them (Clopper-Pearson, power).
"""

from analysis.stats.accuracy import accuracy_table
from analysis.stats.comparisons import ai_vs_readers_table, reader_panel_accuracy
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
    ALL_TASKS,
    KappaResult,
    fleiss_kappa,
    fleiss_table,
    kappa_matrices,
    kappa_matrix,
    kappa_matrix_ci,
    kappa_pairs,
    panel_answers,
)
from analysis.stats.paired import (
    BootstrapResult,
    McNemarResult,
    bootstrap_accuracy_difference,
    mcnemar_pairs,
    mcnemar_table,
    mcnemar_test,
)
from analysis.stats.timing import accuracy_by_time, reading_time_table

__all__ = [
    "ALL",
    "ALL_TASKS",
    "LETTERS",
    "REQUIRED",
    "AnalysisInputError",
    "BootstrapResult",
    "Flow",
    "KappaResult",
    "McNemarResult",
    "Missing",
    "Prepared",
    "accuracy_by_time",
    "accuracy_table",
    "ai_vs_readers_table",
    "bootstrap_accuracy_difference",
    "correct_wide",
    "failed_extractions",
    "fleiss_kappa",
    "fleiss_table",
    "flow_tables",
    "kappa_matrices",
    "kappa_matrix",
    "kappa_matrix_ci",
    "kappa_pairs",
    "mcnemar_pairs",
    "mcnemar_table",
    "mcnemar_test",
    "panel_answers",
    "prepare",
    "reader_panel_accuracy",
    "reading_time_table",
    "validate",
]
