"""Flatten shared/data/faces/johns (one folder per person) into the contest's layout.

Writes OUT/images/<person>__<file>.jpg and OUT/truth.csv (image,identity), outside the repository.
    python examples/face_clustering_dlib/prepare_johns.py ../shared/data/faces/johns /tmp/johns
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path


def main() -> None:
    source, out = Path(sys.argv[1]), Path(sys.argv[2])
    (out / "images").mkdir(parents=True, exist_ok=True)
    rows = ["image,identity"]
    for person in sorted(p for p in source.iterdir() if p.is_dir()):
        for image in sorted(person.glob("*.jpg")):
            name = f"{person.name}__{image.name}"
            shutil.copyfile(image, out / "images" / name)
            rows.append(f"{name},{person.name}")
    (out / "truth.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    print(f"{len(rows) - 1} images in {out / 'images'}, truth in {out / 'truth.csv'}")


if __name__ == "__main__":
    main()
