# MRMCaov on data sets the live test writes: `Rscript live.R jobs.json out.json`, run from this
# folder. jobs.json lists {name, csv, case, methods}; each CSV has reader, treatment, case
# columns (and any others), truth and rating. Writes every summary as mrmcaov_summary.R does.
source("mrmcaov_summary.R")

args <- commandArgs(trailingOnly = TRUE)
jobs <- fromJSON(args[1], simplifyVector = FALSE)
out <- list(versions = versions())
for (job in jobs) {
  data <- read.csv(job$csv, colClasses = c(reader = "character", treatment = "character"))
  data[[job$case]] <- as.character(data[[job$case]])
  out[[job$name]] <- analyses(data, job$case, unlist(job$methods))
}
write_reference(out, args[2])
