#!/usr/bin/env bash
# nestsim's Brownian dynamics against LAMMPS on the CPU (issue 36, "The CPU against
# LAMMPS"): a crowded protein fluid, the same bodies, force, density, time step, skin and
# number of steps, on the same cores, in one script:
#
#   bench/bench_lammps_bd.sh [STEPS] [REPEATS] [RANKS] > lammps_bd.csv
#     STEPS    steps of every run (default 400)
#     REPEATS  rounds; each round runs every code once, back to back (default 3)
#     RANKS    LAMMPS MPI ranks = nestsim OpenMP threads (default 2)
#   NESTSIM=path     the nestsim to measure (default build/cpu/nestsim)
#   BASELINE=path    optionally a second nestsim, measured in the same rounds
#
# Needs Debian's `lmp` and `mpirun` (apt-get install lammps); without them it says so and
# exits 0, writing nothing (an optional peer, as bench_lammps.sh). Needs Debian's python3
# with h5py (build.sh installs it) to read the placement.
#
# The fluid: 100,000 proteins of radius 2.5 nm (D = 10 nm^2/us) at volume fraction 0.298,
# placed without overlap by nestsim (bench/models/crowded_placement.yaml), harmonic
# repulsion F = repulsion x overlap below the sum of the radii (force_kernels.cuh
# pair_force; repulsion 10 kT/nm^2), dt = 0.5 ns (contact step 0.1, the largest accurate
# dt). Runs, each from the same positions:
#   nestsim off  periodic box of 280 nm, no compartment (the positions as `at:` entries)
#   nestsim on   bench/models/crowded_cell.yaml: the same number of proteins at the same
#                density in the lumen of an immobile cell (every protein has a parent;
#                the membrane is a hard wall), placed by nestsim
#   LAMMPS       the "off" box and positions: units lj with length nm, energy kT, time
#                us; pair_style table (linear, 2000 points) holding F = k (r_c - r) with
#                k = repulsion, r_c = 5 nm: the same force law (Debian's LAMMPS 20220106
#                has neither harmonic/cut nor fix brownian; gran/hooke would add the
#                velocity and shear terms of a granular contact); fix langevin + fix nve
#                with damp = 2 dt and mass = kT damp / D, so that the long-time D is
#                nestsim's and velocities forget themselves within two steps (near the
#                overdamped limit, so the lists age as nestsim's do); neighbor skin
#                32 sqrt(2 D dt) = 3.2 nm (nestsim's default skin, simulation.h), checked
#                every step (neigh_modify every 1 delay 0 check yes, nestsim's policy).
# Work per step is not the same algorithm: nestsim's step is a stochastic Heun step (two
# force evaluations, simulation.cu), LAMMPS's velocity Verlet one. Both are timed over the
# stepping loop (nestsim's run line, LAMMPS's "Loop time"), without setup.
#
# Output: one CSV row per run (code,nesting,round,body_steps_per_s,seconds,list_builds,
# and each code's phase times), then '#' lines with the medians and the ratios to LAMMPS.
set -euo pipefail
cd "$(dirname "$0")/.."
STEPS=${1:-400}
REPEATS=${2:-3}
RANKS=${3:-2}
NESTSIM=${NESTSIM:-build/cpu/nestsim}
BASELINE=${BASELINE:-}
PYTHON=/usr/bin/python3
if ! command -v lmp > /dev/null || ! command -v mpirun > /dev/null; then
  echo "bench_lammps_bd: LAMMPS (lmp) or mpirun not installed (apt-get install lammps): skipped" >&2
  exit 0
fi
for tool in "$NESTSIM" $BASELINE; do
  [ -x "$tool" ] || { echo "bench_lammps_bd: $tool missing: run ./build.sh first" >&2; exit 1; }
done
MPIRUN=(mpirun -np "$RANKS")
[ "$(id -u)" = 0 ] && MPIRUN=(mpirun --allow-run-as-root -np "$RANKS")
MODELS=$PWD/bench/models
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# The fluid's constants, given to both codes (nestsim's models hold the same values).
RADIUS=2.5 DIFFUSION=10 REPULSION=10 DT=0.0005 BOX=280
SKIN=$(awk -v d=$DIFFUSION -v t=$DT 'BEGIN {printf "%.9g", 32 * sqrt(2 * d * t)}')
DAMP=$(awk -v t=$DT 'BEGIN {printf "%.9g", 2 * t}')
MASS=$(awk -v t=$DAMP -v d=$DIFFUSION 'BEGIN {printf "%.9g", t / d}')
SETS=(--set "simulation.dt=$DT" --set "interactions.repulsion=$REPULSION"
      --set "species.protein.diffusion=$DIFFUSION" --set "species.protein.radius=$RADIUS")

# The placement: nestsim places the proteins; their positions become the "off" model (no
# compartment) and LAMMPS's data file.
"$NESTSIM" run "$MODELS/crowded_placement.yaml" -o "$WORK/placement.h5" --force "${SETS[@]}" \
  > /dev/null 2>&1 || { echo "bench_lammps_bd: placement failed" >&2; exit 1; }
"$PYTHON" - "$WORK/placement.h5" "$WORK/positions.txt" << 'EOF'
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "r") as f:
    b = f["particles/bodies"]
    names = [n.decode() if isinstance(n, bytes) else n for n in f["parameters/species_names"][()]]
    ids, species = b["id/value"][0], b["species/value"][0]
    keep = (ids >= 0) & (species == names.index("protein"))
    x = b["position/value"][0][keep][np.argsort(ids[keep])]
np.savetxt(sys.argv[2], x, fmt="%.17g")
EOF
N=$(wc -l < "$WORK/positions.txt")
sed -n '/^nestsim:/,/^species:/p' "$MODELS/crowded_placement.yaml" |
  sed -e '/^compartments:/,/^species:/{/^species:/!d}' > "$WORK/off.yaml"
cat >> "$WORK/off.yaml" << EOF
  protein: {radius: $RADIUS, diffusion: $DIFFUSION}
interactions: {repulsion: $REPULSION}
place:
EOF
awk '{printf "  - {species: protein, at: [%s, %s, %s]}\n", $1, $2, $3}' "$WORK/positions.txt" \
  >> "$WORK/off.yaml"
awk -v n="$N" -v L=$BOX -v m="$MASS" '
  BEGIN {printf "LAMMPS data file from nestsim placement\n\n%d atoms\n1 atom types\n\n", n
         printf "0 %s xlo xhi\n0 %s ylo yhi\n0 %s zlo zhi\n\nMasses\n\n1 %s\n\nAtoms # atomic\n\n", L, L, L, m}
  {printf "%d 1 %s %s %s\n", NR, $1, $2, $3}' "$WORK/positions.txt" > "$WORK/fluid.data"
awk -v k=$REPULSION -v rc="$(awk -v r=$RADIUS 'BEGIN {print 2 * r}')" 'BEGIN {
    n = 2000; lo = 0.01
    printf "# harmonic repulsion: E = k (rc - r)^2 / 2, F = k (rc - r)\n\nHARMONIC\nN %d R %g %g\n\n", n, lo, rc
    for (i = 1; i <= n; i++) {
      r = lo + (rc - lo) * (i - 1) / (n - 1)
      printf "%d %.12g %.12g %.12g\n", i, r, 0.5 * k * (rc - r)^2, k * (rc - r)
    }
  }' > "$WORK/harmonic.table"
cat > "$WORK/in.lmp" << EOF
units lj
atom_style atomic
boundary p p p
read_data fluid.data
pair_style table linear 2000
pair_coeff 1 1 harmonic.table HARMONIC $(awk -v r=$RADIUS 'BEGIN {print 2 * r}')
neighbor $SKIN bin
neigh_modify every 1 delay 0 check yes
fix 1 all nve
fix 2 all langevin 1.0 1.0 $DAMP 4928459
compute contacts all coord/atom cutoff $(awk -v r=$RADIUS 'BEGIN {print 2 * r}')
compute contact_sum all reduce sum c_contacts
thermo_style custom step temp pe c_contact_sum
thermo_modify norm no
timestep $DT
run $STEPS
EOF

# The avg column of a section of LAMMPS's MPI timing breakdown (seconds over the run).
# ("Other" has only the avg column.)
section() { awk -v s="$1" '$1 == s && $2 == "|" {print $1 == "Other" ? $4 : $5}' "$2"; }
# One LAMMPS run: rate, seconds, builds, Pair/Neigh/Comm/Modify/Other seconds, contacts.
run_lammps() {
  (cd "$WORK" && "${MPIRUN[@]}" lmp -in in.lmp -log log.lammps -screen none > /dev/null 2>&1) ||
    { echo "bench_lammps_bd: lmp failed (log: $WORK/log.lammps)" >&2; exit 1; }
  local log=$WORK/log.lammps loop
  loop=$(sed -n 's/^Loop time of \([0-9.e+-]*\) .*/\1/p' "$log")
  local contacts
  contacts=$(awk '$1 == "Step" {h = 1; next} h && $1 ~ /^[0-9]+$/ {c = $4} /^Loop time/ {h = 0} END {print c / 2}' "$log")
  echo "$(awk -v n="$N" -v s="$STEPS" -v t="$loop" 'BEGIN {printf "%.4g", n * s / t}'),$loop,$(sed -n 's/^Neighbor list builds = \([0-9]*\)/\1/p' "$log"),pair=$(section Pair "$log") neigh=$(section Neigh "$log") comm=$(section Comm "$log") modify=$(section Modify "$log") other=$(section Other "$log") contact_pairs=$contacts"
}
# One nestsim run of a model: rate, seconds, builds, phase seconds, contacts at the end.
run_nestsim() {
  local bin=$1 model=$2 out timed=()
  # The phase split is printed only when timed (builds that know --phase-times).
  "$bin" run --help 2>&1 | grep -q -- --phase-times && timed=(--phase-times)
  out=$(OMP_NUM_THREADS=$RANKS "$bin" run "$model" -o "$WORK/run.h5" --force --steps "$STEPS" \
          --set "simulation.output.every=$STEPS" "${SETS[@]}" "${timed[@]}" 2> /dev/null) ||
    { echo "bench_lammps_bd: $bin run $model failed" >&2; exit 1; }
  local contacts
  contacts=$("$PYTHON" -c 'import sys, h5py; print(h5py.File(sys.argv[1], "r")["observables/broadphase_pairs/value"][-1])' "$WORK/run.h5")
  sed -n 's/^nestsim: .* in \([0-9.]*\) s: .*, \([0-9.e+]*\) body-steps\/s$/\2,\1/p' <<< "$out" | tr -d '\n'
  sed -n 's/.*integrate \([0-9.]*\) s, broad phase \([0-9.]*\) s (\([0-9]*\) list builds), forces \([0-9.]*\) s.*/,\3,integrate=\1 broadphase=\2 forces=\4/p' <<< "$out" | tr -d '\n'
  echo " contact_pairs=$contacts"
}

echo "# bench_lammps_bd: $N proteins, $STEPS steps, LAMMPS $(lmp -h | sed -n 's/^Large-scale Atomic.* Simulator - //p' | head -1) on $RANKS MPI ranks vs nestsim on $RANKS OpenMP threads, $(nproc) cores, $(date -u +%FT%TZ), load: $(uptime | sed 's/.*load average: //')"
echo "code,nesting,round,body_steps_per_s,seconds,list_builds,phases"
codes=("new:$NESTSIM")
[ -n "$BASELINE" ] && codes+=("baseline:$BASELINE")
for round in $(seq 1 "$REPEATS"); do
  echo "lammps,off,$round,$(run_lammps)"
  for code in "${codes[@]}"; do
    echo "${code%%:*},off,$round,$(run_nestsim "${code#*:}" "$WORK/off.yaml")"
    echo "${code%%:*},on,$round,$(run_nestsim "${code#*:}" "$MODELS/crowded_cell.yaml")"
  done
done | tee "$WORK/rows.csv"
echo "# load after: $(uptime | sed 's/.*load average: //')"
awk -F, '
  {key = $1 "," $2; v[key] = v[key] " " $4; if (!(key in seen)) {seen[key] = 1; order[++n] = key}}
  function median(s,   a, m, i, j, t) {
    m = split(s, a, " ")
    for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] + 0 < a[i] + 0) {t = a[i]; a[i] = a[j]; a[j] = t}
    return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
  }
  END {
    ref = median(v["lammps,off"])
    for (i = 1; i <= n; i++)
      printf "# median %-14s %.4g body-steps/s, ratio to LAMMPS %.3f\n", order[i], median(v[order[i]]), median(v[order[i]]) / ref
  }' "$WORK/rows.csv"
