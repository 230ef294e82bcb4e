"""Reader-study statistics: pure functions on pandas DataFrames, with no Django import.

A notebook can use them directly (`from analysis import stats`); the web pages, the API and
`export_analysis` call the same functions. This module is the library's public API: every
caller outside the package imports from `analysis.stats` only (its modules are private; an
import contract in pyproject.toml enforces it, the library's own tests in tests/stats_tests
aside). `import-linter` keeps this package free of Django.
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
from analysis.stats.arm_readers import reader_arms_table
from analysis.stats.auc_covariance import METHOD_WORDS as AUC_COVARIANCE_WORDS
from analysis.stats.bounded import (
    LOGIT_METHOD,
    auc_note,
    difference_note,
    logit_interval,
)
from analysis.stats.clustered import (
    CLUSTER_CI_METHOD,
    PAIRED_METHOD,
    clustered_paired_difference,
    clustered_proportion_ci,
)
from analysis.stats.comparisons import (
    PANEL_COLUMNS,
    ai_vs_readers_table,
    few_readers_warning,
    reader_panel_accuracy,
)
from analysis.stats.confidence import (
    DISCRIMINATION_METHOD,
    LEVEL_METHOD,
    accuracy_by_confidence,
    confidence_discrimination,
)
from analysis.stats.confidence_ratings import (
    PRESENT_OPTION,
    RatingScale,
    confidence_answers,
    describe_scale,
    operating_points,
    reader_probabilities,
    roc_ratings,
)
from analysis.stats.design import (
    DesignPolicy,
    arm_accuracy,
    conclusions,
    design_results,
    power_table,
)
from analysis.stats.design import as_json as design_json
from analysis.stats.design_frame import (
    ANCHOR,
    CROSSOVER,
    SECOND_READ,
    Cube,
    DesignTable,
    Modalities,
    comparison_rows,
    cube_from_rows,
)
from analysis.stats.distributions import norm_ppf, wilson_interval
from analysis.stats.flow import Flow, analysed_rows, drop_fast, flow_tables
from analysis.stats.frame import (
    ACCEPTED,
    ALL,
    LETTERS,
    REQUIRED,
    AnalysisInputError,
    Missing,
    Prepared,
    correct_matrix,
    correct_wide,
    failed_extractions,
    prepare,
    right,
    validate,
)
from analysis.stats.items import DEFINITION as ITEM_ANALYSIS_DEFINITION
from analysis.stats.items import DIFFICULTY_LEVELS, FIT_LEVELS, fisher_interval, item_analysis
from analysis.stats.kappa import PAIR_COLUMNS as KAPPA_PAIR_COLUMNS
from analysis.stats.kappa import (
    fleiss_kappa,
    fleiss_table,
    kappa_caveat,
    kappa_matrices,
    kappa_matrix,
    kappa_pairs,
    panel_answers,
)
from analysis.stats.mrmc import ai_versus_readers, panel_accuracy
from analysis.stats.or_accuracy import or_design, reader_differences
from analysis.stats.or_core import (
    FIXED_CASES,
    FIXED_READERS,
    RANDOM,
    ORHillisResult,
    components_frame,
    or_hillis,
    or_single,
)
from analysis.stats.paired import McNemarResult, mcnemar_pairs, mcnemar_table, mcnemar_test
from analysis.stats.power import Pilot
from analysis.stats.power import power as pilot_power
from analysis.stats.probability_calibration import Binning, calibration, multiclass_brier_table
from analysis.stats.probability_calibration import describe as calibration_method
from analysis.stats.reliance import (
    AGREEMENT_CHANGES,
    AGREEMENT_RATES,
)
from analysis.stats.reliance import CHANGE_PARTS as RELIANCE_CHANGE_PARTS
from analysis.stats.reliance import LABELS as RELIANCE_LABELS
from analysis.stats.reliance import POOLED as RELIANCE_POOLED
from analysis.stats.reliance import RATE_PARTS as RELIANCE_RATE_PARTS
from analysis.stats.reliance import SWITCH_PARTS as RELIANCE_SWITCH_PARTS
from analysis.stats.roc import auc_table, empirical_auc, roc_curves, roc_points
from analysis.stats.roc_frame import RatingsCube, ratings_cube
from analysis.stats.roc_mrmc import UNIT as AUC_UNIT
from analysis.stats.roc_mrmc import AucMrmc, auc_mrmc, auc_panel
from analysis.stats.roc_power import auc_pilot, auc_power, auc_sample_size_table
from analysis.stats.roc_power import method as auc_power_method
from analysis.stats.roc_simulate import RoeMetz, model_probabilities, simulate_ratings
from analysis.stats.roc_vs_models import auc_vs_models_table, readers_vs_model
from analysis.stats.roc_vs_models import method as auc_vs_models_method
from analysis.stats.simulate import LatentModel, simulate_cube, simulate_frame
from analysis.stats.timing import accuracy_by_time, reading_time_table

__all__ = [
    "ACCEPTED",
    "AGREEMENT_CHANGES",
    "AGREEMENT_RATES",
    "ALL",
    "ANCHOR",
    "AUC_COVARIANCE_WORDS",
    "AUC_UNIT",
    "CLUSTER_CI_METHOD",
    "CROSSOVER",
    "DIFFICULTY_LEVELS",
    "DISCRIMINATION_METHOD",
    "FIT_LEVELS",
    "FIXED_CASES",
    "FIXED_READERS",
    "ITEM_ANALYSIS_DEFINITION",
    "KAPPA_PAIR_COLUMNS",
    "LETTERS",
    "LEVEL_METHOD",
    "LOGIT_METHOD",
    "PAIRED_METHOD",
    "PANEL_COLUMNS",
    "PRESENT_OPTION",
    "RANDOM",
    "RELIANCE_CHANGE_PARTS",
    "RELIANCE_LABELS",
    "RELIANCE_POOLED",
    "RELIANCE_RATE_PARTS",
    "RELIANCE_SWITCH_PARTS",
    "REQUIRED",
    "SECOND_READ",
    "AnalysisInputError",
    "AucMrmc",
    "Binning",
    "Cube",
    "DesignPolicy",
    "DesignTable",
    "Flow",
    "LatentModel",
    "McNemarResult",
    "Missing",
    "Modalities",
    "ORHillisResult",
    "Pilot",
    "Prepared",
    "RatingScale",
    "RatingsCube",
    "RoeMetz",
    "accuracy_by_confidence",
    "accuracy_by_time",
    "accuracy_table",
    "ai_versus_readers",
    "ai_vs_readers_table",
    "analysed_rows",
    "arm_accuracy",
    "auc_mrmc",
    "auc_note",
    "auc_panel",
    "auc_pilot",
    "auc_power",
    "auc_power_method",
    "auc_sample_size_table",
    "auc_table",
    "auc_vs_models_method",
    "auc_vs_models_table",
    "calibration",
    "calibration_method",
    "clustered_paired_difference",
    "clustered_proportion_ci",
    "comparison_rows",
    "components_frame",
    "conclusions",
    "confidence_answers",
    "confidence_discrimination",
    "correct_matrix",
    "correct_wide",
    "cube_from_rows",
    "describe_scale",
    "design_json",
    "design_results",
    "difference_note",
    "drop_fast",
    "empirical_auc",
    "failed_extractions",
    "few_readers_warning",
    "fisher_interval",
    "fleiss_kappa",
    "fleiss_table",
    "flow_tables",
    "item_analysis",
    "kappa_caveat",
    "kappa_matrices",
    "kappa_matrix",
    "kappa_pairs",
    "logit_interval",
    "mcnemar_pairs",
    "mcnemar_table",
    "mcnemar_test",
    "model_probabilities",
    "multiclass_brier_table",
    "norm_ppf",
    "operating_points",
    "or_design",
    "or_hillis",
    "or_single",
    "panel_accuracy",
    "panel_answers",
    "pilot_power",
    "power_table",
    "prepare",
    "ratings_cube",
    "reader_arms_table",
    "reader_differences",
    "reader_panel_accuracy",
    "reader_probabilities",
    "readers_vs_model",
    "reading_time_table",
    "right",
    "roc_curves",
    "roc_points",
    "roc_ratings",
    "simulate_cube",
    "simulate_frame",
    "simulate_ratings",
    "validate",
    "wilson_interval",
]
