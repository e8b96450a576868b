#!/bin/bash
# Two builds of nestsim compared bit for bit: trajectories and pair lists.
#
#   dev/compare_trajectories.sh BASE_BUILD HEAD_BUILD OUTDIR
#
# BASE_BUILD, HEAD_BUILD: the build trees of the two commits (the `nestsim` binary is
# looked up inside; a path to the binary itself works too), both of one backend (two
# CPU builds, or two CUDA builds on one GPU). Both runs of a comparison get the same
# inputs, this checkout's models/ and examples/scenes/, and the same seed:
#   - `nestsim run` of models/default.yaml, models/large_step.yaml (its first steps
#     only), models/receptor_recycling.yaml and models/receptor_cycle_physiological.yaml
#     (its first steps; hard contacts at 40 us): every dataset of the two trajectories
#     compared (type, shape, bytes; h5py), attributes listed where they differ;
#   - `nestsim pairs` on examples/scenes/*.csv and, when HEAD_BUILD has make_scene, on
#     generated scenes (exponential, concentric, nested), with several option sets:
#     the pair files compared byte for byte.
# Writes the trajectories, pair files and logs under OUTDIR/{base,head}, one line per
# comparison on stdout and in OUTDIR/summary.txt. Exit status 0 when everything is
# equal, 1 when something differs or a run failed (its last message is shown). An input
# that the base refuses as invalid (exit 2: a model key newer than the base) while the
# head runs it is reported as not compared, and is no failure.
#
# Environment (optional): SEED (11), STEPS_DEFAULT (3000), STEPS_LARGE (2000),
# STEPS_RECEPTOR (3000), STEPS_PHYSIOLOGICAL (2000), SCENE_N (100000, bodies of the
# generated exponential scenes), NESTED_N (20000: at 1e5 nested vesicles `nestsim pairs`
# refuses a list whose upper bound exceeds the machine's memory), PYTHON
# (/usr/bin/python3, with numpy and h5py).
# OMP_NUM_THREADS and CUDA_VISIBLE_DEVICES apply to both builds alike.
set -u
if [ $# -ne 3 ]; then
  sed -n '2,/^set -u/p' "$0" | sed '$d'
  exit 2
fi
REPO=$(cd "$(dirname "$0")/.." && pwd)
OUTDIR=$3
PYTHON=${PYTHON:-/usr/bin/python3}
SEED=${SEED:-11}
SCENE_N=${SCENE_N:-100000}
NESTED_N=${NESTED_N:-20000}

find_binary() {  # $1: a build tree or the binary; prints the nestsim binary's path
  if [ -f "$1" ] && [ -x "$1" ]; then echo "$1"; return 0; fi
  local b
  for b in "$1/app/nestsim" "$1/simulator/nestsim" "$1/nestsim" "$1/bin/nestsim"; do
    [ -x "$b" ] && [ -f "$b" ] && { echo "$b"; return 0; }
  done
  b=$(find "$1" -maxdepth 3 -type f -name nestsim -perm -u+x 2>/dev/null | head -1)
  [ -n "$b" ] && { echo "$b"; return 0; }
  return 1
}
BASE=$(find_binary "$1") || { echo "no nestsim binary in $1" >&2; exit 2; }
HEAD=$(find_binary "$2") || { echo "no nestsim binary in $2" >&2; exit 2; }
MAKE_SCENE=$(find "$(dirname "$HEAD")/.." "$2" -maxdepth 3 -type f -name make_scene -perm -u+x 2>/dev/null | head -1)
"$PYTHON" -c "import h5py, numpy" 2>/dev/null || { echo "$PYTHON lacks h5py or numpy" >&2; exit 2; }

mkdir -p "$OUTDIR/base" "$OUTDIR/head" "$OUTDIR/scenes" || exit 2
SUMMARY=$OUTDIR/summary.txt
: > "$SUMMARY"
FAILED=0
say() { echo "$*" | tee -a "$SUMMARY"; }
say "base: $BASE"
say "head: $HEAD"
say "inputs: $REPO/models, $REPO/examples/scenes; seed $SEED; OMP_NUM_THREADS=${OMP_NUM_THREADS:-unset}"

# Every dataset of two HDF5 files, compared by type, shape and bytes; attributes too,
# reported apart (a program's version string may differ where the physics does not).
COMPARE_H5=$(cat <<'EOF'
import sys
import h5py
import numpy as np

def objects(f):
    found = {"/": f}
    f.visititems(lambda name, obj: found.__setitem__("/" + name, obj))
    return found

def same_value(x, y):
    x, y = np.asarray(x), np.asarray(y)
    if x.dtype != y.dtype or x.shape != y.shape:
        return False
    if x.dtype.kind in "OUS":
        return x.tolist() == y.tolist()
    return x.tobytes() == y.tobytes()

def describe(x, y):
    x, y = np.atleast_1d(x), np.atleast_1d(y)
    if x.dtype != y.dtype or x.shape != y.shape:
        return f"{x.dtype}{x.shape} against {y.dtype}{y.shape}"
    if x.dtype.kind not in "biuf" or x.size == 0:
        return "values differ"
    bad = x.view(np.uint8).reshape(x.shape + (-1,)) != y.view(np.uint8).reshape(y.shape + (-1,))
    bad = bad.any(axis=-1) if bad.ndim else bad
    where = np.argwhere(bad)
    worst = np.max(np.abs(x.astype(np.float64) - y.astype(np.float64)))
    return (f"{int(bad.sum())} of {x.size} elements differ, the first at "
            f"{tuple(int(i) for i in where[0])}, largest difference {worst:.3g}")

with h5py.File(sys.argv[1], "r") as fa, h5py.File(sys.argv[2], "r") as fb:
    a, b = objects(fa), objects(fb)
    datasets = differ = 0
    for name in sorted(set(a) | set(b)):
        if name not in a or name not in b:
            print(f"  only in {'base' if name in a else 'head'}: {name}")
            differ += 1
            continue
        oa, ob = a[name], b[name]
        if isinstance(oa, h5py.Dataset) != isinstance(ob, h5py.Dataset):
            print(f"  {name}: a dataset in one file, a group in the other")
            differ += 1
            continue
        if isinstance(oa, h5py.Dataset):
            datasets += 1
            x, y = oa[()], ob[()]
            if not same_value(x, y):
                print(f"  dataset {name}: {describe(np.asarray(x), np.asarray(y))}")
                differ += 1
        for key in sorted(set(oa.attrs) | set(ob.attrs)):
            if key not in oa.attrs or key not in ob.attrs:
                print(f"  (attribute {name} {key} only in {'base' if key in oa.attrs else 'head'})")
            elif not same_value(oa.attrs[key], ob.attrs[key]):
                print(f"  (attribute {name} {key}: {oa.attrs[key]!r} against {ob.attrs[key]!r})")
    step = "/particles/bodies/position/step"
    frames = f", {len(fb[step])} frames" if step in fb else ""
    print(f"  {datasets} datasets, {differ} differ{frames}")
    sys.exit(1 if differ else 0)
EOF
)

run_both() {  # $1: label; the rest: the arguments of nestsim, with @OUT@ for the output's stem
  local label=$1; shift
  local v bin status t0 base_status=0
  for v in base head; do
    [ $v = base ] && bin=$BASE || bin=$HEAD
    t0=$(date +%s.%N)
    "$bin" "${@//@OUT@/$OUTDIR/$v/$label}" > "$OUTDIR/$v/$label.log" 2>&1
    status=$?
    echo "exit $status, $(awk "BEGIN { printf \"%.1f\", $(date +%s.%N) - $t0 }") s" >> "$OUTDIR/$v/$label.log"
    [ $v = base ] && base_status=$status
    if [ $status -ne 0 ] && [ $v = head ]; then
      say "$label: head FAILED (exit $status): $(grep -v '^exit ' "$OUTDIR/head/$label.log" | tail -1)"
      FAILED=1
      return 1
    fi
  done
  if [ "$base_status" -eq 2 ]; then
    say "$label: not compared, the base refuses the input: $(grep -v '^exit ' "$OUTDIR/base/$label.log" | tail -1)"
    return 1
  elif [ "$base_status" -ne 0 ]; then
    say "$label: base FAILED (exit $base_status): $(grep -v '^exit ' "$OUTDIR/base/$label.log" | tail -1)"
    FAILED=1
    return 1
  fi
  return 0
}

# Trajectories.
for spec in "default:models/default.yaml:${STEPS_DEFAULT:-3000}" \
            "large_step:models/large_step.yaml:${STEPS_LARGE:-2000}" \
            "receptor_recycling:models/receptor_recycling.yaml:${STEPS_RECEPTOR:-3000}" \
            "physiological:models/receptor_cycle_physiological.yaml:${STEPS_PHYSIOLOGICAL:-2000}"; do
  IFS=: read -r label model steps <<< "$spec"
  [ -f "$REPO/$model" ] || { say "run $label: $model missing in $REPO, skipped"; continue; }
  rm -f "$OUTDIR"/{base,head}/"$label".h5
  run_both "run_$label" run "$REPO/$model" --steps "$steps" --seed "$SEED" -o "@OUT@.h5" || continue
  out=$("$PYTHON" -c "$COMPARE_H5" "$OUTDIR/base/run_$label.h5" "$OUTDIR/head/run_$label.h5" 2>&1)
  status=$?
  if [ $status -eq 0 ]; then
    say "trajectory $label, $steps steps: identical ($(echo "$out" | tail -1 | sed 's/^ *//'))"
    echo "$out" | grep "(attribute" | head -10 | tee -a "$SUMMARY"
  else
    say "trajectory $label, $steps steps: DIFFERENT"
    echo "$out" | head -40 | tee -a "$SUMMARY"
    FAILED=1
  fi
done

# Pair lists.
scenes=("$REPO"/examples/scenes/*.csv)
if [ -n "$MAKE_SCENE" ]; then
  for gen in "exponential $SCENE_N 0.1 7" "exponential $SCENE_N 0.3 7" "concentric 3000" \
             "nested $NESTED_N"; do
    name=$(echo "$gen" | awk '{print $1 "_" $2 ($3 == "" ? "" : "_" $3)}' | tr -d .)
    # shellcheck disable=SC2086
    if "$MAKE_SCENE" $gen > "$OUTDIR/scenes/$name.csv" 2>/dev/null; then
      scenes+=("$OUTDIR/scenes/$name.csv")
    else
      say "make_scene $gen failed, scene skipped"
    fi
  done
else
  say "no make_scene beside $HEAD: the example scenes only"
fi
options=("" "--precision float" "--solid" "--skin 0.5" "--any-order" "--grid-sort counting"
         "--grid-sort radix" "--hsx-small-n 0")
for scene in "${scenes[@]}"; do
  s=$(basename "$scene" .csv)
  opts=("${options[@]}")
  [ "$s" = cell ] && opts+=("--box 2000,2000,2000 --periodic")
  for o in "${opts[@]}"; do
    label="pairs_${s}$(echo "$o" | tr -c 'a-zA-Z0-9.\n' _)"
    # shellcheck disable=SC2086
    run_both "$label" pairs "$scene" $o -o "@OUT@.csv" || continue
    if cmp -s "$OUTDIR/base/$label.csv" "$OUTDIR/head/$label.csv"; then
      say "pairs $s ${o:-(defaults)}: identical ($(($(wc -l < "$OUTDIR/head/$label.csv") - 1)) pairs)"
    else
      say "pairs $s ${o:-(defaults)}: DIFFERENT ($(wc -l < "$OUTDIR/base/$label.csv") against $(wc -l < "$OUTDIR/head/$label.csv") lines)"
      FAILED=1
    fi
  done
done

if [ $FAILED -eq 0 ]; then say "ALL IDENTICAL"; else say "DIFFERENCES OR FAILURES (above)"; fi
exit $FAILED
