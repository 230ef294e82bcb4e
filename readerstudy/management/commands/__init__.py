"""The domain's commands: imports, the job sweep, the demo PACS."""
