// Trust in the file, bounds, and the small holes of `nestsim run`, `pairs` and `export`
// (docs/fault-classes.md lists each case with its test here): an edited stored model is
// not resumed, --force keeps the old trajectory until the new run ends, counts that
// cannot be run are refused before any work, a pair search that cannot fit in memory is
// refused before it starts, SIGTERM is honoured while placing and while writing pairs,
// and the small items each get exit code 2 and a readable line.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <glob.h>
#include <hdf5.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "cli_helpers.h"
#include "h5_read.h"
#include "nestsim/io/h5md.h"
#include "nestsim/io/repair.h"

using namespace nestsim::testing;

namespace {

std::string write_file(const std::string& name, const std::string& text) {
  const std::string p = temp_path(name);
  std::ofstream(p, std::ios::binary) << text;
  return p;
}

std::string model_text(uint64_t steps, const std::string& extra_place = "") {
  return "nestsim: 1\n"
         "units: {length: nm, time: us}\n"
         "box: {size: [400, 400, 400], boundary: periodic}\n"
         "simulation: {dt: 0.01, steps: " +
         std::to_string(steps) +
         ", seed: 3, output: {every: 1, file: trust.h5}}\n"
         "compartments:\n"
         "  ves: {radius: 80, thickness: 4, diffusion: 0.1}\n"
         "species:\n"
         "  p: {radius: 3, diffusion: 1}\n"
         "interactions: {repulsion: 1}\n"
         "place:\n"
         "  - {compartment: ves, at: [200, 200, 200]}\n"
         "  - {species: p, count: 30, in: ves}\n" +
         extra_place;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::string q(const std::string& path) { return "'" + path + "'"; }

// Refused: exit 2, saying `says`, in one short message.
void check_refused(const Run& r, const std::string& says, std::size_t longest = 600) {
  INFO("stderr: " << r.err.substr(0, 800));
  CHECK(r.code == 2);
  CHECK(contains(r.err, says));
  CHECK(r.err.size() <= longest);
}

// Replaces the scalar string dataset `path` of the HDF5 file `file`.
void rewrite_string(const std::string& file, const char* path, const std::string& value) {
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  REQUIRE(f >= 0);
  REQUIRE(H5Ldelete(f, path, H5P_DEFAULT) >= 0);
  const hid_t type = H5Tcopy(H5T_C_S1);
  H5Tset_size(type, H5T_VARIABLE);
  H5Tset_cset(type, H5T_CSET_UTF8);
  const hid_t space = H5Screate(H5S_SCALAR);
  const hid_t d = H5Dcreate2(f, path, type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  REQUIRE(d >= 0);
  const char* text = value.c_str();
  REQUIRE(H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, &text) >= 0);
  H5Dclose(d);
  H5Sclose(space);
  H5Tclose(type);
  H5Fclose(f);
}

std::string read_model(const std::string& file) {
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(f >= 0);
  const std::string text = string_dataset(f, "/parameters/model");
  H5Fclose(f);
  return text;
}

std::size_t partial_files(const std::string& pattern) {
  glob_t g;
  const int found = ::glob(pattern.c_str(), 0, nullptr, &g);
  const std::size_t n = found == 0 ? g.gl_pathc : 0;
  ::globfree(&g);
  return n;
}

// Starts `nestsim ARGS...` in the temporary folder; returns its process id.
pid_t spawn(const std::vector<std::string>& args) {
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    if (::chdir(temp_dir().c_str()) != 0) ::_exit(127);
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, 1);
    ::dup2(null, 2);
    std::vector<char*> argv;
    std::string binary = NESTSIM_BINARY;
    argv.push_back(binary.data());
    std::vector<std::string> copy = args;
    for (auto& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(binary.c_str(), argv.data());
    ::_exit(127);
  }
  return pid;
}

// Waits up to `seconds` for `ready`; false when it did not come.
template <class F>
bool wait_for(F ready, double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    if (ready()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

}  // namespace

TEST_CASE("a resume refuses a stored model that does not match the frames (dt edited)") {
  const std::string model = write_file("trust.yaml", model_text(6));
  const std::string out = temp_path("edited.h5");
  Run r = run_nestsim("run " + q(model) + " -o " + q(out) + " --force");
  REQUIRE_MESSAGE(r.code == 0, r.err);
  // Unedited, it resumes (the check holds for a real file).
  const std::string copy = temp_path("unedited.h5");
  REQUIRE(run_shell("cp " + q(out) + " " + q(copy)).code == 0);
  r = run_nestsim("run --resume " + q(copy) + " --steps 8");
  CHECK_MESSAGE(r.code == 0, r.err);
  std::string text = read_model(out);
  const std::size_t at = text.find("dt: 0.01");
  REQUIRE(at != std::string::npos);
  text.replace(at, 8, "dt: 0.005");
  rewrite_string(out, "/parameters/model", text);
  r = run_nestsim("run --resume " + q(out) + " --steps 8");
  check_refused(r, "/parameters/model does not match the frames");
}

TEST_CASE("--force keeps the old trajectory until the new run ends") {
  const std::string model = write_file("force.yaml", model_text(4));
  const std::string out = temp_path("kept.h5");
  Run r = run_nestsim("run " + q(model) + " -o " + q(out) + " --force");
  REQUIRE_MESSAGE(r.code == 0, r.err);
  const std::string before = slurp(out);
  REQUIRE(!before.empty());
  // A long run over it, killed outright once its first frame is written.
  const std::string long_model = write_file("force_long.yaml", model_text(100000000));
  const pid_t pid = spawn({"run", long_model, "-o", out, "--force"});
  const std::string partial = out + ".partial." + std::to_string(pid);
  const bool started = wait_for(
      [&] {
        struct stat st;
        return ::stat(partial.c_str(), &st) == 0 && st.st_size > 20000;
      },
      60);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  REQUIRE(started);
  CHECK(slurp(out) == before);  // the finished trajectory is whole
  CHECK(exists(partial));       // the new one beside it, resumable
  r = run_nestsim("export " + q(partial) + " --format xyz -o " + q(temp_path("partial.xyz")));
  CHECK_MESSAGE(r.code == 0, r.err);  // complete up to its last frame
  // A run that ends replaces it, and leaves nothing beside it.
  r = run_nestsim("run " + q(model) + " -o " + q(out) + " --force --seed 5");
  REQUIRE_MESSAGE(r.code == 0, r.err);
  CHECK(contains(r.err, "is kept until this run ends"));
  CHECK(slurp(out) != before);
  CHECK(partial_files(out + ".partial.*") == 1);  // only the killed run's
  // SIGTERM ends a run in order: the new trajectory replaces the old one.
  const std::string after = slurp(out);
  const pid_t stopped = spawn({"run", long_model, "-o", out, "--force"});
  const std::string partial2 = out + ".partial." + std::to_string(stopped);
  REQUIRE(wait_for([&] { return exists(partial2); }, 60));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ::kill(stopped, SIGTERM);
  ::waitpid(stopped, &status, 0);
  CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 143));
  CHECK(!exists(partial2));
  CHECK(slurp(out) != after);
}

TEST_CASE("a dangling link as -o: refused without --force, its target written with it") {
  const std::string model = write_file("link.yaml", model_text(2));
  const std::string link = temp_path("dangling.h5"), target = temp_path("target_of_link.h5");
  std::remove(link.c_str());
  std::remove(target.c_str());
  REQUIRE(::symlink("target_of_link.h5", link.c_str()) == 0);
  Run r = run_nestsim("run " + q(model) + " -o " + q(link));
  CHECK(r.code == 2);
  CHECK(!exists(target));
  r = run_nestsim("run " + q(model) + " -o " + q(link) + " --force");
  CHECK_MESSAGE(r.code == 0, r.err);
  CHECK(exists(target));
}

TEST_CASE("-o '' is refused, not taken for the model's file") {
  const std::string model = write_file("empty_o.yaml", model_text(2));
  const Run r = run_shell("cd " + temp_dir() + " && " + NESTSIM_BINARY + " run " + q(model) +
                          " -o '' --force");
  check_refused(r, "-o", 4000);
  CHECK(!exists(temp_path("trust.h5")));
}

TEST_CASE("--set: a quoted number, a second document, a huge argument") {
  const std::string model = write_file("set.yaml", model_text(2));
  const std::string out = " -o " + q(temp_path("set.h5")) + " --force";
  check_refused(run_nestsim("run " + q(model) + " --set \"simulation.dt='0.002'\"" + out),
                "simulation.dt");
  check_refused(
      run_nestsim("run " + q(model) + " --set \"$(printf 'simulation.dt=0.002\\n---\\nseed: 4')\"" + out),
      "2 YAML documents");
  const std::string huge(120000, 'x');
  const Run r = run_nestsim("run " + q(model) + " --set simulation.dt=" + huge + out);
  check_refused(r, "simulation.dt", 1000);
  // The plain number is accepted.
  const Run ok = run_nestsim("run " + q(model) + " --set simulation.dt=0.002" + out);
  CHECK_MESSAGE(ok.code == 0, ok.err);
}

TEST_CASE("a list tagged !!map is not a size; reaction names are names") {
  std::string text = model_text(2);
  const std::string size = "size: [400, 400, 400]";
  text.replace(text.find(size), size.size(), "size: !!map [400, 400, 400]");
  check_refused(run_nestsim("run " + q(write_file("tagged.yaml", text)) + " -o " +
                            q(temp_path("tagged.h5")) + " --force"),
                "box.size");
  const std::string with_rule = model_text(2) +
                                "reactions:\n  - {name: \"bad\\nname\\0x\", rule: \"p -> 0\", "
                                "rate: 1}\n";
  const Run r = run_nestsim("run " + q(write_file("rule_name.yaml", with_rule)) + " -o " +
                            q(temp_path("rule.h5")) + " --force");
  check_refused(r, "reactions[0].name");
  CHECK(r.err.find('\n') == r.err.size() - 1);  // one line
}

TEST_CASE("kinds and place: entries beyond what can be run are refused before any work") {
  std::string kinds = model_text(2);
  std::string extra;
  for (int k = 0; k < 300; ++k) extra += "  s" + std::to_string(k) + ": {radius: 1, diffusion: 1}\n";
  kinds.insert(kinds.find("interactions:"), extra);
  check_refused(run_nestsim("run " + q(write_file("kinds.yaml", kinds)) + " -o " +
                            q(temp_path("kinds.h5")) + " --force"),
                "more than 256 kinds");
  CHECK(!exists(temp_path("kinds.h5")));
  std::string places = model_text(2);
  for (int k = 0; k < 100001; ++k) places += "  - {species: p, in: ves}\n";
  const auto t0 = std::chrono::steady_clock::now();
  const Run r = run_nestsim("run " + q(write_file("places.yaml", places)) + " -o " +
                            q(temp_path("places.h5")) + " --force");
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  check_refused(r, "more than 100000");
  CHECK(seconds < 60);  // parsing 10^5 entries; seconds, also under the sanitizers
}

TEST_CASE("SIGTERM while placing the bodies stops the run at once, nothing written") {
  std::string text = model_text(2);
  text.replace(text.find("count: 30"), 9, "count: 200");
  text.replace(text.find("size: [400, 400, 400]"), 21, "size: [4000, 4000, 4000]");
  // Many entries of many bodies: placement takes seconds.
  for (int k = 0; k < 3000; ++k) text += "  - {species: p, count: 300, outside: ves}\n";
  const std::string model = write_file("slow_place.yaml", text);
  const std::string out = temp_path("slow_place.h5");
  std::remove(out.c_str());
  const pid_t pid = spawn({"run", model, "-o", out});
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  const auto t0 = std::chrono::steady_clock::now();
  ::kill(pid, SIGTERM);
  int status = 0;
  ::waitpid(pid, &status, 0);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(seconds < 2);
  CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 143));
  CHECK(!exists(out));
}

TEST_CASE("pairs refuses, before the search, pairs that cannot fit in memory") {
  std::string scene = "x,y,z,radius,thickness\n";
  for (int k = 0; k < 200000; ++k) scene += "5,5,5,1,1\n";  // 2e10 pairs
  const std::string path = write_file("coincident.csv", scene);
  const auto t0 = std::chrono::steady_clock::now();
  const Run r = run_nestsim("pairs " + q(path) + " -o " + q(temp_path("coincident_pairs.csv")));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  check_refused(r, "pairs");
  CHECK(contains(r.err, "memory"));
  CHECK(seconds < 20);
  CHECK(!exists(temp_path("coincident_pairs.csv")));
  // A scene that fits is searched as before.
  const std::string small = write_file("few.csv", "x,y,z,radius,thickness\n0,0,0,1,1\n1,0,0,1,1\n");
  const Run ok = run_nestsim("pairs " + q(small));
  CHECK(ok.code == 0);
  CHECK(ok.out == "i,j\n0,1\n");
}

TEST_CASE("pairs of nested hollow spheres: a solid bound past memory, the pairs counted and stored") {
  // 200,000 concentric shells 1 apart, 0.5 thick: 2e10 solid overlaps, no hollow pair but
  // the one of the small sphere that crosses the shell of radius 1000 (index 990).
  std::string scene = "x,y,z,radius,thickness\n";
  for (int k = 0; k < 200000; ++k) scene += "0,0,0," + std::to_string(10 + k) + ",0.5\n";
  scene += "999.8,0,0,0.1,0.1\n";
  const std::string path = write_file("concentric_many.csv", scene);
  const Run r = run_nestsim("pairs " + q(path));
  CHECK(r.code == 0);
  CHECK(r.out == "i,j\n990,200000\n");
  CHECK(r.err.empty());
}

TEST_CASE("SIGTERM while pairs writes -o F leaves no F.partial.PID") {
  std::string scene = "x,y,z,radius,thickness\n";
  for (int k = 0; k < 4000; ++k) scene += "5,5,5,1,1\n";  // 8e6 pairs, ~100 MB of output
  const std::string path = write_file("many_pairs.csv", scene);
  const std::string out = temp_path("many_pairs_out.csv");
  const pid_t pid = spawn({"pairs", path, "-o", out});
  const std::string partial = out + ".partial." + std::to_string(pid);
  const bool seen = wait_for([&] { return exists(partial); }, 60);
  ::kill(pid, SIGTERM);
  int status = 0;
  ::waitpid(pid, &status, 0);
  REQUIRE(seen);
  CHECK(WIFSIGNALED(status));
  CHECK(!exists(partial));
  CHECK(!exists(out));
}

TEST_CASE("export --frames: an empty range and a number beyond 64 bits are refused") {
  const std::string model = write_file("export.yaml", model_text(2));
  const std::string out = temp_path("export.h5");
  REQUIRE(run_nestsim("run " + q(model) + " -o " + q(out) + " --force").code == 0);
  const std::string xyz = " --format xyz -o " + q(temp_path("export.xyz"));
  check_refused(run_nestsim("export " + q(out) + " --frames '' " + xyz), "--frames", 4000);
  check_refused(run_nestsim("export " + q(out) + " --frames 0:1000000000000000000000:1" + xyz),
                "--frames", 4000);
  const Run ok = run_nestsim("export " + q(out) + " --frames 0:2:1" + xyz);
  CHECK_MESSAGE(ok.code == 0, ok.err);
}

TEST_CASE("a symbolic link loop is named, not a raw filesystem error") {
  const std::string loop = temp_path("loop.h5");
  std::remove(loop.c_str());
  REQUIRE(::symlink("loop.h5", loop.c_str()) == 0);
  for (const std::string command : {"analyze ", "export --format xyz -o - "}) {
    const Run r = run_nestsim(command + q(loop));
    INFO(command << ": " << r.err);
    CHECK(r.code == 2);
    CHECK(!contains(r.err, "filesystem error"));
    CHECK(contains(r.err, "loop.h5"));
  }
}

TEST_CASE("a trajectory cut short is repaired to the frames that read, and resumed") {
  const std::string model = write_file("cut.yaml", model_text(40));
  const std::string whole = temp_path("whole.h5"), cut = temp_path("cut.h5");
  REQUIRE(run_nestsim("run " + q(model) + " -o " + q(whole) + " --force").code == 0);
  std::remove(cut.c_str());
  std::remove((cut + ".damaged").c_str());
  REQUIRE(run_shell("cp " + q(whole) + " " + q(cut)).code == 0);
  struct stat st;
  REQUIRE(::stat(cut.c_str(), &st) == 0);
  REQUIRE(::truncate(cut.c_str(), st.st_size - st.st_size / 1000) == 0);  // 0.1% cut
  const nestsim::io::Repair r = nestsim::io::repair_trajectory(cut);
  CHECK(r.repaired);
  CHECK(r.frames_kept > 0);
  CHECK(r.frames_kept <= r.frames_before);
  CHECK(exists(cut + ".damaged"));
  CHECK(!exists(cut + ".padded.tmp"));
  // The frames kept are the whole file's.
  const nestsim::model::Frame kept = nestsim::io::read_frame(cut, r.frames_kept - 1);
  const nestsim::model::Frame original = nestsim::io::read_frame(whole, r.frames_kept - 1);
  CHECK(kept.step == original.step);
  CHECK(kept.position == original.position);
  const Run resumed = run_nestsim("run --resume " + q(cut) + " --steps 45");
  CHECK_MESSAGE(resumed.code == 0, resumed.err);
  // `run --resume` alone: it repairs the cut file first, then continues.
  const std::string cut2 = temp_path("cut2.h5");
  std::remove(cut2.c_str());
  std::remove((cut2 + ".damaged").c_str());
  REQUIRE(run_shell("cp " + q(whole) + " " + q(cut2)).code == 0);
  REQUIRE(::truncate(cut2.c_str(), st.st_size - st.st_size / 1000) == 0);
  const Run direct = run_nestsim("run --resume " + q(cut2) + " --steps 45");
  CHECK_MESSAGE(direct.code == 0, direct.err);
  CHECK(contains(direct.err, "was damaged"));
  CHECK(exists(cut2 + ".damaged"));
}

TEST_CASE("analyze DIR with a damaged ensemble.h5 fails at once, without waiting for a lock") {
  const std::string dir = temp_path("damaged_ensemble");
  ::mkdir(dir.c_str(), 0755);
  // HDF5's signature, then garbage: HDF5 cannot open it, and no process holds it.
  std::string bytes = "\x89HDF\r\n\x1a\n";
  for (int k = 0; k < 4096; ++k) bytes.push_back(char((k * 131 + 7) & 0xFF));
  write_file("damaged_ensemble/ensemble.h5", bytes);
  const auto t0 = std::chrono::steady_clock::now();
  const Run r = run_nestsim("analyze " + q(dir));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  INFO(r.err);
  CHECK(r.code != 0);
  CHECK(r.code != -1);
  CHECK(contains(r.err, "ensemble.h5"));
  CHECK(seconds < 4);  // the open's patience (30 s) is for a lock only
}
