#!/bin/bash
# One 4-GPU device call: this tree against a baseline commit, built side by side from
# snapshots (so that files being edited in the working tree do not travel), then
#   GPU 0: every CUDA test but the validation label (bench/gpu_validation.sh runs those);
#   GPUs 2,3: ensemble throughput (tests/ensemble/gpu_throughput.sh, one process and
#     mpirun), then the output benchmark at 1e7 bodies on GPU 3;
#   GPU 1: pairs and trajectories bit for bit against the baseline, then bench_hsx,
#     bench_scenario, bench_simulator interleaved, and the nested-shell scenes at 1e6.
# Prepare here: `git archive HEAD -o .snap/new.tar; git archive BASE -o .snap/base.tar`,
# the dependency bundle in .gpu/ (../shared/gpu/bundle-deps.sh plus Debian's python3.11,
# numpy, h5py (with liblzf1), matplotlib (with python-matplotlib-data), pytest and
# py311-include.tgz, the headers of /usr/include/python3.11; no MPI: the GPU machine's
# own Open MPI is used). Run with carry [".gpu", ".snap"]: `bash dev/gpu_compare.sh`.
set -u
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 ))s"; }
L=$OUT/logs; mkdir -p $L
rm -rf build/vsrc && mkdir -p build/vsrc && tar -xf .snap/new.tar -C build/vsrc && cp -r .gpu build/vsrc/
mkdir -p build/vsrc/build/base-src && tar -xf .snap/base.tar -C build/vsrc/build/base-src
cd build/vsrc
eval "$(bash .gpu/unpack-deps.sh)"
tar -xzf .gpu/py311-include.tgz -C /opt/deps
[ -e /usr/share/matplotlib ] || ln -s /opt/deps/usr/share/matplotlib /usr/share/matplotlib
D=/opt/deps/usr/lib/x86_64-linux-gnu
export LD_LIBRARY_PATH=$D/blas:$D/lapack:$LD_LIBRARY_PATH CPATH=/opt/deps/usr/include
PY=/opt/deps/usr/bin/python3.11
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader NCCL_NVLS_ENABLE=0
$PY -c "import numpy, h5py, matplotlib, pytest; print('py311', numpy.__version__, h5py.__version__, matplotlib.__version__)" > $L/py.txt 2>&1
( cmake -S build/base-src -B build/base-cuda -DCMAKE_BUILD_TYPE=Release -DNESTSIM_BACKEND=CUDA -DNESTSIM_BUILD_PYTHON=OFF \
    -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc > /tmp/base-configure.log 2>&1 &&
  cmake --build build/base-cuda -j24 --target nestsim bench_hsx bench_simulator bench_scenario make_scene > /tmp/base-build.log 2>&1
  echo "base build rc=$? $(el)" > /tmp/base.status ) &
bp=$!
cmake --preset cuda -DNESTSIM_BUILD_PYTHON=ON -DPython_EXECUTABLE=$PY -DPython_INCLUDE_DIR=/opt/deps/usr/include/python3.11 \
  -DNESTSIM_TEST_PYTHON=$PY -DMPI_CXX_COMPILER=$(command -v mpicxx) > /tmp/configure.log 2>&1
cmake --build --preset cuda -j56 > /tmp/build.log 2>&1; echo "build rc=$? $(el) warnings=$(grep -c warning: /tmp/build.log)" > $L/build.status
grep -E "error|warning:" /tmp/build.log | head -20 >> $L/build.status
wait $bp; cat /tmp/base.status >> $L/build.status; grep -E "error" /tmp/base-build.log | head -5 >> $L/build.status
B=build/base-cuda N=build/cuda
# GPU0: every CUDA test but the validation label (gpu_validation.sh runs those)
( export CUDA_VISIBLE_DEVICES=0; timeout $(( 560 - $(date +%s) + T0 )) ctest --preset cuda -LE validation -j10 --timeout 300 > $L/ctest.log 2>&1; echo "ctest rc=$? $(el)" >> $L/ctest.log ) &
# GPUs 2,3: ensemble throughput, 24 members, one at a time per GPU, one process and mpirun
( export CUDA_VISIBLE_DEVICES=2,3 JOBS=1; timeout 300 bash tests/ensemble/gpu_throughput.sh $N/nestsim models/receptor_recycling.yaml 24 2000 > $L/ensemble.txt 2>&1; echo "ensemble rc=$? $(el)" >> $L/ensemble.txt
( export CUDA_VISIBLE_DEVICES=3
{ for k in 0 50; do echo "base bench_simulator 1e7 output-every $k:"; timeout 60 build/base-cuda/bench/bench_simulator --proteins 10000000 --steps 500 --output-every $k 2>&1 | grep -E 'body-steps|output'; done
  echo "new bench_output copy only:"; timeout 90 build/cuda/bench/bench_output --bodies 10000000 --steps 500 --output-every 50 --modes none,sync,async,none,sync,async 2>&1 | tail -14
  echo "new bench_output with H5MD:"; timeout 100 build/cuda/bench/bench_output --bodies 10000000 --steps 50 --output-every 50 --modes sync,async --trajectory /tmp/o 2>&1 | tail -12
} > $L/output.txt 2>&1
echo "output done $(el)" >> $L/output.txt
) ) &
# GPU1: bit for bit against the base, then the benchmarks
export CUDA_VISIBLE_DEVICES=1
C=/tmp/cmp; mkdir -p $C
$N/examples/make_scene exponential 100000 0.1 7 > $C/exp.csv 2>/dev/null
$N/examples/make_scene concentric 3000 > $C/conc.csv 2>/dev/null
$N/examples/make_scene nested 100000 2>/dev/null > $C/nested.csv || echo "make_scene nested failed" >> $L/bitwise.txt
for scene in examples/scenes/cell.csv examples/scenes/concentric.csv $C/exp.csv $C/conc.csv $C/nested.csv; do
  for args in "" "--precision float" "--solid" "--skin 0.5"; do
    $B/nestsim pairs "$scene" $args -o $C/base.csv 2>/dev/null; $N/nestsim pairs "$scene" $args -o $C/new.csv 2>/dev/null
    cmp -s $C/base.csv $C/new.csv && r=same || r=DIFFERENT
    echo "pairs $(basename $scene) $args: $r ($(wc -l < $C/new.csv) lines)"
  done
done >> $L/bitwise.txt 2>&1
for m in models/default.yaml models/receptor_recycling.yaml; do
  $B/nestsim run $m --steps 3000 -o $C/base.h5 --force > /dev/null 2>&1; $N/nestsim run $m --steps 3000 -o $C/new.h5 --force > /dev/null 2>&1
  d=$(h5diff -r $C/base.h5 $C/new.h5 2>&1 | grep -E "^dataset|differences found" | head -5)
  echo "trajectory $(basename $m) 3000 steps: ${d:-same in every dataset}"
done >> $L/bitwise.txt 2>&1
echo "bitwise done $(el)" >> $L/bitwise.txt
{ for round in 1 2; do for v in base new; do [ $v = base ] && d=$B || d=$N
    echo "== $v round $round"
    timeout 60 $d/bench/bench_hsx --sizes 1e6,1e7 --repeats 10 --brute-max-n 0 2>&1 | grep -vE '^#' | tail -6
    timeout 40 $d/bench/bench_scenario --bodies 1000000 --steps 200 2>&1 | grep -E 'steps/s|body-steps' | head -2
    timeout 40 $d/bench/bench_simulator --proteins 10000000 --steps 100 --output-every 0 2>&1 | grep -E 'body-steps' | head -2
  done; done
  echo "== shells (new)"; timeout 60 $N/bench/bench_hsx --sizes 1e5 --shells 1e4,1e5,1e6 --repeats 5 --brute-max-n 0 2>&1 | grep -iE "concentric|nested" | head -8
  $N/examples/make_scene concentric 1000000 > $C/conc1e6.csv 2>/dev/null; $N/examples/make_scene nested 1000000 > $C/nest1e6.csv 2>/dev/null
  for s in conc1e6 nest1e6; do for v in base new; do [ $v = base ] && d=$B || d=$N
    echo "$s $v: $(timeout 40 $d/nestsim pairs $C/$s.csv --bench 3 2>&1 | tail -1)"; done; done
} > $L/bench.txt 2>&1
echo "bench done $(el)" >> $L/bench.txt
wait
echo "== build"; cat $L/py.txt $L/build.status
echo "== ctest"; grep -E "tests passed|tests failed|Failed|\*\*\*|Timeout|ctest rc" $L/ctest.log | head -30
echo "== ensemble"; cat $L/ensemble.txt
echo "== bitwise"; cat $L/bitwise.txt
echo "== bench"; cat $L/bench.txt
echo "== output"; cat $L/output.txt
