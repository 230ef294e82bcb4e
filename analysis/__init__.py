"""The analysis layer, above annotation: the pipeline and its policy, its pages, API and exports;
the statistics library is its sub-package `stats`, which imports no Django."""
