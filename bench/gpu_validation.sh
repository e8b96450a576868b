#!/bin/bash
# The validation suite (tests/validation/, label `validation`) on a GPU machine: one
# process per check and seed, at most PER_GPU (default 4) at a time on each GPU. Without
# MPS, processes of one GPU do not overlap their kernels (the device time-slices between
# them), so many at once only wait on each other; under MPS (bench/gpu_check.sh starts
# it) they do, and PER_GPU can be as many as there are cores. Within a process, a check's
# independent replicas run side by side on streams of their own (nestsim/sim/replicas.h).
# Run from the repository root after the CUDA build:
#
#   bash bench/gpu_validation.sh [BUILD_DIR]     (default build/cuda)
#
# The GPUs: CUDA_VISIBLE_DEVICES where set, else every GPU nvidia-smi lists. Each process
# runs one test case at one seed (NESTSIM_VALIDATION_SEEDS=1); the joined output goes
# through tools/validation_table.py, which applies the suite's two-seed rule. Logs in
# $OUT/validation/ (or /tmp/gpu_validation); exit 1 when any check fails.
set -u
BUILD=${1:-build/cuda}
TOP=${OUT:-/tmp/gpu_validation}/validation
PER_GPU=${PER_GPU:-4}
mkdir -p "$TOP"
if [ -n "${CUDA_VISIBLE_DEVICES:-}" ]; then
  gpus=$CUDA_VISIBLE_DEVICES
else
  gpus=$(nvidia-smi --query-gpu=index --format=csv,noheader 2>/dev/null | paste -sd, -)
fi
[ -n "$gpus" ] || gpus=0
IFS=, read -r -a gpu_list <<< "$gpus"
ngpu=${#gpu_list[@]}
seed=${NESTSIM_VALIDATION_SEED:-1}
T0=$(date +%s)
# The jobs: "GPU EXE FILTER SEED LOG", the GPUs round robin.
jobs=$TOP/jobs.txt
: > "$jobs"
i=0
for exe in "$BUILD"/tests/validation/validation_*; do
  [ -x "$exe" ] || continue
  name=$(basename "$exe")
  while IFS= read -r tc; do
    for s in "$seed" $((seed + 1)); do
      log="$TOP/${name}_$(echo "$tc" | tr -c 'A-Za-z0-9' '_' | cut -c13-40)_$s.log"
      filter=${tc//,/?}  # doctest's filters split at commas; '?' matches the comma instead
      printf '%s\t%s\t%s\t%s\t%s\n' "${gpu_list[$((i % ngpu))]}" "$exe" "$filter" "$s" "$log" >> "$jobs"
      i=$((i + 1))
    done
  done < <("$exe" --list-test-cases --no-version 2>/dev/null | grep '^validation:')
done
echo "gpu_validation: $i processes on $ngpu GPU(s) ($gpus), $PER_GPU at a time per GPU"
if [ -n "${DRY:-}" ]; then cat "$jobs"; exit 0; fi
run_one() {  # GPU EXE FILTER SEED LOG
  CUDA_VISIBLE_DEVICES=$1 OMP_NUM_THREADS=1 NESTSIM_VALIDATION_SEEDS=1 NESTSIM_VALIDATION_SEED=$4 \
    "$2" --test-case="$3" > "$5" 2>&1 || echo "$5" >> "$TOP/failed.txt"
}
export -f run_one
export TOP
: > "$TOP/failed.txt"
# One queue per GPU, PER_GPU processes each.
pids=()
for g in "${gpu_list[@]}"; do
  awk -F'\t' -v g="$g" '$1 == g' "$jobs" |
    xargs -d '\n' -P "$PER_GPU" -I{} bash -c 'IFS=$'"'"'\t'"'"' read -r a b c d e <<< "$1"; run_one "$a" "$b" "$c" "$d" "$e"' _ {} &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
failed=$(grep -c . "$TOP/failed.txt")
echo "gpu_validation: $(( $(date +%s) - T0 )) s, $failed process(es) failed"
sed 's/^/  failed: /' "$TOP/failed.txt"
if command -v python3 > /dev/null; then
  python3 tools/validation_table.py "$TOP"/*.log > "$TOP/table.md" 2>&1
  grep -E "fail" "$TOP/table.md" | head -20
fi
[ "$failed" -eq 0 ]
