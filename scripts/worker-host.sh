#!/usr/bin/env bash
# A Prefect worker host for guiforge's deployments, from a fresh Debian 12 machine:
#   git clone <guiforge repository> guiforge && cd guiforge && ./scripts/worker-host.sh
# installs the apt packages the environments need (Chromium and its headless shell, Xvfb,
# xdotool, LibreOffice, poppler, bubblewrap, tesseract) and this clone's .venv (bootstrap.sh),
# then starts a process worker on the pool (default: guiforge) of the server in
# PREFECT_API_URL. The deployments carry no path: each run moves into this clone
# (guiforge.orchestration.deploy_steps), wherever it lives on this host.
# Model keys and storage credentials (OPENAI_API_KEY, AWS_*) are this host's environment.
set -euo pipefail
cd "$(dirname "$0")/.."
POOL=${1:-guiforge}
: "${PREFECT_API_URL:?set PREFECT_API_URL to the Prefect server, e.g. http://prefect-host:4200/api}"
GUIFORGE_EXTRAS=${GUIFORGE_EXTRAS:-ray} ./scripts/bootstrap.sh
.venv/bin/prefect work-pool inspect "$POOL" >/dev/null 2>&1 || .venv/bin/prefect work-pool create "$POOL" --type process
exec .venv/bin/prefect worker start --pool "$POOL"
