"""pytest's configuration for the whole checkout (the tests, and saber's doctests)."""

# Deprecated import paths: importing them warns (tests/test_layers.py checks that), so the
# doctest collector, which imports every module of saber/, leaves them alone.
collect_ignore = ["saber/harness/training.py", "saber/harness/video.py", "saber/harness/sb3.py"]
