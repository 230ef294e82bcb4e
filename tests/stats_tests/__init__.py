"""Tests of the statistics library (analysis.stats) on its own: published and reference-package
results (Van Dyke, Fleiss, the SAS kappa example, MRMCaov, RJafroc), simulations and edge
cases, with no Django and no database (`make test-stats`)."""
