#!/usr/bin/env bash
# Installs Debian packages with apt-get (as root, or through sudo), non-interactively,
# after refreshing the package lists. Fails when apt-get is missing or cannot install
# them; callers decide what that means for them. Usage: tools/apt_install.sh PACKAGE...
set -euo pipefail
if ! command -v apt-get >/dev/null; then
    echo "apt_install: no apt-get here" >&2
    exit 1
fi
sudo=""
if [ "$(id -u)" != 0 ]; then
    sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "$@"
