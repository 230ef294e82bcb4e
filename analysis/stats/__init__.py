"""Reader-study statistics: pure functions on pandas DataFrames, with no Django import.

A notebook can use them directly (`from analysis import stats`); the web pages, the API and
`export_analysis` call the same functions. `import-linter` keeps this package free of Django.
See `frame.py` for the long input format and the missing-answer policies.
"""

from analysis.stats.accuracy import accuracy_table
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
    KappaResult,
    fleiss_kappa,
    kappa_matrices,
    kappa_matrix,
    kappa_matrix_ci,
)
from analysis.stats.paired import (
    BootstrapResult,
    McNemarResult,
    bootstrap_accuracy_difference,
    mcnemar_table,
    mcnemar_test,
)

__all__ = [
    "ALL",
    "LETTERS",
    "REQUIRED",
    "AnalysisInputError",
    "BootstrapResult",
    "KappaResult",
    "McNemarResult",
    "Missing",
    "Prepared",
    "accuracy_table",
    "bootstrap_accuracy_difference",
    "correct_wide",
    "failed_extractions",
    "fleiss_kappa",
    "kappa_matrices",
    "kappa_matrix",
    "kappa_matrix_ci",
    "mcnemar_table",
    "mcnemar_test",
    "prepare",
    "validate",
]
