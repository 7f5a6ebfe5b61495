#!/usr/bin/env bash
# The trainer venv (.venv-train): TRL and its CPU torch, kept out of the project venv so
# guiforge never depends on a trainer, plus guiforge with only what guiforge.rl declares
# (pyproject's `rl` extra: the reward rebuilds s0 and drives the real environments), never the
# pipeline's own stack (Prefect, DuckDB, model SDKs). Tests run the trainer-side checks in a
# subprocess with its python. Idempotent and quick when done.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/venv-pip.sh

PYTHON=${PYTHON:-python3}
# torch==2.13.0 resolves to the CPU wheel on this machine's disk; a plain `torch` pulls CUDA
TRAIN_PACKAGES=("torch==2.13.0" "trl==1.16.*" "datasets>=5.2" "pillow>=10" "tenacity>=8")
# LLaMA-Factory's data modules (dataset_info parser, sharegpt converters) for the export tests,
# without dependencies: its pins would replace the trainer stack above (peft: its constants import it)
NODEPS_PACKAGES=("llamafactory==0.9.5" "peft==0.21.2")
# the rl extra, read from pyproject.toml (one list: what a trainer's environment needs)
mapfile -t RL_PACKAGES < <("$PYTHON" -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['optional-dependencies']['rl']))")
stamp=.venv-train/.guiforge-train-installed
want=$(printf '%s\n' "${TRAIN_PACKAGES[@]}" "${RL_PACKAGES[@]}" "${NODEPS_PACKAGES[@]}" | sha256sum | cut -c1-16)
if [ ! -x .venv-train/bin/python ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "bootstrap-train: creating .venv-train with ${TRAIN_PACKAGES[*]} (a few minutes)"
  [ -x .venv-train/bin/python ] || "$PYTHON" -m venv .venv-train
  : > .venv-train/pip.log
  venv_pip bootstrap-train .venv-train "${TRAIN_PACKAGES[@]}" "${RL_PACKAGES[@]}"
  venv_pip bootstrap-train .venv-train --no-deps "${NODEPS_PACKAGES[@]}"
  # guiforge itself without its pipeline dependencies: a training job imports guiforge.rl
  venv_pip bootstrap-train .venv-train --no-deps -e .
  .venv-train/bin/python -c "import trl.data_utils, datasets, torch, guiforge.rl"
  echo "$want" > "$stamp"
fi
