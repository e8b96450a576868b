#!/bin/bash
# An installed nestsim runs from anywhere: `cmake --install BUILD --prefix P` puts the
# program in P/bin and its data (models, plot scripts) in P/share/nestsim, and the
# program finds them relative to itself. The prefix is moved after the install, and the
# run starts in a directory of its own, so neither an install path nor the source tree
# can stand in for what the prefix holds.
#
#   bash tests/test_install.sh BUILD_DIR
set -eu
build=${1:?usage: test_install.sh BUILD_DIR}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "test_install: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$tmp/installed" > "$tmp/install.log" ||
  { cat "$tmp/install.log" >&2; fail "cmake --install failed"; }
mv "$tmp/installed" "$tmp/p"
p=$tmp/p
for f in bin/nestsim share/nestsim/models/default.yaml share/nestsim/models/README.md \
         share/nestsim/tools/plot_trajectory.py share/nestsim/tools/plot_ensemble.py; do
  [ -e "$p/$f" ] || fail "the install has no $f"
done

mkdir "$tmp/elsewhere"
cd "$tmp/elsewhere"
# The default model (no model file named), a few steps.
"$p/bin/nestsim" run -o out.h5 --steps 20 > run.out 2> run.err ||
  { cat run.err >&2; fail "the installed nestsim could not run the default model"; }
[ -s out.h5 ] || fail "no trajectory written"
"$p/bin/nestsim" analyze out.h5 > analyze.out 2>&1 ||
  { cat analyze.out >&2; fail "nestsim analyze failed on the run's trajectory"; }
grep -q "frames" analyze.out || { cat analyze.out >&2; fail "analyze printed no frame table"; }

# Without the prefix's model there is no default: nothing outside the prefix is used.
rm "$p/share/nestsim/models/default.yaml"
if "$p/bin/nestsim" run -o again.h5 --steps 20 > /dev/null 2> again.err; then
  fail "ran a default model the prefix does not hold"
fi
grep -q "the default model (models/default.yaml) was not found" again.err ||
  { cat again.err >&2; fail "unexpected message without the default model"; }
echo "test_install: the installed nestsim ran the default model from $tmp/elsewhere"
