"""The design app's command: `create_study`."""
