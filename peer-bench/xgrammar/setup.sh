#!/usr/bin/env bash
# Creates a venv for three_way.py / tool_calls.py at PATH from the package index:
# torch (CPU use), xgrammar 0.2.8, llguidance 1.9.1, transformers, numpy, and llg_rs built
# from this repository's python/ (a cargo release build: needs a Rust toolchain).
# Usage: peer-bench/xgrammar/setup.sh PATH
set -euo pipefail
if [ $# -ne 1 ]; then
  echo "usage: $0 VENV_PATH" >&2
  exit 2
fi
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
python3 -m venv "$1"
"$1/bin/pip" install --upgrade pip
"$1/bin/pip" install torch xgrammar==0.2.8 llguidance==1.9.1 transformers numpy
"$1/bin/pip" install "$repo/python"
"$1/bin/python" -c "import torch, xgrammar, llguidance, llg_rs, transformers, numpy; print('ok')"
