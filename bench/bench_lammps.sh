#!/usr/bin/env bash
# nestsim's broad phase against LAMMPS's neighbor lists on the CPU (the brief's "on par
# with LAMMPS" goal; docs/performance.md, "Against LAMMPS's neighbour lists on the CPU"). Same scenes, same cores:
#
#   bench/bench_lammps.sh [SIZES] [PHIS] [RANKS] > lammps.csv
#     SIZES  comma list of body counts (default 1e4,1e5)
#     PHIS   comma list of volume fractions (default 0.1,0.3)
#     RANKS  LAMMPS MPI ranks = nestsim OpenMP threads (default 2)
#
# Needs Debian's `lammps` (lmp, with the GRANULAR package) and `mpirun`; without them it
# says so and exits 0, writing nothing (an optional peer, as in bench_peers). Needs
# build/cpu (./build.sh) for make_scene and nestsim.
#
# What is compared. LAMMPS (atom_style sphere, pair_style gran/hooke, neighbor 0.0 bin,
# rebuilt every step: neigh_modify every 1 delay 0 check no, timestep 0) builds the list
# of the pairs whose distance is below r_i + r_j: the solid-sphere intersections (SSX,
# the HSX paper's equation 4). Its "Neigh" time per build is the broad phase; "Pair" is
# the contact forces over the list, "Comm" the ghost exchange that each rebuild needs.
# LAMMPS's "Total # of neighbors" must equal nestsim's SSX pair count (checked: the
# script fails otherwise). nestsim: `nestsim pairs SCENE --solid --bench K` (SSX through
# the HSX grid) and without --solid (HSX), float and double, OMP_NUM_THREADS=RANKS.
# The bin style was LAMMPS's fastest on these polydisperse scenes (exponential radii,
# one atom type): multi with size collections and multi/old were 1.5-30x slower at 1e4.
set -euo pipefail
cd "$(dirname "$0")/.."
SIZES=${1:-1e4,1e5}
PHIS=${2:-0.1,0.3}
RANKS=${3:-2}
if ! command -v lmp > /dev/null || ! command -v mpirun > /dev/null; then
  echo "bench_lammps: LAMMPS (lmp) or mpirun not installed (apt-get install lammps): skipped" >&2
  exit 0
fi
MAKE_SCENE=build/cpu/examples/make_scene
NESTSIM=build/cpu/nestsim
for tool in "$MAKE_SCENE" "$NESTSIM"; do
  [ -x "$tool" ] || { echo "bench_lammps: $tool missing: run ./build.sh first" >&2; exit 1; }
done
MPIRUN=(mpirun -np "$RANKS")
[ "$(id -u)" = 0 ] && MPIRUN=(mpirun --allow-run-as-root -np "$RANKS")
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# A nestsim scene CSV (x,y,z,radius,thickness) -> a LAMMPS data file (atom_style sphere:
# id type diameter density x y z), in an open box around the bodies.
to_data() {
  awk -F, 'NR > 1 {
      n++; x[n] = $1; y[n] = $2; z[n] = $3; r[n] = $4
      if (n == 1 || $1 < x0) x0 = $1; if (n == 1 || $1 > x1) x1 = $1
      if (n == 1 || $2 < y0) y0 = $2; if (n == 1 || $2 > y1) y1 = $2
      if (n == 1 || $3 < z0) z0 = $3; if (n == 1 || $3 > z1) z1 = $3
      if ($4 > rmax) rmax = $4
    }
    END {
      m = rmax + 1
      printf "LAMMPS data file from nestsim make_scene\n\n%d atoms\n1 atom types\n\n", n
      printf "%.9g %.9g xlo xhi\n%.9g %.9g ylo yhi\n%.9g %.9g zlo zhi\n\nAtoms # sphere\n\n",
             x0 - m, x1 + m, y0 - m, y1 + m, z0 - m, z1 + m
      for (i = 1; i <= n; i++) printf "%d 1 %.9g 1 %.9g %.9g %.9g\n", i, 2 * r[i], x[i], y[i], z[i]
    }' "$1"
}

cat > "$WORK/in.lmp" << 'EOF'
units lj
atom_style sphere
boundary f f f
comm_modify vel yes
read_data ${data}
pair_style gran/hooke 2000.0 NULL 50.0 NULL 0.5 0
pair_coeff * *
neighbor 0.0 bin
neigh_modify delay 0 every 1 check no
timestep 0.0
fix 1 all nve/sphere
thermo ${steps}
run ${steps}
EOF

# The avg column of a section of LAMMPS's MPI timing breakdown (seconds over the run).
section() { awk -v s="$1" '$1 == s && $2 == "|" {print $5}' "$2"; }
median_ms() { sed -n 's/.*median_ms=\([0-9.e+-]*\).*/\1/p'; }
pairs_of() { sed -n 's/.*pairs=\([0-9]*\).*/\1/p'; }

echo "# bench_lammps: LAMMPS $(lmp -h | sed -n 's/^Large-scale Atomic.* Simulator - //p' | head -1), $RANKS MPI ranks vs $RANKS OpenMP threads, $(nproc) cores, $(date -u +%F)"
echo "scene,n,phi,lammps_neigh_ms,lammps_pair_ms,lammps_comm_ms,lammps_pairs,ssx_double_ms,ssx_float_ms,hsx_double_ms,hsx_float_ms,ssx_pairs,hsx_pairs"
IFS=, read -r -a sizes <<< "$SIZES"
IFS=, read -r -a phis <<< "$PHIS"
for size in "${sizes[@]}"; do
  n=$(awk -v s="$size" 'BEGIN {printf "%d", s}')
  steps=10
  [ "$n" -ge 1000000 ] && steps=3
  for phi in "${phis[@]}"; do
    "$MAKE_SCENE" exponential "$n" "$phi" > "$WORK/scene.csv"
    to_data "$WORK/scene.csv" > "$WORK/scene.data"
    (cd "$WORK" && "${MPIRUN[@]}" lmp -in in.lmp -var data scene.data -var steps "$steps" \
       -log log.lammps -screen none > /dev/null 2>&1) ||
      { echo "bench_lammps: lmp failed on n=$n phi=$phi (log: $WORK/log.lammps)" >&2; exit 1; }
    log=$WORK/log.lammps
    builds=$(sed -n 's/^Neighbor list builds = \([0-9]*\)/\1/p' "$log")
    lpairs=$(sed -n 's/^Total # of neighbors = \([0-9]*\)/\1/p' "$log")
    neigh=$(awk -v t="$(section Neigh "$log")" -v b="$builds" 'BEGIN {printf "%.3f", 1000 * t / b}')
    pair=$(awk -v t="$(section Pair "$log")" -v s="$steps" 'BEGIN {printf "%.3f", 1000 * t / s}')
    comm=$(awk -v t="$(section Comm "$log")" -v s="$steps" 'BEGIN {printf "%.3f", 1000 * t / s}')
    bench() { OMP_NUM_THREADS=$RANKS "$NESTSIM" pairs "$WORK/scene.csv" --bench 10 "$@"; }
    ssx_d=$(bench --solid); ssx_f=$(bench --solid --precision float)
    hsx_d=$(bench); hsx_f=$(bench --precision float)
    ssx_pairs=$(pairs_of <<< "$ssx_d")
    if [ "$ssx_pairs" != "$lpairs" ]; then
      echo "bench_lammps: n=$n phi=$phi: LAMMPS lists $lpairs pairs, nestsim SSX $ssx_pairs" >&2
      exit 1
    fi
    echo "exponential,$n,$phi,$neigh,$pair,$comm,$lpairs,$(median_ms <<< "$ssx_d"),$(median_ms <<< "$ssx_f"),$(median_ms <<< "$hsx_d"),$(median_ms <<< "$hsx_f"),$ssx_pairs,$(pairs_of <<< "$hsx_d")"
  done
done
