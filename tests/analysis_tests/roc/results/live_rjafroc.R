# RJafroc on data sets the live test writes: `Rscript live_rjafroc.R jobs.json out.json`, run
# from this folder. jobs.json: {"pilot": csv, "designs": [{J, K, effect}], "cad": csv}; each
# CSV is long (modality, reader, case, truth, rating); in "cad" the model is the reader that
# sorts first.
source("rjafroc_reference.R")

args <- commandArgs(trailingOnly = TRUE)
jobs <- fromJSON(args[1], simplifyVector = FALSE)
pilot <- long_dataset(read.csv(jobs$pilot, colClasses = c(reader = "character")))
power <- lapply(jobs$designs, function(x) {
  c(x, power_given_jk(pilot, x$J, x$K, x$effect))
})
cad <- long_dataset(read.csv(jobs$cad, colClasses = c(reader = "character")))
write_reference(list(power = power, cad_vs_rad = cad_vs_rad(cad)), args[2])
