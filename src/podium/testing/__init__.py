"""Testing helpers shipped with podium (as numpy.testing): the hostile-input harness of the fuzz tests."""
