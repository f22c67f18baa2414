"""Mergeable statistics declared field by field (the torchmetrics habit).

A statistics object is a frozen dataclass that derives from :class:`Statistics`
and says, for each field, how two disjoint parts of a test set combine:

- :func:`summed`: numbers add; tuples add element by element (of one length);
  nested statistics merge;
- :func:`concatenated`: tuples and arrays are joined, ``self`` first
  (per-item records, whose order the statistics' users must not depend on);
- :func:`keyed`: mappings join key by key; a key on both sides combines its two
  values as :func:`summed` does.

``merge`` is then one generic method, so every challenge's parallel, split or
distributed scoring goes through the same few lines, and the conformance suite
(``tests/test_conformance.py``) checks that merging parts in any order gives the
statistics of the whole.

>>> from dataclasses import dataclass
>>> @dataclass(frozen=True)
... class Counts(Statistics):
...     hits: int = summed()
...     per_class: tuple[int, ...] = summed(())
...     names: tuple[str, ...] = concatenated(())
>>> Counts(1, (1, 0), ("a",)).merge(Counts(2, (0, 3), ("b",)))
Counts(hits=3, per_class=(1, 3), names=('a', 'b'))
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import MISSING, field, fields, replace
from typing import Any, Self

MERGE = "merge"  # the key of a field's rule in its metadata


def summed(default: Any = 0) -> Any:
    """A field that adds up: a number, a tuple of numbers, or nested statistics (give the default)."""
    return field(default=default, metadata={MERGE: "sum"})


def concatenated(default: Any = MISSING, *, default_factory: Any = MISSING, compare: bool = True) -> Any:
    """A field of per-item records, a tuple or an array, joined in order (``compare=False``: not in ``==``)."""
    return field(
        default=default, default_factory=default_factory, compare=compare, repr=compare, metadata={MERGE: "concatenate"}
    )


def keyed() -> Any:
    """A mapping whose values of equal keys are :func:`summed`."""
    return field(default_factory=dict, metadata={MERGE: "key"})


def _sum(a: Any, b: Any) -> Any:
    if isinstance(a, Statistics):
        return a.merge(b)
    if isinstance(a, tuple):
        if len(a) != len(b):
            raise ValueError(f"cannot add {len(a)} sums to {len(b)} (statistics of different numbers of classes)")
        return tuple(x + y for x, y in zip(a, b))
    return a + b


def _concatenate(a: Any, b: Any) -> Any:
    if isinstance(a, tuple):
        return a + b
    import numpy as np  # arrays to join: NumPy is loaded (a command scoring without it merges no arrays)

    return np.concatenate([a, b])


def _join(a: Mapping[Any, Any], b: Mapping[Any, Any]) -> dict[Any, Any]:
    return {key: _sum(a[key], b[key]) if key in a and key in b else a.get(key, b.get(key)) for key in {**a, **b}}


RULES: dict[str, Callable[[Any, Any], Any]] = {"sum": _sum, "concatenate": _concatenate, "key": _join}


class Statistics:
    """Base of a dataclass whose fields all declare their merge rule."""

    def merge(self, other: Self) -> Self:
        """The statistics of the union of two disjoint parts."""
        if type(other) is not type(self):
            raise TypeError(f"cannot merge {type(self).__name__} with {type(other).__name__}")
        merged = {}
        for f in fields(self):  # type: ignore[arg-type]
            if MERGE not in f.metadata:
                raise TypeError(
                    f"{type(self).__name__}.{f.name} declares no merge rule (summed, concatenated or keyed)"
                )
            merged[f.name] = RULES[f.metadata[MERGE]](getattr(self, f.name), getattr(other, f.name))
        return replace(self, **merged)  # type: ignore[type-var]
