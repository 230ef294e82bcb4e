# RJafroc on data sets the live test writes, run from this folder:
#   Rscript live_rjafroc.R out.json PILOT.csv CAD.csv J:K:EFFECT ...
# Each CSV is long (modality, reader, case, truth, rating); in CAD.csv the model is the reader
# that sorts first. Power from the pilot for each J readers, K cases and effect.
source("rjafroc_reference.R")

args <- commandArgs(trailingOnly = TRUE)
pilot <- long_dataset(read.csv(args[2], colClasses = c(reader = "character")))
power <- lapply(strsplit(args[-(1:3)], ":", fixed = TRUE), function(x) {
  x <- as.numeric(x)
  c(list(J = x[1], K = x[2], effect = x[3]), power_given_jk(pilot, x[1], x[2], x[3]))
})
cad <- long_dataset(read.csv(args[3], colClasses = c(reader = "character")))
write_reference(list(power = power, cad_vs_rad = cad_vs_rad(cad)), args[1])
