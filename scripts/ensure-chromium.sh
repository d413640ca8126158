#!/usr/bin/env bash
# Makes sure a Chromium for the browser tests is installed (Debian's `chromium` package, installed with apt-get when
# absent) and prints the path of its executable. Exits non-zero, saying why on stderr, when none can be had.
set -euo pipefail

find_chromium() {
  for candidate in "${CHROMIUM_PATH:-}" chromium chromium-browser google-chrome-stable google-chrome; do
    [ -n "$candidate" ] || continue
    if path=$(command -v "$candidate" 2>/dev/null); then
      echo "$path"
      return 0
    fi
  done
  return 1
}

if path=$(find_chromium); then
  echo "$path"
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-chromium: no Chromium found and no apt-get to install one" >&2
  exit 1
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "ensure-chromium: no Chromium found; installing it needs root (apt-get install chromium)" >&2
    exit 1
  fi
fi
echo "ensure-chromium: installing Debian's chromium package" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >&2
$SUDO apt-get install -y -qq --no-install-recommends chromium >&2

if path=$(find_chromium); then
  echo "$path"
  exit 0
fi
echo "ensure-chromium: apt-get installed chromium, but no executable was found" >&2
exit 1
