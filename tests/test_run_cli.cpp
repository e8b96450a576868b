// `nestsim run` end to end: the default model, reproducibility, resume, overwriting,
// bad models, Ctrl-C, --collision, and reaction counts.
#include <doctest/doctest.h>
#include <hdf5.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "h5_read.h"
#include "cli_helpers.h"
#include "nestsim/io/h5md.h"

using namespace nestsim::testing;

namespace {

Run nestsim_run(const std::string& args) {
  return run_shell("cd " + temp_dir() + " && " + std::string(NESTSIM_BINARY) + " run " + args);
}

std::string path(const std::string& name) { return temp_path(name); }

std::string write_model(const std::string& name, const std::string& text) {
  std::ofstream(path(name)) << text;
  return path(name);
}

bool same_frames(const std::string& a, const std::string& b) {
  const auto ca = nestsim::io::read_last_frame(a), cb = nestsim::io::read_last_frame(b);
  if (ca.frames != cb.frames) return false;
  for (uint64_t f = 0; f < ca.frames; ++f) {
    const auto fa = nestsim::io::read_frame(a, f), fb = nestsim::io::read_frame(b, f);
    if (fa.step != fb.step || fa.id != fb.id || fa.parent != fb.parent) return false;
    if (fa.image != fb.image || fa.image.size() != fa.id.size()) return false;
    if (fa.position.size() != fb.position.size()) return false;
    for (std::size_t s = 0; s < fa.position.size(); ++s)
      for (int k = 0; k < 3; ++k)  // bitwise: compare the representations
        if (std::memcmp(&fa.position[s][k], &fb.position[s][k], sizeof(double)) != 0) return false;
  }
  return true;
}

// A string dataset of a trajectory, read with HDF5 itself.
std::string stored_string(const std::string& file, const char* name) {
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(f >= 0);
  std::string value = nestsim::testing::string_dataset(f, name);
  H5Fclose(f);
  return value;
}

std::vector<int64_t> stored_counts(const std::string& file, const std::string& name) {
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(f >= 0);
  const hid_t d = H5Dopen2(f, name.c_str(), H5P_DEFAULT);
  REQUIRE(d >= 0);
  const hid_t space = H5Dget_space(d);
  std::vector<int64_t> values(std::size_t(H5Sget_simple_extent_npoints(space)));
  REQUIRE(H5Dread(d, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) >= 0);
  H5Sclose(space);
  H5Dclose(d);
  H5Fclose(f);
  return values;
}

}  // namespace

TEST_CASE("the default model runs and writes a trajectory up to the last step") {
  const Run r = nestsim_run("-o default.h5 --steps 120");
  REQUIRE_MESSAGE(r.code == 0, r.err);
  CHECK(r.out.find("bodies, 120 steps") != std::string::npos);
  const auto c = nestsim::io::read_last_frame(path("default.h5"));
  CHECK(c.frame.step == 120);  // the last step is always a frame
  CHECK(c.frames == 2);        // steps 0 and 120 (output every 500)
  CHECK(c.model_text.find("nestsim: 1") != std::string::npos);
}

TEST_CASE("same seed, same trajectory; resume continues bitwise") {
  // The default model writes a frame every 500 steps: frames 0, 500, 1000.
  REQUIRE(nestsim_run("-o a.h5 --steps 1000 --seed 5").code == 0);
  REQUIRE(nestsim_run("-o b.h5 --steps 1000 --seed 5").code == 0);
  CHECK(same_frames(path("a.h5"), path("b.h5")));
  REQUIRE(nestsim_run("-o c.h5 --steps 1000 --seed 6").code == 0);
  CHECK_FALSE(same_frames(path("a.h5"), path("c.h5")));

  REQUIRE(nestsim_run("-o half.h5 --steps 500 --seed 5").code == 0);
  const Run r = nestsim_run("--resume half.h5 --steps 1000");
  REQUIRE_MESSAGE(r.code == 0, r.err);
  CHECK(same_frames(path("a.h5"), path("half.h5")));
  CHECK(nestsim_run("--resume half.h5 --steps 800").code == 2);  // already past it
}

TEST_CASE("an existing trajectory is kept unless --force") {
  REQUIRE(nestsim_run("-o keep.h5 --steps 10").code == 0);
  const std::string before = slurp(path("keep.h5"));
  const Run r = nestsim_run("-o keep.h5 --steps 20");
  CHECK(r.code == 2);
  CHECK(r.err.find("keep.h5") != std::string::npos);
  CHECK(slurp(path("keep.h5")) == before);
  CHECK(nestsim_run("-o keep.h5 --steps 20 --force").code == 0);
  CHECK(nestsim::io::read_last_frame(path("keep.h5")).frame.step == 20);
}

TEST_CASE("bad models: located message, exit code 2, nothing written") {
  const std::string base =
      "nestsim: 1\n"
      "units: {length: nm, time: us}\n"
      "box: {size: [200, 200, 200], boundary: periodic}\n"
      "simulation: {dt: 0.01, steps: 10, seed: 1, output: {every: 5, file: bad.h5}}\n"
      "compartments:\n"
      "  vesicle: {radius: 30, thickness: 4, diffusion: 1}\n"
      "species:\n"
      "  ligand: {radius: 2, diffusion: 10}\n"
      "interactions: {repulsion: 1}\n";
  SUBCASE("a wrong type") {
    const std::string m = write_model(
        "type.yaml", base + "place:\n  - {compartment: vesicle, at: [100, 100, 100]}\n"
                            "  - {species: ligand, count: many, in: vesicle}\n");
    const Run r = nestsim_run(m + " -o out1.h5");
    CHECK(r.code == 2);
    CHECK_MESSAGE(r.err.rfind(m + ":12:", 0) == 0, r.err);
    CHECK_FALSE(exists(path("out1.h5")));
  }
  SUBCASE("an unknown compartment kind") {
    const std::string m = write_model(
        "kind.yaml", base + "place:\n  - {species: ligand, count: 3, in: lysosome}\n");
    const Run r = nestsim_run(m + " -o out2.h5");
    CHECK(r.code == 2);
    CHECK_MESSAGE(r.err.find("lysosome") != std::string::npos, r.err);
    CHECK_FALSE(exists(path("out2.h5")));
  }
  SUBCASE("a time step too large for accurate contacts") {
    std::string text = base + "place:\n  - {compartment: vesicle, at: [100, 100, 100]}\n"
                              "  - {species: ligand, count: 3, in: vesicle}\n";
    text.replace(text.find("repulsion: 1"), 12, "repulsion: 50");
    const std::string m = write_model("stiff.yaml", text);
    const Run r = nestsim_run(m + " -o out3.h5");
    CHECK(r.code == 2);
    CHECK_MESSAGE(r.err.find("simulation.dt: too large for accurate contacts") != std::string::npos, r.err);
    CHECK_MESSAGE(r.err.find("use dt <= ") != std::string::npos, r.err);
    CHECK_FALSE(exists(path("out3.h5")));
  }
  SUBCASE("a missing model file") {
    const Run r = nestsim_run(path("nope.yaml") + " -o out4.h5");
    CHECK(r.code == 2);
    CHECK_FALSE(exists(path("out4.h5")));
  }
}

TEST_CASE("Ctrl-C finishes the frame, and the run resumes to the same trajectory") {
  // SIGINT a few seconds into a long run (long enough for a GPU's start-up too): exit
  // 130, the file complete up to a frame. The default model with a frame every 100
  // steps, so that a slow machine reaches a frame past the first in that time.
  {
    std::string model = slurp(std::string(NESTSIM_SOURCE_DIR) + "/models/default.yaml");
    const std::size_t at = model.find("every: 500");
    REQUIRE(at != std::string::npos);
    model.replace(at, 10, "every: 100");
    std::ofstream(path("often.yaml")) << model;
  }
  // --foreground: one signal, as a user or a scheduler sends it (without it, timeout
  // signals the command and then its process group: a second signal stops at once).
  const Run r = run_shell("cd " + temp_dir() + " && timeout --foreground --preserve-status -s INT 4 " +
                          std::string(NESTSIM_BINARY) + " run often.yaml -o stopped.h5 --steps 100000000");
  CHECK_MESSAGE(r.code == 130, r.err);
  const auto c = nestsim::io::read_last_frame(path("stopped.h5"));
  CHECK(c.frame.step % 100 == 0);  // on the output grid (every 100 steps)
  CHECK(c.frame.step > 0);
  CHECK(c.frame.step < 100000000);
  const uint64_t target = c.frame.step + 200;
  REQUIRE(nestsim_run("--resume stopped.h5 --steps " + std::to_string(target)).code == 0);
  REQUIRE(nestsim_run(path("often.yaml") + " -o straight.h5 --steps " + std::to_string(target)).code == 0);
  CHECK(same_frames(path("stopped.h5"), path("straight.h5")));
}

TEST_CASE("--collision picks the broad phase, is stored, and is kept by --resume") {
  Run r = nestsim_run("-o bogus.h5 --steps 10 --collision bogus");
  CHECK(r.code == 2);
  CHECK_MESSAGE(r.err.find("--collision needs hollow or solid, not 'bogus'") != std::string::npos,
                r.err);
  CHECK_FALSE(exists(path("bogus.h5")));
  CHECK(nestsim_run("-o none.h5 --steps 10 --collision").code == 2);  // no value

  r = nestsim_run("-o solid.h5 --steps 500 --seed 5 --collision solid");
  REQUIRE_MESSAGE(r.code == 0, r.err);
  CHECK(stored_string(path("solid.h5"), "/parameters/collision") == "solid");
  REQUIRE(nestsim_run("-o hollow.h5 --steps 10 --collision hollow").code == 0);
  CHECK(stored_string(path("hollow.h5"), "/parameters/collision") == "hollow");

  // --resume continues with the file's broad phase; another one is a usage error.
  const std::string before = slurp(path("solid.h5"));
  r = nestsim_run("--resume solid.h5 --steps 1000 --collision hollow");
  CHECK(r.code == 2);
  CHECK_MESSAGE(r.err.find("written with --collision solid") != std::string::npos, r.err);
  CHECK(slurp(path("solid.h5")) == before);
  r = nestsim_run("--resume solid.h5 --steps 1000 --collision solid");
  REQUIRE_MESSAGE(r.code == 0, r.err);
  CHECK(stored_string(path("solid.h5"), "/parameters/collision") == "solid");
  REQUIRE(nestsim_run("-o solid_straight.h5 --steps 1000 --seed 5 --collision solid").code == 0);
  CHECK(same_frames(path("solid.h5"), path("solid_straight.h5")));

  // The default model (receptor recycling, nested three deep): the solid run is the
  // same trajectory, but its lists hold the spurious contacts that nesting rules out.
  REQUIRE(nestsim_run("-o hollow_1000.h5 --steps 1000 --seed 5 --collision hollow").code == 0);
  const std::string h = path("hollow_1000.h5"), s = path("solid_straight.h5");
  const auto last_h = nestsim::io::read_last_frame(h), last_s = nestsim::io::read_last_frame(s);
  REQUIRE(last_h.frames == last_s.frames);
  for (uint64_t f = 0; f < last_h.frames; ++f) {
    const auto fh = nestsim::io::read_frame(h, f), fs = nestsim::io::read_frame(s, f);
    CHECK(fh.position == fs.position);
    CHECK(fh.id == fs.id);
    REQUIRE(fh.broadphase_pairs > 0);
    // The ~600 crowders and hydrolases deep inside the cell and the lysosomes are listed
    // with their compartments by SSX only.
    CHECK(fs.broadphase_pairs > fh.broadphase_pairs + 300);
  }
}

TEST_CASE("reaction events: per output interval in the file, cumulative when read back") {
  // Kinds: compartments first, then species: ves 0, a 1, b 2, c 3. Every a that is
  // gone became a b (convert), every c came from a b (decay).
  const std::string model = write_model("decay.yaml", R"(nestsim: 1
units: {length: nm, time: us}
box: {size: [200, 200, 200], boundary: periodic}
simulation: {dt: 0.01, steps: 300, seed: 4, capacity: 400, output: {every: 50, file: decay.h5}}
compartments:
  ves: {radius: 20, thickness: 4, diffusion: 1}
species:
  a: {radius: 2, diffusion: 10}
  b: {radius: 2, diffusion: 10}
  c: {radius: 2, diffusion: 10}
interactions: {repulsion: 0.5}
place:
  - {compartment: ves, at: [100, 100, 100]}
  - {species: a, count: 200, outside: ves}
reactions:
  - {name: convert, rule: "a -> b", rate: 0.5}
  - {name: decay, rule: "b -> c", rate: 0.3}
)");
  Run r = nestsim_run(model + " -o decay.h5");
  REQUIRE_MESSAGE(r.code == 0, r.err);
  const std::string file = path("decay.h5");
  const auto convert = stored_counts(file, "/observables/reactions/convert/value");
  const auto decay = stored_counts(file, "/observables/reactions/decay/value");
  const uint64_t frames = nestsim::io::read_last_frame(file).frames;
  REQUIRE(frames == 7);  // steps 0, 50, ..., 300
  REQUIRE(convert.size() == frames);
  REQUIRE(decay.size() == frames);
  int64_t converted_before = 0, decayed_before = 0;
  for (uint64_t f = 0; f < frames; ++f) {
    const auto frame = nestsim::io::read_frame(file, f);
    int64_t a = 0, c = 0;
    for (std::size_t s = 0; s < frame.id.size(); ++s) {
      a += frame.id[s] >= 0 && frame.kind[s] == 1;
      c += frame.id[s] >= 0 && frame.kind[s] == 3;
    }
    const int64_t converted = 200 - a, decayed = c;
    INFO("frame " << f);
    CHECK(convert[f] == converted - converted_before);
    CHECK(decay[f] == decayed - decayed_before);
    REQUIRE(frame.reaction_events.size() == 2);
    CHECK(frame.reaction_events[0] == uint64_t(converted));
    CHECK(frame.reaction_events[1] == uint64_t(decayed));
    converted_before = converted;
    decayed_before = decayed;
  }
  CHECK(convert[0] == 0);
  CHECK(converted_before > 50);  // the rules did fire
  CHECK(decayed_before > 10);

  // Resumed halfway: the same counts, continued from the sums of the kept frames.
  REQUIRE(nestsim_run(model + " -o decay_half.h5 --steps 150").code == 0);
  r = nestsim_run("--resume decay_half.h5 --steps 300");
  REQUIRE_MESSAGE(r.code == 0, r.err);
  CHECK(same_frames(file, path("decay_half.h5")));
  CHECK(stored_counts(path("decay_half.h5"), "/observables/reactions/convert/value") == convert);
  CHECK(stored_counts(path("decay_half.h5"), "/observables/reactions/decay/value") == decay);
}
