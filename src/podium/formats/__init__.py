"""Readers of the official file formats; every problem named with its file and line.

A regular package, not a namespace one: pytest then imports its modules for their doctests as
``podium.formats.<name>``, and a kernel Numba caches from a doctest names the module it is in.
"""
