"""face-clustering as a user writes it: pandas reads both CSVs, scikit-learn scores the clusters.

python benchmarks/peers/face_clustering.py TRUTH SUBMISSION   # prints {"nmi": ..., "pairwise_f": ...}
"""

import json
import sys

import pandas as pd
from sklearn.metrics import normalized_mutual_info_score
from sklearn.metrics.cluster import pair_confusion_matrix

truth = pd.read_csv(sys.argv[1])
clusters = pd.read_csv(sys.argv[2], header=None, names=["image", "cluster"], skipinitialspace=True)
clusters["image"] = clusters["image"] + ".jpg"
both = truth.merge(clusters, on="image", validate="one_to_one")
assert len(both) == len(truth), "every image needs a cluster"
(_, fp), (fn, tp) = pair_confusion_matrix(both["identity"], both["cluster"])
precision, recall = tp / (tp + fp), tp / (tp + fn)
print(
    json.dumps(
        {
            "nmi": normalized_mutual_info_score(both["identity"], both["cluster"]),
            "pairwise_f": 2 * precision * recall / (precision + recall),
        }
    )
)
