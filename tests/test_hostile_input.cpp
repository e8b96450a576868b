// Hostile and careless input to `nestsim run` and `nestsim pairs`, made here by
// generators: YAML that is not what it seems (explicit tags, several documents, deep
// nesting, a byte order mark), absurd counts, huge lines and binary bytes, empty files and
// directories, many `place:` entries. Each is refused fast with exit code 2 and one
// readable line that says where and what, or accepted where it is valid.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <string>

#include "cli_helpers.h"

using namespace nestsim::testing;

namespace {

std::string binary() { return std::string(NESTSIM_BINARY); }

std::string write_file(const std::string& name, const std::string& text) {
  const std::string p = temp_path(name);
  std::ofstream(p, std::ios::binary) << text;
  return p;
}

const std::string header =
    "nestsim: 1\n"
    "units: {length: nm, time: us}\n"
    "box: {size: [400, 400, 400], boundary: periodic}\n"
    "simulation: {dt: 0.01, steps: 2, seed: 3, output: {every: 1, file: hostile.h5}}\n"
    "compartments:\n"
    "  ves: {radius: 80, thickness: 4, diffusion: 0.1}\n"
    "species:\n"
    "  p: {radius: 3, diffusion: 1}\n"
    "interactions: {repulsion: 1}\n";
const std::string places =
    "place:\n"
    "  - {compartment: ves, at: [200, 200, 200]}\n"
    "  - {species: p, count: 30, in: ves}\n";

// Runs `nestsim run MODEL` into the temporary folder; returns the result and its time.
Run run_model(const std::string& model, double* seconds = nullptr) {
  const auto t0 = std::chrono::steady_clock::now();
  Run r = run_shell("cd " + temp_dir() + " && " + binary() + " run " + model +
                    " -o hostile.h5 --force");
  if (seconds)
    *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Refused: exit 2, one line on standard error that starts with `where` and says `says`,
// at most `longest` bytes.
void check_refused(const Run& r, const std::string& where, const std::string& says,
                   std::size_t longest = 400) {
  CHECK(r.code == 2);
  CHECK_MESSAGE(r.err.rfind(where, 0) == 0, r.err.substr(0, 500));
  CHECK_MESSAGE(contains(r.err, says), r.err.substr(0, 500));
  CHECK_MESSAGE(r.err.size() <= longest, r.err.substr(0, 500));
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK_FALSE(contains(r.err, ":0:"));
}

}  // namespace

TEST_CASE("explicit YAML tags are honoured: !!str is text") {
  std::string text = header + places;
  text.replace(text.find("radius: 80"), 10, "radius: !!str 80");
  std::string m = write_file("tag_str.yaml", text);
  check_refused(run_model(m), m + ":6:17: compartments.ves.radius: ",
                "expected a number, got '80' (tagged !!str)");
  text = header + places;
  text.replace(text.find("radius: 80"), 10, "radius: !!float 80");
  m = write_file("tag_float.yaml", text);
  Run r = run_model(m);
  CHECK_MESSAGE(r.code == 0, r.err);
  text = header + places;
  text.replace(text.find("count: 30"), 9, "count: '30'");
  m = write_file("quoted.yaml", text);
  check_refused(run_model(m), m + ":12:", "got '30' (quoted: text)");
}

TEST_CASE("a model file holds one YAML document") {
  std::string m = write_file("broken_second.yaml", header + places + "---\nfoo: [1, 2\n");
  check_refused(run_model(m), m + ":15:", "YAML syntax");
  m = write_file("second.yaml", header + places + "---\nnestsim: 1\n");
  check_refused(run_model(m), m + ":14:1: ", "a second YAML document (after ---)");
  m = write_file("trailing_marker.yaml", header + places + "---\n");  // an empty one: fine
  const Run r = run_model(m);
  CHECK_MESSAGE(r.code == 0, r.err);
}

TEST_CASE("empty files, directories, byte order marks and deep nesting") {
  std::string m = write_file("empty.yaml", "");
  check_refused(run_model(m), m + ": ", "expected a map of sections, got nothing");
  const std::string dir = temp_path("a_model_dir");
  REQUIRE(::mkdir(dir.c_str(), 0755) == 0);
  check_refused(run_model(dir), dir + ": ", "is a directory, not a model file");
  check_refused(run_shell(binary() + " pairs " + dir), dir + ": ", "is a directory");
  check_refused(run_shell(binary() + " run --resume " + dir + " --steps 5"), dir + ": ",
                "is a directory, not a trajectory");
  check_refused(run_shell(binary() + " analyze " + dir), "nestsim analyze: " + dir + ": ",
                "is a directory, not a trajectory");

  m = write_file("bom.yaml", "\xEF\xBB\xBF" + header + places);  // a leading BOM is valid
  Run r = run_model(m);
  CHECK_MESSAGE(r.code == 0, r.err);
  std::string text = header + places;
  text.replace(text.find("  ves: {"), 8, "  \xEF\xBB\xBFves: {");  // one inside: shown
  m = write_file("bom_inside.yaml", text);
  check_refused(run_model(m), m + ":6:", "compartments.<U+FEFF>ves");

  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  m = write_file("deep.yaml", header + "extra: " + deep + "\n" + places);
  check_refused(run_model(m), m + ":", "nested more than 500 deep");

  m = write_file("no_places.yaml", header + "place: []\n");
  check_refused(run_model(m), m + ":10:8: place: ", "expected a list of placements, got an "
                                                    "empty list");
}

TEST_CASE("huge lines and binary bytes are quoted cut and escaped") {
  std::string text = header + places;
  text.replace(text.find("radius: 80"), 10, "radius: " + std::string(5000000, '9') + "q");
  std::string m = write_file("huge.yaml", text);
  check_refused(run_model(m), m + ":6:17: ", "(5000001 bytes in all)");

  const std::string csv_header = "x,y,z,radius,thickness\n";
  std::string scene = write_file("huge.csv", csv_header + "0,0," + std::string(5000000, '7') +
                                                 "x,1,0\n");
  check_refused(run_shell(binary() + " pairs " + scene), scene + ":2: ",
                "(5000001 bytes in all)' is not a number");
  scene = write_file("binary.csv", std::string("\x00\x01\xFF\xFEgarbage", 11) + "\n");
  check_refused(run_shell(binary() + " pairs " + scene), scene + ":1: ",
                "got '\\x00\\x01\\xFF\\xFEgarbage'");
  scene = write_file("nbsp.csv", csv_header + "0,0,0,1\xC2\xA0,0\n");
  check_refused(run_shell(binary() + " pairs " + scene), scene + ":2: ", "'1<U+00A0>'");
  scene = write_file("bom.csv", "\xEF\xBB\xBF" + csv_header + "0,0,0,1,0\n1,0,0,1,0\n");
  const Run r = run_shell(binary() + " pairs " + scene);
  CHECK_MESSAGE(r.code == 0, r.err);
  CHECK(r.out == "i,j\n0,1\n");
}

TEST_CASE("absurd counts are refused before any work, with the numbers") {
  std::string text = header + places;
  double seconds = 0;
  text.replace(text.find("count: 30"), 9, "count: 10000000000");
  std::string m = write_file("count.yaml", text);
  check_refused(run_model(m, &seconds), m + ":12:5: place[1].count: ",
                "place 10000000001 bodies, more than the 2147483647 slots a run holds");
  CHECK(seconds < 10);
  text = header + places;
  text.replace(text.find("count: 30"), 9, "count: 100000000");
  m = write_file("crowded.yaml", text);
  check_refused(run_model(m, &seconds), m + ":12:5: place[1]: ",
                "100000000 'p' (radius 3) take a volume of 1.13e+10, more than the 1.84e+06");
  CHECK(seconds < 10);
  text = header + places;
  text.replace(text.find("seed: 3,"), 8, "seed: 3, capacity: 3000000000,");
  m = write_file("capacity.yaml", text);
  check_refused(run_model(m), m + ":4:", "simulation.capacity: at most 2147483647 slots");
}

TEST_CASE("placement is near linear in the number of place: entries") {
  // n compartments placed one by one (`at:`), then n entries of one body each in or
  // outside them: quadratic placement took 13x longer for 4x the entries.
  auto model = [&](int n) {
    std::string text =
        "nestsim: 1\nunits: {length: nm, time: us}\n"
        "box: {size: [4000, 4000, 4000], boundary: periodic}\n"
        "simulation: {dt: 0.01, steps: 1, seed: 9, output: {every: 1, file: many.h5}}\n"
        "compartments:\n  ves: {radius: 10, thickness: 2, diffusion: 0.1}\n"
        "species:\n  q: {radius: 2, diffusion: 1}\ninteractions: {repulsion: 1}\nplace:\n";
    for (int i = 0; i < n; ++i)
      text += "  - {compartment: ves, at: [" + std::to_string(30 + (i % 100) * 39) + ", " +
              std::to_string(30 + (i / 100 % 100) * 39) + ", " +
              std::to_string(30 + i / 10000 * 39) + "]}\n";
    for (int i = 0; i < n; ++i) text += i % 2 ? "  - {species: q, outside: ves}\n"
                                              : "  - {species: q, in: ves}\n";
    return write_file("many_" + std::to_string(n) + ".yaml", text);
  };
  auto fastest = [&](const std::string& m) {
    double best = 1e30;
    for (int k = 0; k < 2; ++k) {
      double seconds = 0;
      const Run r = run_model(m, &seconds);
      REQUIRE_MESSAGE(r.code == 0, r.err.substr(0, 500));
      best = std::min(best, seconds);
    }
    return best;
  };
  const double small = fastest(model(5000)), large = fastest(model(20000));
  MESSAGE("5,000 compartments and entries: " << small << " s; 20,000: " << large << " s");
  CHECK(large < 8 * small);
}

TEST_CASE("a box of 1e16 places and runs (placement's cell numbers stay in range)") {
  std::string text = header +
                     "place:\n"
                     "  - {compartment: ves, at: [5e15, 5e15, 5e15]}\n"
                     "  - {species: p, count: 100, outside: ves}\n";
  text.replace(text.find("size: [400, 400, 400]"), 21, "size: [1e16, 1e16, 1e16]");
  const std::string m = write_file("wide.yaml", text);
  const Run r = run_model(m);
  CHECK_MESSAGE(r.code == 0, r.err);
}
