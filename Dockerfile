# podium's image: the scoring image of Codabench, EvalAI and Grand Challenge.
# Build it in a podium checkout (the folder that holds pyproject.toml):
#     docker build -t REGISTRY/podium:VERSION .
# - Codabench: push it and name it in competition.yaml's docker_image (podium bundle codabench --image NAME);
#   the bundle's scoring program runs `podium codabench` in it.
# - Grand Challenge: upload it as the phase's evaluation method; it runs `podium grand-challenge`, which reads
#   the phase's ground truth (podium bundle reference) in /opt/ml/input/data/ground_truth.
# - EvalAI: run its remote evaluation worker in it, or install podium where the workers run.
# Every Python package is pinned by constraints.txt. Written by podium.publish.platforms.image.
FROM python:3.12-slim-bookworm
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /opt/podium
COPY pyproject.toml constraints.txt README.md ./
COPY src ./src
# gcc builds podium's C extensions (docs/install.md), and is removed in the same layer.
RUN apt-get update && apt-get install -y --no-install-recommends gcc libc6-dev \
 && python -m pip install --constraint constraints.txt . \
 && apt-get purge -y --auto-remove gcc libc6-dev && rm -rf /var/lib/apt/lists/* \
 && python -c "import podium.formats._label_table, podium.formats._png_sums, podium.metrics._topk" \
 && podium --version \
 && NUMBA_CPU_NAME=generic python -c "import podium.scoring.kernels" \
 && python -c "import podium.publish.platforms.codabench, podium.publish.platforms.evalai, podium.publish.platforms.grand_challenge"
WORKDIR /
CMD ["podium", "grand-challenge"]
