"""pytest settings of the test suite: the on-demand fuzzing harnesses under tests/fuzz/ (atheris) are not tests."""
collect_ignore = ["fuzz"]
