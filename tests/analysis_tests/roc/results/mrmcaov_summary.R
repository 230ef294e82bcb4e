# MRMCaov's printed summary of an AUC analysis as JSON: the reference results the ROC tests
# compare with, number for number. Sourced by vandyke.R (the stored reference) and by the live
# test (tests/analysis_tests/roc/test_live_r.py), so both read MRMCaov the same way.
suppressPackageStartupMessages(library(MRMCaov))

# A summary data frame as columns; a matrix column (CI) becomes CI.Lower / CI.Upper and the
# row names a `row` column.
frame_json <- function(df) {
  if (is.null(df)) return(NULL)
  out <- list(row = rownames(df))
  for (name in names(df)) {
    value <- df[[name]]
    if (is.matrix(value)) {
      for (j in seq_len(ncol(value))) out[[paste0(name, ".", colnames(value)[j])]] <- value[, j]
    } else if (is.factor(value)) {
      out[[name]] <- as.character(value)
    } else {
      out[[name]] <- value
    }
  }
  out
}

# Everything `print(summary(fit))` shows, plus the reader x test AUCs and the covariance
# matrix the summary rests on.
summary_json <- function(fit) {
  s <- summary(fit)
  list(
    factor_types = class(fit)[1],
    design = fit$design,
    cov_method = s$cov_method,
    foms = frame_json(as.data.frame(fit$data)),
    cov = if (is.null(fit$cov)) NULL else unclass(as(fit$cov, "matrix")),
    cov_names = if (is.null(fit$cov)) NULL else rownames(fit$cov),
    vcov_comps = frame_json(s$vcov_comps),
    test_equality = frame_json(s$test_equality),
    test_diffs = frame_json(s$test_diffs),
    test_means = frame_json(s$test_means),
    reader_test_diffs = frame_json(s$reader_test_diffs),
    reader_means = frame_json(s$reader_means)
  )
}

# Every analysis the tests compare: readers random / fixed, cases random / fixed, by each
# covariance method MRMCaov allows for the design. `case` names the case column.
analyses <- function(data, case, methods) {
  out <- list()
  for (method in methods) {
    cov <- get(method)
    rrrc <- eval(substitute(
      mrmc(empirical_auc(truth, rating), treatment, reader, CASE, data = data, cov = cov),
      list(CASE = as.name(case))
    ))
    frrc <- eval(substitute(
      mrmc(empirical_auc(truth, rating), treatment, fixed(reader), CASE, data = data, cov = cov),
      list(CASE = as.name(case))
    ))
    out[[paste0(method, "_random_readers")]] <- summary_json(rrrc)
    out[[paste0(method, "_fixed_readers")]] <- summary_json(frrc)
  }
  rrfc <- eval(substitute(
    mrmc(empirical_auc(truth, rating), treatment, reader, fixed(CASE), data = data),
    list(CASE = as.name(case))
  ))
  out[["fixed_cases"]] <- summary_json(rrfc)
  out
}

# Empirical ROC operating points per test and reader (MRMCaov's curve parameters).
roc_points_json <- function(data) {
  curves <- roc_curves(
    data$truth, data$rating, groups = list(treatment = data$treatment, reader = data$reader)
  )
  lapply(seq_len(nrow(curves)), function(i) {
    p <- parameters(curves$Curve[[i]])
    list(
      treatment = as.character(curves$Group$treatment[i]),
      reader = as.character(curves$Group$reader[i]),
      FPR = p$FPR, TPR = p$TPR
    )
  })
}

# JSON without jsonlite (a machine with only the oracles' dependencies has none): named lists
# as objects, unnamed lists and vectors as arrays, a vector of one as its value, numbers with
# 17 significant digits, NA / NaN / Inf as null.
to_json <- function(x, indent = "") {
  if (is.null(x)) return("null")
  if (is.matrix(x)) return(to_json(lapply(seq_len(nrow(x)), function(i) unname(x[i, ]))))
  if (is.list(x)) {
    if (is.null(names(x))) {
      return(paste0("[", paste(vapply(x, to_json, ""), collapse = ", "), "]"))
    }
    inner <- paste0("  ", indent)
    members <- vapply(x, to_json, "", indent = inner)
    body <- paste0(inner, '"', names(x), '": ', members, collapse = ",\n")
    return(paste0("{\n", body, "\n", indent, "}"))
  }
  if (is.factor(x)) x <- as.character(x)
  values <- if (is.character(x)) {
    ifelse(is.na(x), "null", paste0('"', gsub('"', '\\\\"', x), '"'))
  } else if (is.logical(x)) {
    ifelse(is.na(x), "null", tolower(as.character(x)))
  } else {
    ifelse(is.finite(x), trimws(formatC(as.numeric(x), digits = 17, format = "g")), "null")
  }
  if (length(values) == 1) values else paste0("[", paste(values, collapse = ", "), "]")
}

write_reference <- function(x, path) {
  writeLines(to_json(x), path)
}

versions <- function() {
  list(
    R = paste(R.version$major, R.version$minor, sep = "."),
    MRMCaov = as.character(packageVersion("MRMCaov"))
  )
}
