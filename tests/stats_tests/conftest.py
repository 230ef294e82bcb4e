"""The statistics library's tests import no Django and use no database: they run alone with
`pytest -p no:django tests/stats_tests` (`make test-stats`), and in `make test` beside the rest,
where pytest-django refuses them any database access. Only these tests may import the
library's private modules (`analysis.stats.<module>`; the import contract in pyproject.toml);
every other caller uses `analysis.stats`."""
