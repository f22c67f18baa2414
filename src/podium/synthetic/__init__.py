"""Synthetic test sets: for the demo, the tests and the benchmarks."""
