"""The analysis layer's commands: studies, predictions, the demo, exports, power, simulation."""
