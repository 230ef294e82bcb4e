"""Benchmarks, each run as a script (`make bench` and its siblings; docs/benchmarks.md). A
package only so that `lint-imports` checks their imports like the project's: they use the
statistics library through its public API (`analysis.stats`), as every caller does."""
