"""AI models and their predictions (app `predictions`), in the domain, so that the design's aid
and the analysis both read them from below: models, import, preview, pages, API, extraction."""
