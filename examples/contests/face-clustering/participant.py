"""A participant of the demo face-clustering contest, in plain Python: identical photos, one cluster.

The demo's photos of one person are the same image, so their bytes are equal. The
contract (podium run): ``input.txt`` in the working folder names the images
folder; the program writes ``<team>.csv`` with one line ``image, cluster`` per
image, in name order, clusters numbered from 1.
"""

import hashlib
import os

folder = open("input.txt").read().strip()
names = sorted(n for n in os.listdir(folder) if n.endswith(".jpg"))
cluster_of: dict[str, int] = {}
with open("demo_team.csv", "w") as out:
    for name in names:
        with open(os.path.join(folder, name), "rb") as photo:
            digest = hashlib.sha256(photo.read()).hexdigest()
        out.write(f"{name[:-4]}, {cluster_of.setdefault(digest, len(cluster_of) + 1)}\n")
