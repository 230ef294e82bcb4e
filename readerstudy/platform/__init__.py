"""The web platform under every app: HTTP, sign-in and API tokens, bounded input, error pages,
logs and mail, spreadsheet-safe files, links through the composition root.

None of it knows what a reader study is, so it sits below the domain (the import contract's
bottom layer): the domain and both apps above it use it, and it imports nothing of theirs.
Where a domain rule must show through (a blinding refusal in words, work refused for now), the
domain raises one of this package's exceptions (`errors.RefusedInWords`, `errors.TryLater`)
and the error pages and middleware answer it.

No Django import here: gunicorn's master imports `log_redaction` before any app is loaded.
"""
