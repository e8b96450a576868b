#!/bin/bash
# The CPU backend on 2 cores, idle and shared with one other busy program: each command
# of each nestsim binary given, timed once on idle cores and once beside a busy loop
# started first on the same cores; a table of both and their ratio. From a checkout:
#
#   bash bench/cpu_shared.sh BASELINE/nestsim build/cpu/nestsim [...]
#
# Commands: `nestsim run` of the default model (models/default.yaml; STEPS steps, 12000
# by default, as in issue 36; the model's own 60000 take the baseline minutes more),
# `nestsim analyze OUT.h5 --csv DIR` of the first binary's trajectory, and
# `nestsim pairs examples/scenes/cell.csv --bench 20` (its median, in ms). The command
# and the busy loop are pinned to CORES (default 0,1) with taskset where it and 2 cores
# exist. OpenMP's environment (OMP_NUM_THREADS, OMP_WAIT_POLICY, GOMP_SPINCOUNT) is
# unset: a new user's defaults. A command that runs past LIMIT seconds (default 100) is
# stopped and shown as >LIMIT. About 2-4 minutes for two binaries.
set -u
[ $# -ge 1 ] || { sed -n '2,16p' "$0"; exit 2; }
ROOT=$(cd "$(dirname "$0")/.." && pwd)
STEPS=${STEPS:-12000}
LIMIT=${LIMIT:-100}
CORES=${CORES:-0,1}
WORK=$(mktemp -d /tmp/cpu_shared.XXXXXX)
unset OMP_NUM_THREADS OMP_WAIT_POLICY GOMP_SPINCOUNT OMP_DYNAMIC
for b in "$@"; do
  [ -x "$b" ] || { echo "cpu_shared.sh: '$b' is not an executable" >&2; exit 2; }
done

PIN=()
if command -v taskset > /dev/null && [ "$(nproc --all)" -ge 2 ]; then PIN=(taskset -c "$CORES"); fi

BUSY=""
busy_start() {
  "${PIN[@]}" bash -c 'while :; do :; done' &
  BUSY=$!
  sleep 0.5  # the busy loop has its core before the command starts
}
busy_stop() {
  [ -n "$BUSY" ] && kill "$BUSY" 2> /dev/null && wait "$BUSY" 2> /dev/null
  BUSY=""
}
trap 'busy_stop; rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM

# Seconds of wall time of "$@" (pinned), or >LIMIT; its output in $WORK/last.txt.
timed() {
  local t0 t1 rc
  rm -rf "$WORK/csv"
  t0=$(date +%s.%N)
  timeout "$LIMIT" "${PIN[@]}" "$@" > "$WORK/last.txt" 2>&1
  rc=$?
  t1=$(date +%s.%N)
  if [ $rc -ne 0 ]; then
    if [ $rc -eq 124 ]; then echo ">$LIMIT"; else echo "failed($rc)"; fi
    return
  fi
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }'
}
# The median of `pairs --bench` from $WORK/last.txt, else what timed said.
median_ms() {
  local m
  m=$(sed -n 's/^median_ms=\([0-9.]*\) .*/\1/p' "$WORK/last.txt")
  echo "${m:-$1}"
}
ratio() {
  awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b ~ /^[0-9.]+$/) printf "%.2f", b / a; else print "-" }'
}

measure() {  # measure NAME BINARY KIND ARGS...: one row of the table
  local name=$1 bin=$2 kind=$3 idle loaded
  shift 3
  idle=$(timed "$bin" "$@")
  [ "$kind" = pairs ] && idle=$(median_ms "$idle")
  busy_start
  loaded=$(timed "$bin" "$@")
  [ "$kind" = pairs ] && loaded=$(median_ms "$loaded")
  busy_stop
  printf '%-34s %-40s %10s %10s %7s\n' "$name" "$bin" "$idle" "$loaded" "$(ratio "$idle" "$loaded")"
}

echo "cpu_shared.sh: $(nproc --all) cores, pinned to ${PIN[*]:-nothing}; $STEPS steps; $(date -u)"
printf '%-34s %-40s %10s %10s %7s\n' command binary idle loaded ratio
TRAJ=$WORK/traj.h5
i=0
for b in "$@"; do
  out=$WORK/run$i.h5
  measure "run default ($STEPS steps), s" "$b" run run "$ROOT/models/default.yaml" \
    --steps "$STEPS" -o "$out" --force
  [ -f "$TRAJ" ] || cp "$out" "$TRAJ" 2> /dev/null
  i=$((i + 1))
done
for b in "$@"; do
  measure "analyze out.h5 --csv, s" "$b" analyze analyze "$TRAJ" --csv "$WORK/csv"
done
for b in "$@"; do
  measure "pairs cell.csv --bench 20, ms" "$b" pairs pairs "$ROOT/examples/scenes/cell.csv" \
    --bench 20
done
