# MRMCaov on data sets the live test writes: `Rscript live.R out.json NAME=CSV=METHODS ...`,
# run from this folder; METHODS joined by "+". Each CSV has reader, treatment, case, truth and
# rating columns. Writes every summary as mrmcaov_summary.R does.
source("mrmcaov_summary.R")

args <- commandArgs(trailingOnly = TRUE)
out <- list(versions = versions())
for (job in strsplit(args[-1], "=", fixed = TRUE)) {
  data <- read.csv(job[2], colClasses = c(reader = "character", treatment = "character",
                                          case = "character"))
  out[[job[1]]] <- analyses(data, "case", strsplit(job[3], "+", fixed = TRUE)[[1]])
}
write_reference(out, args[1])
