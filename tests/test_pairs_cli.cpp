// `nestsim pairs` end to end: scene files in, pair files out, and every bad input.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "nestsim/io/scene_csv.h"
#include "nestsim/testing/scenes.h"
#include "cli_helpers.h"
#include "reference.h"

using namespace nestsim;
using namespace nestsim::testing;

namespace {

std::string write_file(const std::string& name, const std::string& text) {
  const std::string path = temp_dir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

std::vector<Pair> parse_pairs(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  std::getline(in, line);
  REQUIRE(line == "i,j");
  std::vector<Pair> pairs;
  while (std::getline(in, line)) {
    const auto comma = line.find(',');
    REQUIRE(comma != std::string::npos);
    pairs.emplace_back(uint32_t(std::stoul(line.substr(0, comma))),
                       uint32_t(std::stoul(line.substr(comma + 1))));
  }
  return pairs;
}

}  // namespace

TEST_CASE("a scene file round trip gives the reference pairs") {
  const scenes::Scene s = scenes::cell_like(1500, 3);
  io::Scene scene;
  scene.dim = 3;
  scene.bodies = s.bodies;
  const std::string path = temp_dir() + "/cell.csv";
  io::write_scene_csv(path, scene);
  const io::Scene back = io::read_scene_csv(path);
  CHECK(back.bodies.x == s.bodies.x);
  CHECK(back.bodies.radius == s.bodies.radius);
  CHECK(back.bodies.thickness == s.bodies.thickness);

  BroadphaseOptions o;
  const auto reference = reference_pairs(s.bodies, o);
  const std::string out = temp_dir() + "/pairs.csv";
  Run r = run_nestsim("pairs " + path + " -o " + out);
  REQUIRE(r.code == 0);
  CHECK(parse_pairs(slurp(out)) == reference);

  r = run_nestsim("pairs " + path);  // to standard output
  REQUIRE(r.code == 0);
  CHECK(parse_pairs(r.out) == reference);

  r = run_nestsim("pairs " + path + " --count");
  REQUIRE(r.code == 0);
  CHECK(std::stoul(r.out) == reference.size());

  o.overlap = Overlap::solid;
  r = run_nestsim("pairs " + path + " --solid");
  REQUIRE(r.code == 0);
  CHECK(parse_pairs(r.out) == reference_pairs(s.bodies, o));

  o.overlap = Overlap::hollow;
  r = run_nestsim("pairs " + path + " --precision float");
  REQUIRE(r.code == 0);
  CHECK(parse_pairs(r.out) == reference_pairs(convert<float>(s.bodies), o));

  for (const char* small_n : {"0", "1000000"}) {  // HSX's grid, then all pairs
    r = run_nestsim("pairs " + path + " --hsx-small-n " + small_n);
    REQUIRE(r.code == 0);
    CHECK(parse_pairs(r.out) == reference);
  }
  for (const char* sort : {"counting", "radix", "auto"}) {  // HSX's grid, either sort
    CAPTURE(sort);
    r = run_nestsim("pairs " + path + " --hsx-small-n 0 --grid-sort " + sort);
    REQUIRE(r.code == 0);
    CHECK(parse_pairs(r.out) == reference);
  }

  // The search leaving its pairs in the order found: the output is still sorted.
  r = run_nestsim("pairs " + path + " --hsx-small-n 0 --any-order -o " + out);
  REQUIRE(r.code == 0);
  CHECK(parse_pairs(slurp(out)) == reference);

  for (const char* order : {"", " --any-order"}) {
    CAPTURE(order);
    r = run_nestsim("pairs " + path + " --bench 3" + order);
    REQUIRE(r.code == 0);
    // One line: median_ms=M min_ms=N pairs=P
    double median = -1, least = -1;
    unsigned long long found = 0;
    int used = 0;
    REQUIRE(std::sscanf(r.out.c_str(), "median_ms=%lf min_ms=%lf pairs=%llu\n%n", &median, &least,
                        &found, &used) == 3);
    CHECK(used == int(r.out.size()));
    CHECK(median >= least);
    CHECK(least >= 0);
    CHECK(found == reference.size());
  }
}

TEST_CASE("2D scenes and periodic boxes") {
  scenes::Scene s = scenes::exponential(800, 0.3, 2, 4);
  io::Scene scene;
  scene.dim = 2;
  scene.bodies = s.bodies;
  // Shift some bodies by whole box lengths: --periodic must wrap them.
  for (std::size_t i = 0; i < scene.bodies.size(); i += 3) scene.bodies.x[i] += s.domain.size[0];
  const std::string path = temp_dir() + "/flat.csv";
  io::write_scene_csv(path, scene);
  std::ostringstream box;
  box.precision(17);
  box << s.domain.size[0] << "," << s.domain.size[1];
  Run r = run_nestsim("pairs " + path + " --box " + box.str() + " --periodic");
  REQUIRE(r.code == 0);
  BroadphaseOptions o;
  o.domain = s.domain;
  o.domain.periodic = true;
  scenes::make_periodic(s);
  const auto reference = reference_pairs(s.bodies, o);
  const auto result = parse_pairs(r.out);
  const Difference d = compare(reference, result);
  INFO(d.describe());
  CHECK(d.missed.empty());
  CHECK(d.spurious.empty());
  // The same file in an open box of that size: the shifted bodies lie outside.
  r = run_nestsim("pairs " + path + " --box " + box.str());
  CHECK(r.code == 2);
  CHECK(r.err.rfind(path + ":2: ", 0) == 0);
}

TEST_CASE("bad input: located message, exit code 2, no output file") {
  struct Bad {
    const char* name;
    std::string text;
    std::string extra;
    int line;
    const char* says;
  };
  const std::string header = "x,y,z,radius,thickness\n";
  const std::vector<Bad> cases = {
      {"malformed", header + "0,0,0,1,0\n1,2,x3,1,0\n", "", 3, "not a number"},
      {"columns", header + "0,0,0,1,0\n1,2,3,1\n", "", 3, "columns"},
      {"nan", header + "nan,0,0,1,0\n", "", 2, "finite"},
      {"inf", header + "0,0,0,inf,0\n", "", 2, "finite"},
      {"negative", header + "0,0,0,1,0\n0,0,0,-1,0\n", "", 3, "negative radius"},
      {"thick", header + "0,0,0,1,2\n", "", 2, "exceeds radius"},
      {"empty", "", "", 1, "empty file"},
      {"header", "a,b,c\n1,2,3\n", "", 1, "header"},
      {"outside", header + "1,1,1,1,0\n5,11,5,1,0\n", " --box 10,10,10", 3, "outside the box"},
  };
  for (const Bad& b : cases) {
    INFO(b.name);
    const std::string path = write_file(std::string(b.name) + ".csv", b.text);
    const std::string out = temp_dir() + "/should-not-exist.csv";
    const Run r = run_nestsim("pairs " + path + b.extra + " -o " + out);
    CHECK(r.code == 2);
    const std::string where = path + ":" + std::to_string(b.line) + ": ";
    CHECK_MESSAGE(r.err.rfind(where, 0) == 0, r.err);
    CHECK_MESSAGE(r.err.find(b.says) != std::string::npos, r.err);
    CHECK_FALSE(exists(out));
  }
  const std::string missing = temp_dir() + "/no-such-scene.csv";
  const Run r = run_nestsim("pairs " + missing + " -o " + temp_dir() + "/x.csv");
  CHECK(r.code == 2);
  CHECK(r.err.rfind(missing + ": cannot open file", 0) == 0);
  CHECK_FALSE(exists(temp_dir() + "/x.csv"));
}

TEST_CASE("usage errors and help") {
  const Run help = run_nestsim("pairs --help");
  CHECK(help.code == 0);
  for (const std::string& name : method_names()) {  // every method is documented
    CAPTURE(name);
    CHECK(help.out.find("\n  " + name + " ") != std::string::npos);
  }
  CHECK(run_nestsim("--help").code == 0);
  const std::string path = write_file("ok.csv", "x,y,z,radius,thickness\n0,0,0,1,0\n");
  CHECK(run_nestsim("pairs " + path + " --precision half").code == 2);
  CHECK(run_nestsim("pairs " + path + " --periodic").code == 2);
  CHECK(run_nestsim("pairs " + path + " --bench 0").code == 2);
  CHECK(run_nestsim("pairs " + path + " --hsx-small-n -1").code == 2);
  CHECK(run_nestsim("pairs " + path + " --hsx-small-n many").code == 2);
  CHECK(run_nestsim("pairs " + path + " --grid-sort bubble").code == 2);
  CHECK(run_nestsim("pairs " + path + " --grid-sort").code == 2);
  CHECK(run_nestsim("pairs " + path + " --method nope").code == 2);
  CHECK(run_nestsim("pairs").code == 2);
  CHECK(run_nestsim("frobnicate").code == 2);
}

TEST_CASE("-o writes a regular file only where one or nothing was; streams go through") {
  const scenes::Scene s = scenes::cell_like(400, 5);
  io::Scene scene;
  scene.bodies = s.bodies;
  const std::string path = temp_dir() + "/out_cases.csv";
  io::write_scene_csv(path, scene);
  const Run plain = run_nestsim("pairs " + path);
  REQUIRE(plain.code == 0);
  REQUIRE(plain.out.size() > 100);
  struct stat st;

  // "-" is standard output.
  Run r = run_nestsim("pairs " + path + " -o -");
  CHECK(r.code == 0);
  CHECK(r.out == plain.out);

  // A FIFO is written through and stays a FIFO.
  const std::string fifo = temp_dir() + "/pairs.fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
  r = run_shell("cat " + fifo + " > " + fifo + ".read & " + NESTSIM_BINARY + " pairs " + path +
                " -o " + fifo + "; status=$?; wait; exit $status");
  CHECK_MESSAGE(r.code == 0, r.err);
  CHECK(slurp(fifo + ".read") == plain.out);
  REQUIRE(::lstat(fifo.c_str(), &st) == 0);
  CHECK(S_ISFIFO(st.st_mode));

  // A link to a regular file: the target is replaced, the link stays.
  const std::string target = temp_dir() + "/target.csv", link = temp_dir() + "/link.csv";
  write_file("target.csv", "old\n");
  REQUIRE(::symlink(target.c_str(), link.c_str()) == 0);
  r = run_nestsim("pairs " + path + " -o " + link);
  CHECK_MESSAGE(r.code == 0, r.err);
  REQUIRE(::lstat(link.c_str(), &st) == 0);
  CHECK(S_ISLNK(st.st_mode));
  CHECK(slurp(target) == plain.out);

  // Directories, links to them and dangling links are refused, and stay as they were.
  const std::string dir = temp_dir() + "/a_directory", dir_link = temp_dir() + "/dir_link",
                    dangling = temp_dir() + "/dangling";
  REQUIRE(::mkdir(dir.c_str(), 0755) == 0);
  REQUIRE(::symlink(dir.c_str(), dir_link.c_str()) == 0);
  REQUIRE(::symlink((temp_dir() + "/nothing/here").c_str(), dangling.c_str()) == 0);
  for (const std::string& where : {dir, dir_link, dangling}) {
    CAPTURE(where);
    r = run_nestsim("pairs " + path + " -o " + where);
    CHECK(r.code == 2);
    CHECK_MESSAGE(r.err.find(where) != std::string::npos, r.err);
  }
  REQUIRE(::stat(dir.c_str(), &st) == 0);
  CHECK(S_ISDIR(st.st_mode));
  REQUIRE(::lstat(dir_link.c_str(), &st) == 0);
  CHECK(S_ISLNK(st.st_mode));
  REQUIRE(::lstat(dangling.c_str(), &st) == 0);
  CHECK(S_ISLNK(st.st_mode));

  // A write that fails (a file size limit, as a full disk) names the reason, exit 1, and
  // leaves neither the file nor its temporary.
  const std::string limited = temp_dir() + "/limited_dir";
  REQUIRE(::mkdir(limited.c_str(), 0755) == 0);
  r = run_shell("prlimit --fsize=100 " + std::string(NESTSIM_BINARY) + " pairs " + path +
                " -o " + limited + "/pairs.csv");
  CHECK(r.code == 1);
  CHECK_MESSAGE(r.err.find("pairs.csv: write failed: File too large") != std::string::npos, r.err);
  CHECK(run_shell("ls -A " + limited).out.empty());
}

namespace {

// A scene of `n` bodies spread over [-extent, extent]^3, every |coordinate| at least
// extent / 10 (radius r, thickness r / 2), each tenth with a partner touching it, and
// two more touching bodies.
std::string spread_scene(const std::string& name, double extent, double r, int n = 300) {
  std::ostringstream text;
  text.precision(17);
  text << "x,y,z,radius,thickness\n";
  uint64_t state = 12345;
  auto uniform = [&] {  // a small LCG: the same scene on every platform
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const double u = double(state >> 11) * 0x1p-53 * 2 - 1;
    return (u < 0 ? -0.1 : 0.1) + 0.9 * u;
  };
  for (int i = 0; i < n; ++i) {
    const double x = extent * uniform(), y = extent * uniform(), z = extent * uniform();
    text << x << "," << y << "," << z << "," << r << "," << r / 2 << "\n";
    if (i % 10 == 0) text << x + (x < 0 ? 1.5 : -1.5) * r << "," << y << "," << z << "," << r
                          << "," << r / 2 << "\n";
  }
  text << extent / 2 << "," << extent / 2 << "," << extent / 2 << "," << r << "," << r / 2
       << "\n";
  text << extent / 2 - 1.5 * r << "," << extent / 2 << "," << extent / 2 << "," << r << ","
       << r / 2 << "\n";
  return write_file(name, text.str());
}

}  // namespace

TEST_CASE("huge and tiny magnitudes: exact inside the supported range, refused outside") {
  // Near the edges of the range every method gives brute force's pairs.
  struct Inside {
    const char* precision;
    double extent, radius;
  };
  for (const Inside& c : {Inside{"double", 0.99e150, 1}, Inside{"double", 1e149, 5e148},
                          Inside{"double", 1e-127, 1e-129}, Inside{"float", 0.99e18, 1},
                          Inside{"float", 1e17, 5e16}, Inside{"float", 1e-9, 1e-11}}) {
    INFO(std::string(c.precision) << " " << c.extent);
    const std::string scene = spread_scene("inside.csv", c.extent, c.radius);
    const std::string flags = std::string(" --count --precision ") + c.precision;
    const Run brute = run_nestsim("pairs " + scene + flags + " --method brute");
    REQUIRE_MESSAGE(brute.code == 0, brute.err);
    CHECK(std::stoul(brute.out) >= 31);  // the partners do touch
    for (const std::string& m : method_names()) {
      CAPTURE(m);
      const Run r = run_nestsim("pairs " + scene + flags + " --method " + m + " --hsx-small-n 0");
      CHECK(r.code == 0);
      CHECK(r.out == brute.out);
    }
  }
  // Outside: exit 2, the scene's line, and the supported range.
  struct Outside {
    const char* what;
    double extent, radius;
    std::string flags;
    std::string says;
  };
  const std::vector<Outside> outside = {
      {"coordinates 1e165", 1e165, 1, "", "supported range"},
      {"float from 1e25", 1e25, 1, " --precision float", "1e+18 in float precision"},
      {"tiny radii", 1e-300, 1e-303, "", "1e-130 to 1e+150 in double"},
      {"tiny float coordinates", 1e-20, 1, " --precision float", "from 1e-12 to 1e+18"},
  };
  for (const Outside& c : outside) {
    CAPTURE(c.what);
    const std::string scene = spread_scene("outside.csv", c.extent, c.radius);
    const Run r = run_nestsim("pairs " + scene + c.flags + " --count");
    CHECK(r.code == 2);
    CHECK_MESSAGE(r.err.rfind(scene + ":", 0) == 0, r.err);
    CHECK_MESSAGE(r.err.find(c.says) != std::string::npos, r.err);
  }
  const std::string scene = spread_scene("moderate.csv", 100, 1);
  Run r = run_nestsim("pairs " + scene + " --skin 1e155 --count");
  CHECK(r.code == 2);
  CHECK_MESSAGE(r.err.find("skin 1e+155 is outside the supported range") != std::string::npos,
                r.err);
  r = run_nestsim("pairs " + scene + " --box 1e-300,1e-300,1e-300 --periodic --count");
  CHECK(r.code == 2);
  CHECK_MESSAGE(r.err.find("box edge 1e-300") != std::string::npos, r.err);
  r = run_nestsim("pairs " + scene + " --box 1e-10,1e-10,1e-10 --periodic --count");
  CHECK(r.code == 2);
  CHECK_MESSAGE(r.err.find("is below 2^-30 of the largest radius + skin") != std::string::npos,
                r.err);
  // A periodic box at the lower bound of edge / (radius + skin), and huge edges: exact.
  for (const char* box : {"0.0000000019,0.0000000019,0.0000000019", "1e149,1e149,1e149"}) {
    CAPTURE(box);
    const std::string flags = std::string(" --count --periodic --box ") + box;
    const Run brute = run_nestsim("pairs " + scene + flags + " --method brute");
    REQUIRE_MESSAGE(brute.code == 0, brute.err);
    for (const std::string& m : method_names()) {
      CAPTURE(m);
      r = run_nestsim("pairs " + scene + flags + " --method " + m + " --hsx-small-n 0");
      CHECK(r.code == 0);
      CHECK(r.out == brute.out);
    }
  }
}
