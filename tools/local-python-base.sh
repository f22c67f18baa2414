#!/usr/bin/env bash
# Build the repository's Dockerfile without Docker Hub: a local stand-in for its base image.
#   tools/local-python-base.sh [MIRROR]     (root, debootstrap, a Docker engine; MIRROR: the apt mirror [deb.debian.org])
# debootstrap makes a minimal Debian bookworm with Python (3.11, where the Hub's image has 3.12; podium needs 3.11+)
# and pip, imported under the Dockerfile's base name python:3.12-slim-bookworm, so that
#     DOCKER_BUILDKIT=0 docker build --network host -t podium:local .
# builds. The host's CA bundle goes in (a proxy's certificate authority, if any, included); pip may install
# into the system Python (no PEP 668 refusal). Only for building here: push the image built on the Hub's base.
set -euo pipefail
mirror="${1:-http://deb.debian.org/debian}"
root="$(mktemp -d /tmp/podium-python-base.XXXXXX)"
trap 'rm -rf "$root"' EXIT
debootstrap --variant=minbase --include=python3,python3-pip,python3-venv,python-is-python3 bookworm "$root" "$mirror" >/dev/null
mkdir -p "$root/etc/ssl/certs"
cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/ca-certificates.crt"
tar -C "$root" -c . | docker import \
    --change 'ENV PIP_BREAK_SYSTEM_PACKAGES=1 PIP_CERT=/etc/ssl/certs/ca-certificates.crt' \
    --change 'CMD ["/bin/bash"]' - python:3.12-slim-bookworm
