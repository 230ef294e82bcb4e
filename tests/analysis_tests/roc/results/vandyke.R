# Writes vandyke.csv (MRMCaov's VanDyke data, with its case2 / case3 codings of the nested
# designs) and mrmcaov_vandyke.json (MRMCaov's summaries of every AUC analysis of it).
# Run from this folder:  R_LIBS=/opt/r-oracles Rscript vandyke.R
source("mrmcaov_summary.R")

data(VanDyke, package = "MRMCaov")
write.csv(VanDyke, "vandyke.csv", row.names = FALSE)

reference <- list(
  versions = versions(),
  factorial = analyses(VanDyke, "case", c("jackknife", "DeLong", "unbiased")),
  cases_within_readers = analyses(VanDyke, "case2", c("jackknife", "unbiased")),
  cases_within_tests = analyses(VanDyke, "case3", c("jackknife", "unbiased")),
  roc_points = roc_points_json(VanDyke),
  empirical_auc = with(VanDyke, tapply(seq_along(truth), list(treatment, reader),
    function(i) empirical_auc(truth[i], rating[i])))
)
write_reference(reference, "mrmcaov_vandyke.json")
