#!/usr/bin/env bash
# Runs both drivers twice (the llguidance wheel, then llg_rs through the shim, replaying the
# wheel run's decisions) and compares the transcripts. Needs a venv with vllm 0.33.0,
# sglang 0.5.23, the llguidance wheel and llg_rs installed (python/README.md, "Running vLLM
# and SGLang on llg_rs").
#   PY=/work/venv-clients/bin/python OUT=/tmp/clients bash python/clients/run_all.sh
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
PY="${PY:-python}"
OUT="${OUT:-/tmp/llg-clients}"
COMPAT="$(dirname "$HERE")/compat/src"
mkdir -p "$OUT"
cd "$HERE"
quiet() { grep -v '^W[0-9]\{4\} \|warnings.warn\|UserWarning\|vllm._C\|FlashInfer' || true; }
"$PY" drive_vllm.py --mode record --out "$OUT/vllm_wheel.json" 2>&1 | quiet
PYTHONPATH="$COMPAT" "$PY" drive_vllm.py --mode replay --replay "$OUT/vllm_wheel.json" --out "$OUT/vllm_llgrs.json" 2>&1 | quiet
"$PY" drive_sglang.py --mode record --out "$OUT/sglang_wheel.json" 2>&1 | quiet
PYTHONPATH="$COMPAT" "$PY" drive_sglang.py --mode replay --replay "$OUT/sglang_wheel.json" --out "$OUT/sglang_llgrs.json" 2>&1 | quiet
"$PY" compare.py "$OUT/vllm_wheel.json" "$OUT/vllm_llgrs.json" --json "$OUT/cmp_vllm.json" 2>&1 | quiet | tee "$OUT/cmp_vllm.txt"
"$PY" compare.py "$OUT/sglang_wheel.json" "$OUT/sglang_llgrs.json" --json "$OUT/cmp_sglang.json" 2>&1 | quiet | tee "$OUT/cmp_sglang.txt"
