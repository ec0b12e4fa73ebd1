"""The threshold methods of calibration, by their command-line names (calibration_math.py computes them).

A module of its own, without numpy, so that `run_calibration --help` lists them at once."""

METHODS = ("kld", "minmax", "percentile9999", "mse")
