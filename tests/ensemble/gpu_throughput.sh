#!/usr/bin/env bash
# Members per second of `nestsim ensemble` on the GPUs of one host (issue 35's
# measurements), for the lead's GPU machines; not part of ctest.
#   tests/ensemble/gpu_throughput.sh [NESTSIM] [MODEL] [REPLICAS] [STEPS]
# Defaults: ./build/cuda/nestsim, models/receptor_recycling.yaml, 16 replicas, 2000 steps;
# JOBS="1 2 4": the --jobs values of the one-GPU runs.
# Prints one line per configuration: one GPU with 1, 2 and 4 members at a time
# (--jobs; several small members per GPU), then, where the host has 2 or more GPUs, one
# process over every GPU (one member at a time on each, then the most of JOBS on each)
# and mpirun -n GPUS (one rank per GPU, one member at a time each). Every configuration runs
# the same members into a fresh directory; members/s = members / wall seconds.
set -euo pipefail
nestsim=${1:-./build/cuda/nestsim}
model=${2:-models/receptor_recycling.yaml}
replicas=${3:-16}
steps=${4:-2000}
# The GPUs this process may use: CUDA_VISIBLE_DEVICES where set (a subset of a larger
# host), else every GPU nvidia-smi lists. One-GPU configurations use the first of them.
if [ -n "${CUDA_VISIBLE_DEVICES:-}" ]; then
  visible=$CUDA_VISIBLE_DEVICES
else
  visible=$( (nvidia-smi --query-gpu=index --format=csv,noheader 2>/dev/null || true) | paste -sd, -)
fi
gpus=$(echo "$visible" | tr ',' '\n' | grep -c .)
first=${visible%%,*}
work=$(mktemp -d /tmp/nestsim_ensemble_bench.XXXXXX)
trap 'rm -rf "$work"' EXIT

measure() {  # measure LABEL COMMAND...: runs it, prints members/s
  local label=$1; shift
  local dir="$work/$(echo "$label" | tr -c 'a-zA-Z0-9' _)"
  local start end
  start=$(date +%s.%N)
  "$@" -o "$dir" > "$dir.log" 2>&1 || { echo "$label: failed:"; grep -v "^ *$" "$dir.log" | head -12; return; }
  end=$(date +%s.%N)
  awk -v l="$label" -v n="$replicas" -v s="$start" -v e="$end" \
    'BEGIN { printf "%-40s %3d members in %7.2f s: %6.3f members/s\n", l, n, e - s, n / (e - s) }'
}

args=(ensemble "$model" --replicas "$replicas" --steps "$steps")
echo "nestsim ensemble: $model, $replicas members of $steps steps, $gpus GPU(s)"
for jobs in ${JOBS:-1 2 4}; do
  CUDA_VISIBLE_DEVICES=$first measure "1 GPU, $jobs member(s) at a time" "$nestsim" "${args[@]}" --jobs "$jobs"
done
# SHARED=1: also two ranks of mpirun on one GPU, against --jobs 2. Separate processes
# take turns on the GPU (time slices) unless MPS runs: on an H200, 16 members of 2,000
# steps took 164 s this way against 21.5 s one at a time in one process (2026-11-28), so
# the row is left out by default.
if [ "${SHARED:-0}" = 1 ]; then
  CUDA_VISIBLE_DEVICES=$first measure "1 GPU, mpirun -n 2 (2 ranks on it)" mpirun --allow-run-as-root \
    -n 2 --bind-to none "$nestsim" "${args[@]}"
fi
if [ "$gpus" -ge 2 ]; then
  measure "$gpus GPUs, one process" "$nestsim" "${args[@]}"
  measure "$gpus GPUs, mpirun -n $gpus" mpirun --allow-run-as-root -n "$gpus" --bind-to none \
    "$nestsim" "${args[@]}"
  # The most members at a time of the one-GPU rows, on every GPU: the same use of each GPU.
  per=$(echo ${JOBS:-1 2 4} | tr ' ' '\n' | sort -n | tail -1)
  if [ "$per" -gt 1 ]; then
    measure "$gpus GPUs, one process, $per at a time on each" "$nestsim" "${args[@]}" \
      --jobs $((gpus * per))
  fi
fi
