"""A face-clustering participant: dlib HOG detector, 5-point landmarks, 128-d ResNet descriptor,
Chinese-whispers clustering. Follows the contest's contract: reads the images folder named in
./input.txt and writes ./team_dlib.csv (image, cluster number 1..K, rows in name order). An image
that does not decode or shows no face gets a cluster of its own, as the rules demand.
"""

from __future__ import annotations

import os
import sys

import dlib
import face_recognition_models as models
import numpy as np
from PIL import Image

THRESHOLD = 0.5  # descriptor distance under which two faces are joined (dlib's example value)


def main() -> None:
    folder = open("input.txt", encoding="utf-8").read().strip()
    names = sorted(os.listdir(folder))
    detector = dlib.get_frontal_face_detector()
    landmarks = dlib.shape_predictor(models.pose_predictor_five_point_model_location())
    encoder = dlib.face_recognition_model_v1(models.face_recognition_model_location())
    descriptors, described = [], []
    for name in names:
        try:
            with Image.open(os.path.join(folder, name)) as image:
                pixels = np.asarray(image.convert("RGB"))
        except Exception as exc:  # a file that does not decode: its own cluster
            print(f"{name}: unreadable ({exc})", file=sys.stderr)
            continue
        faces = detector(pixels, 1)
        if not faces:
            print(f"{name}: no face found", file=sys.stderr)
            continue
        face = max(faces, key=lambda r: r.width() * r.height())
        descriptors.append(encoder.compute_face_descriptor(pixels, landmarks(pixels, face)))
        described.append(name)
    labels = dlib.chinese_whispers_clustering(descriptors, THRESHOLD) if descriptors else []
    label_of = dict(zip(described, labels))
    number: dict[object, int] = {}
    with open("team_dlib.csv", "w", encoding="utf-8") as out:
        for name in names:  # clusters numbered 1..K in order of first appearance
            key = ("face", label_of[name]) if name in label_of else ("alone", name)
            number.setdefault(key, len(number) + 1)
            out.write(f"{name}, {number[key]}\n")


if __name__ == "__main__":
    main()
