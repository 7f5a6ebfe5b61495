#!/usr/bin/env bash
# The LLaMA-Factory venv (.venv-lf): llamafactory 0.9.5 with the training stack its own
# check_dependencies accepts (transformers <=5.6, datasets <=4.0, peft <=0.20, trl <=0.24), apart
# from the trainer venv whose TRL stack is newer. Tests train a tiny model with LLaMA-Factory's
# SFT in a subprocess with its python. Idempotent and quick when done.
#
# llamafactory goes in --no-deps: it requires torchaudio and torchvision, and neither has a wheel
# for this machine's CPU torch (torchaudio none at all, torchvision only CUDA builds). torchvision
# is optional to transformers (without it Qwen2-VL uses its PIL image processor) and to
# LLaMA-Factory's image path; torchaudio is imported by mm_plugin.py for audio only, so a stub
# (scripts/lf-stubs/torchaudio) that raises on use stands in for it. The web UI's stack (gradio,
# fastapi) and the hubs' clients (modelscope) are left out: training never imports them.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/venv-pip.sh

PYTHON=${PYTHON:-python3}
# torch==2.13.0 resolves to the CPU wheel on this machine's disk; a plain `torch` pulls CUDA
LF_PACKAGES=("torch==2.13.0" "transformers==5.6.0" "datasets==4.0.0" "accelerate==1.11.0" "peft==0.18.1"
             "trl==0.24.0" "tyro<0.9.0" "omegaconf" "fire" "einops" "pyyaml" "pandas" "scipy" "sentencepiece"
             "protobuf" "pillow>=10" "numpy" "safetensors" "packaging" "pydantic")
NODEPS_PACKAGES=("llamafactory==0.9.5")
stamp=.venv-lf/.guiforge-lf-installed
want=$(printf '%s\n' "${LF_PACKAGES[@]}" "${NODEPS_PACKAGES[@]}" | cat - scripts/lf-stubs/torchaudio/__init__.py \
       | sha256sum | cut -c1-16)
if [ ! -x .venv-lf/bin/python ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "bootstrap-lf: creating .venv-lf with llamafactory 0.9.5 (a few minutes)"
  [ -x .venv-lf/bin/python ] || "$PYTHON" -m venv .venv-lf
  : > .venv-lf/pip.log
  venv_pip bootstrap-lf .venv-lf "${LF_PACKAGES[@]}"
  venv_pip bootstrap-lf .venv-lf --no-deps "${NODEPS_PACKAGES[@]}"
  site=$(.venv-lf/bin/python -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
  rm -rf "$site/torchaudio" && cp -r scripts/lf-stubs/torchaudio "$site/torchaudio"
  .venv-lf/bin/python -c "import llamafactory.train.tuner"
  echo "$want" > "$stamp"
fi
