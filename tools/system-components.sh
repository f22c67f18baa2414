#!/usr/bin/env bash
# Install the system components the tests run against, where they are missing:
#   tools/system-components.sh COMMAND=PACKAGE ...   (COMMAND: a name on PATH, or a path pattern such as /usr/lib/x/*/bin/y)
# Only as root with apt-get (as in CI): 'apt-get update' once, then one install.
# Elsewhere it says what is missing; the tests that need it then skip with the
# reason, or fail when CI=true.
set -uo pipefail
missing=()
for pair in "$@"; do
    wanted="${pair%%=*}"
    if [[ "$wanted" == */* ]]; then
        compgen -G "$wanted" >/dev/null || missing+=("${pair#*=}")
    else
        command -v "$wanted" >/dev/null 2>&1 || missing+=("${pair#*=}")
    fi
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "system components missing (not root with apt-get, so not installed): ${missing[*]}" >&2
    exit 0
fi
echo "installing system components: ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
if ! { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}"; } >/tmp/podium-apt.log 2>&1; then
    echo "could not install ${missing[*]} (log: /tmp/podium-apt.log)" >&2
    tail -5 /tmp/podium-apt.log >&2
fi
exit 0
