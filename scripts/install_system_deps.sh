#!/usr/bin/env bash
# Installs the system packages that the browser tests need: Debian's Chromium and its
# matching ChromeDriver (/usr/bin/chromium, /usr/bin/chromedriver). Selenium is pointed at
# these binaries, so no test tool ever downloads a browser of its own.
# Does nothing when both binaries are already there, so it is cheap to run every time.
set -euo pipefail

CHROMIUM=/usr/bin/chromium
CHROMEDRIVER=/usr/bin/chromedriver
PACKAGES=(chromium chromium-driver)

if [[ -x "$CHROMIUM" && -x "$CHROMEDRIVER" ]]; then
    exit 0
fi

echo "install_system_deps: $CHROMIUM or $CHROMEDRIVER is missing; installing ${PACKAGES[*]}"

if ! command -v apt-get >/dev/null 2>&1; then
    echo "install_system_deps: apt-get not found. Install Chromium and ChromeDriver with your" >&2
    echo "  system's package manager so that $CHROMIUM and $CHROMEDRIVER exist, then retry." >&2
    exit 1
fi

as_root=()
if [[ "$(id -u)" -ne 0 ]]; then
    if command -v sudo >/dev/null 2>&1; then
        as_root=(sudo)
    else
        echo "install_system_deps: installing ${PACKAGES[*]} needs root, and sudo is not available." >&2
        echo "  As root, run: apt-get update && apt-get install -y --no-install-recommends ${PACKAGES[*]}" >&2
        exit 1
    fi
fi

export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update
"${as_root[@]}" apt-get install -y --no-install-recommends "${PACKAGES[@]}"

for binary in "$CHROMIUM" "$CHROMEDRIVER"; do
    if [[ ! -x "$binary" ]]; then
        echo "install_system_deps: the packages installed, but $binary is still missing" >&2
        exit 1
    fi
done
"$CHROMIUM" --version || true
"$CHROMEDRIVER" --version || true
