# Sourced by the bootstrap scripts of the side venvs (bootstrap-train.sh, bootstrap-lf.sh):
# `venv_pip WHO VENV ARGS...` runs VENV's pip install with ARGS, its output appended to
# VENV/pip.log; on failure it prints the log and one line saying what failed, and exits 1.
venv_pip() {
  local who=$1 venv=$2
  shift 2
  if ! "$venv/bin/python" -m pip install -q "$@" >> "$venv/pip.log" 2>&1; then
    cat "$venv/pip.log" >&2
    echo "$who: pip install $* failed (log above, also in $venv/pip.log)" >&2
    exit 1
  fi
}
