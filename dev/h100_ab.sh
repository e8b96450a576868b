#!/bin/bash
# One device call that builds this tree for CUDA, runs the broad-phase tests and times
# bench_hsx against a baseline binary, interleaved (docs/perf-log.md, "Measuring on the
# H100"). Run it on the GPU machine from the repository root; where that machine lacks
# the build's Debian packages, carry them under .gpu/ with an unpack-deps.sh that the
# script sources:
#
#   bash dev/h100_ab.sh [BASELINE_BINARY] [SIZES] [TUNE_B]
#
# BASELINE_BINARY: a bench_hsx built from the commit to compare with (built here, e.g.
#   `git worktree add /tmp/old REV && cd /tmp/old && cmake --preset cuda &&
#   cmake --build --preset cuda -j2 --target bench_hsx`, ~4 minutes on 2 cores, and
#   copied under .gpu/); none: only this tree.
# SIZES: bench_hsx --sizes (default 1e5,1e6,1e7).
# TUNE_B: "FIELD=VALUE ..." for a third series of this tree's binary, each passed as
#   bench_hsx --tune FIELD=VALUE (a field of broadphase/include/nestsim/tuning.h, e.g.
#   hsx.rim_per_small=1): a tuning parameter's A/B in the same build.
# Writes logs and the per-kernel times of the two pair walks at 1e6 (ncu) into
# $OUT/logs.tgz.
set -u
OLD=${1:-}
SIZES=${2:-1e5,1e6,1e7}
TUNE_B=${3:-}
# Logs go to $OUT/logs, packed into $OUT/logs.tgz at the end (the device tool brings
# back only a few files per call).
TOP=${OUT:-/tmp/h100_ab}
OUT=$TOP/logs
mkdir -p "$OUT"
[ -f .gpu/unpack-deps.sh ] && eval "$(bash .gpu/unpack-deps.sh)"
T0=$(date +%s)
cmake --preset cuda > "$OUT/configure.log" 2>&1
if ! cmake --build --preset cuda -j16 --target bench_hsx test_broadphase test_broadphase_paths test_solid_grids \
    > "$OUT/build.log" 2>&1; then
  grep -E "error" "$OUT/build.log" | head -40
  exit 1
fi
echo "build $(( $(date +%s) - T0 )) s; warnings: $(grep -c warning "$OUT/build.log")"
(cd build/cuda/tests &&
 for t in test_broadphase test_broadphase_paths test_solid_grids; do
   ./$t > "$OUT/$t.log" 2>&1
   echo "$t rc=$? $(grep assertions "$OUT/$t.log")"
 done)
NEW=build/cuda/bench/bench_hsx
series() {  # name, binary, FIELD=VALUE...
  local name=$1 bin=$2 tune=()
  shift 2
  for t in "$@"; do tune+=(--tune "$t"); done
  timeout 120 "$bin" --sizes "$SIZES" --repeats 10 --brute-max-n 0 "${tune[@]}" \
    > "$OUT/$name.log" 2>&1
  # median:min ms per scene and size, in bench_hsx's order
  echo "[$name] $(grep -E '^(exponential|concentric)' "$OUT/$name.log" | awk '{printf "%s:%s ", $5, $6}')"
}
for rep in 1 2; do
  [ -n "$OLD" ] && series "old$rep" "$OLD"
  series "new$rep" "$NEW"
  # shellcheck disable=SC2086
  [ -n "$TUNE_B" ] && series "tuneb$rep" "$NEW" $TUNE_B
done
# The pair walks run in detail::bounded_items or warp_tested_items (the functor is a template argument, so
# -k must name the launcher); per find(): small-small, then large-small.
timeout 120 ncu --clock-control none --cache-control none -k "regex:bounded_items|warp_tested_items" \
  --metrics gpu__time_duration.sum,smsp__inst_executed.sum --csv --print-units base \
  --log-file "$OUT/ncu_walks_1e6.csv" "$NEW" --sizes 1e6 --repeats 1 --brute-max-n 0 \
  > /dev/null 2>&1
echo "ncu rc=$? (each walk's time and instructions: $OUT/ncu_walks_1e6.csv)"
echo "all $(( $(date +%s) - T0 )) s"
tar -czf "$TOP/logs.tgz" -C "$TOP" logs && rm -rf "$OUT"
