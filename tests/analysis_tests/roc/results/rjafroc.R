# Writes dataset09.csv (RJafroc's dataset09: standalone CAD, reader 1, and nine radiologists on
# 200 mammograms, 80 with a mass; Hupse et al. 2013) and rjafroc.json: StCadVsRad on it, and
# SsPowerGivenJK with VanDyke (vandyke.csv) as the pilot. Run from this folder:
#   R_LIBS=/opt/r-oracles Rscript rjafroc.R
source("rjafroc_reference.R")

write.csv(dataset_long(dataset09), "dataset09.csv", row.names = FALSE)

vandyke <- read.csv("vandyke.csv")
vandyke$modality <- vandyke$treatment
pilot <- long_dataset(vandyke)
designs <- list(c(J = 5, K = 114, effect = 0.05), c(J = 10, K = 250, effect = 0.03),
                c(J = 4, K = 60, effect = 0.08))
power <- lapply(designs, function(x) c(as.list(x), power_given_jk(pilot, x[["J"]], x[["K"]],
                                                                  x[["effect"]])))

write_reference(list(
  versions = list(RJafroc = as.character(packageVersion("RJafroc"))),
  dataset09_cad_vs_rad = cad_vs_rad(dataset09),
  vandyke_power = power
), "rjafroc.json")
