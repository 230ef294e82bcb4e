"""The analysis layer's commands: the demo, exports, power, simulation."""
