// `nestsim run` end to end: the default model, reproducibility, resume, overwriting,
// bad models and Ctrl-C.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

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
    if (fa.position.size() != fb.position.size()) return false;
    for (std::size_t s = 0; s < fa.position.size(); ++s)
      for (int k = 0; k < 3; ++k)  // bitwise: compare the representations
        if (std::memcmp(&fa.position[s][k], &fb.position[s][k], sizeof(double)) != 0) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("the default model runs and writes a trajectory up to the last step") {
  const Run r = nestsim_run("-o default.h5 --steps 120");
  REQUIRE_MESSAGE(r.code == 0, r.err);
  CHECK(r.out.find("bodies, 120 steps") != std::string::npos);
  const auto c = nestsim::io::read_last_frame(path("default.h5"));
  CHECK(c.frame.step == 120);  // the last step is always a frame
  CHECK(c.frames == 3);        // steps 0, 100, 120 (output every 100)
  CHECK(c.model_text.find("nestsim: 1") != std::string::npos);
}

TEST_CASE("same seed, same trajectory; resume continues bitwise") {
  REQUIRE(nestsim_run("-o a.h5 --steps 250 --seed 5").code == 0);
  REQUIRE(nestsim_run("-o b.h5 --steps 250 --seed 5").code == 0);
  CHECK(same_frames(path("a.h5"), path("b.h5")));
  REQUIRE(nestsim_run("-o c.h5 --steps 250 --seed 6").code == 0);
  CHECK_FALSE(same_frames(path("a.h5"), path("c.h5")));

  REQUIRE(nestsim_run("-o half.h5 --steps 100 --seed 5").code == 0);
  const Run r = nestsim_run("--resume half.h5 --steps 250");
  REQUIRE_MESSAGE(r.code == 0, r.err);
  CHECK(same_frames(path("a.h5"), path("half.h5")));
  CHECK(nestsim_run("--resume half.h5 --steps 200").code == 2);  // already past it
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
  SUBCASE("a time step too large for the repulsion") {
    std::string text = base + "place:\n  - {compartment: vesicle, at: [100, 100, 100]}\n"
                              "  - {species: ligand, count: 3, in: vesicle}\n";
    text.replace(text.find("repulsion: 1"), 12, "repulsion: 50");
    const std::string m = write_model("stiff.yaml", text);
    const Run r = nestsim_run(m + " -o out3.h5");
    CHECK(r.code == 2);
    CHECK_MESSAGE(r.err.find("time step too large") != std::string::npos, r.err);
    CHECK_FALSE(exists(path("out3.h5")));
  }
  SUBCASE("a missing model file") {
    const Run r = nestsim_run(path("nope.yaml") + " -o out4.h5");
    CHECK(r.code == 2);
    CHECK_FALSE(exists(path("out4.h5")));
  }
}

TEST_CASE("Ctrl-C finishes the frame, and the run resumes to the same trajectory") {
  // SIGINT after a second of a long run: exit 130, the file complete up to a frame.
  const Run r = run_shell("cd " + temp_dir() + " && timeout --preserve-status -s INT 1.5 " +
                          std::string(NESTSIM_BINARY) + " run -o stopped.h5 --steps 20000");
  CHECK_MESSAGE(r.code == 130, r.err);
  const auto c = nestsim::io::read_last_frame(path("stopped.h5"));
  CHECK(c.frame.step % 100 == 0);  // on the output grid (every 100 steps)
  CHECK(c.frame.step > 0);
  CHECK(c.frame.step < 20000);
  const uint64_t target = c.frame.step + 200;
  REQUIRE(nestsim_run("--resume stopped.h5 --steps " + std::to_string(target)).code == 0);
  REQUIRE(nestsim_run("-o straight.h5 --steps " + std::to_string(target)).code == 0);
  CHECK(same_frames(path("stopped.h5"), path("straight.h5")));
}
