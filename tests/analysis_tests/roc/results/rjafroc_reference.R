# RJafroc as the readers-versus-model and power references: a long-format export of an RJafroc
# ROC dataset, StCadVsRad's results and SsPowerGivenJK's. Sourced by cad_vs_radiologists.R and
# by the live tests (live_rjafroc.R).
suppressPackageStartupMessages(library(RJafroc))
source("mrmcaov_summary.R")  # to_json, write_reference

# An RJafroc ROC dataset as long rows: modality, reader, case (negatives first), truth, rating.
dataset_long <- function(ds) {
  nl <- ds$ratings$NL
  ll <- ds$ratings$LL
  I <- dim(nl)[1]; J <- dim(nl)[2]; K <- dim(nl)[3]; K2 <- dim(ll)[3]; K1 <- K - K2
  rows <- list()
  for (i in seq_len(I)) for (j in seq_len(J)) {
    rows[[length(rows) + 1]] <- data.frame(
      modality = ds$descriptions$modalityID[i], reader = ds$descriptions$readerID[j],
      case = seq_len(K), truth = c(rep(0, K1), rep(1, K2)),
      rating = c(nl[i, j, seq_len(K1), 1], ll[i, j, , 1])
    )
  }
  do.call(rbind, rows)
}

# A long data frame (modality, reader, case, truth, rating; every reader rates every case) as
# an RJafroc ROC dataset, negatives first.
long_dataset <- function(d) {
  modalities <- sort(unique(d$modality)); readers <- sort(unique(d$reader))
  cases <- unique(d[order(d$truth, d$case), c("case", "truth")])
  neg <- cases$case[cases$truth == 0]; pos <- cases$case[cases$truth == 1]
  rating <- function(m, r, k) d$rating[d$modality == m & d$reader == r & d$case == k]
  nl <- array(dim = c(length(modalities), length(readers), length(neg)))
  ll <- array(dim = c(length(modalities), length(readers), length(pos)))
  for (i in seq_along(modalities)) for (j in seq_along(readers)) {
    nl[i, j, ] <- sapply(neg, function(k) rating(modalities[i], readers[j], k))
    ll[i, j, ] <- sapply(pos, function(k) rating(modalities[i], readers[j], k))
  }
  if (length(modalities) == 1) {
    nl <- nl[1, , ]; ll <- ll[1, , ]
  }
  Df2RJafrocDataset(nl, ll)
}

cad_vs_rad <- function(ds) {
  lapply(c(RRRC = "1T-RRRC", RRFC = "1T-RRFC"), function(method) {
    r <- StCadVsRad(ds, FOM = "Wilcoxon", method = method)
    lapply(r, function(x) unname(as.numeric(x)))
  })
}

power_given_jk <- function(ds, J, K, effect) {
  out <- list()
  for (option in c("RRRC", "FRRC", "RRFC")) {
    r <- SsPowerGivenJK(ds, FOM = "Wilcoxon", J = J, K = K, effectSize = effect,
                        method = "OR", analysisOption = option)
    out[[option]] <- lapply(as.list(r), function(x) unname(as.numeric(x)))
  }
  vc <- UtilORVarComp(ds, FOM = "Wilcoxon")$VarCom
  out$VarCom <- setNames(as.list(vc$Estimates), rownames(vc))
  out
}
