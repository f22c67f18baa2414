"""Scoring: run the challenge's rule over a submission, inline, in local processes or on a Dask cluster, and run a program then score it."""
