#!/usr/bin/env bash
# Installs Debian's chromium and chromedriver for the report's browser tests
# (tests/test_report_browser.py), only when they are missing: idempotent, and a no-op on a
# machine that has them. Uses apt-get (as root, or through sudo); never downloads a browser
# any other way.
set -euo pipefail
if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then
    exit 0
fi
if ! command -v apt-get >/dev/null; then
    echo "install-browser: no apt-get here; install chromium and chromedriver yourself" \
         "(the browser tests are skipped without them)" >&2
    exit 0
fi
bash "$(dirname "$0")/apt_install.sh" chromium chromium-driver
