#!/usr/bin/env bash
# Create (or refresh) the peers virtualenv used by the peer benchmark.
# Usage: bench/peers/setup_venv.sh [VENV_DIR]   (default bench/.peers-venv)
# The base interpreter is $PEERS_PYTHON, else pyenv 3.12.1, else python3.12.
# Prints the venv's python path. The venv is NOT a project dependency.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
venv_dir="${1:-$root/bench/.peers-venv}"
base="${PEERS_PYTHON:-}"
if [[ -z "$base" ]]; then
  if [[ -x /root/.pyenv/versions/3.12.1/bin/python ]]; then
    base=/root/.pyenv/versions/3.12.1/bin/python
  else
    base="$(command -v python3.12 || command -v python3)"
  fi
fi
exec "$base" "$here/run_peers.py" --setup-only --venv "$venv_dir" --base-python "$base"
