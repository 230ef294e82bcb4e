"""The predictions app's command: `import_predictions`."""
