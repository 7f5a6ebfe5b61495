#!/usr/bin/env bash
# Prepare a fresh Debian machine: the apt packages guiforge's environments need, and the
# project venv (.venv) with guiforge installed editable. Idempotent and quick when done.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(chromium chromium-headless-shell xvfb xdotool x11-xserver-utils libreoffice-calc libreoffice-impress libreoffice-writer
              poppler-utils bubblewrap tesseract-ocr fonts-dejavu-core python3-minimal)

missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if ((${#missing[@]})); then
  echo "bootstrap: installing apt packages: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

PYTHON=${PYTHON:-python3}
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
  echo "bootstrap: guiforge needs Python 3.11+ (found $("$PYTHON" --version 2>&1)); set PYTHON=..." >&2
  exit 1
fi
# GUIFORGE_EXTRAS: the optional dependency groups to install (`make test` adds ray). The stamp
# records pyproject's hash and the groups installed; a later call asking for fewer keeps them.
stamp=.venv/.guiforge-installed
hash=$(sha256sum pyproject.toml | cut -c1-16)
read -r had_hash had_extras 2>/dev/null < "$stamp" || true
extras=$(echo "${GUIFORGE_EXTRAS:-test},${had_extras:-}" | tr ',' '\n' | sed '/^$/d' | sort -u | paste -sd, -)
want="$hash $extras"
if [ ! -x .venv/bin/python ] || [ "${had_hash:-} ${had_extras:-}" != "$want" ]; then
  echo "bootstrap: creating .venv and installing guiforge (about a minute)"
  [ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
  # pip's and setuptools' chatter goes to a log, shown only if the install fails
  pip_install() {
    if ! .venv/bin/python -m pip install -q "$@" > .venv/pip.log 2>&1; then
      cat .venv/pip.log >&2
      echo "bootstrap: pip install $* failed (log above, also in .venv/pip.log)" >&2
      exit 1
    fi
  }
  pip_install --upgrade pip
  pip_install -e ".[$extras]"
  .venv/bin/python -c "import guiforge, prefect, playwright, duckdb" 
  echo "$want" > "$stamp"
fi
