"""ILSVRC 2012 Task 1 as a user writes it: NumPy reads both files, top-k error for k = 1..5.

python benchmarks/peers/ilsvrc2012_cls.py TRUTH GUESSES   # prints {"error@1": ..., ..., "error@5": ...}
"""

import json
import sys

import numpy as np

truth = np.loadtxt(sys.argv[1], dtype=np.int64)
guesses = np.loadtxt(sys.argv[2], dtype=np.int64, ndmin=2)
right = np.cumsum(guesses == truth[:, None], axis=1) > 0  # the truth among the first k guesses
print(json.dumps({f"error@{k}": float(1 - right[:, k - 1].mean()) for k in range(1, 6)}))
