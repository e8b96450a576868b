// `nestsim analyze` end to end: a hand-made trajectory whose counts by location, mean
// squared displacements (across a periodic wrap) and contact counts are known, event
// counters under /observables, plots, and files that are not trajectories.
#include <doctest/doctest.h>
#include <hdf5.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "nestsim/io/h5md.h"
#include "cli_helpers.h"
#include "reference.h"

using namespace nestsim;
using namespace nestsim::testing;

namespace {

// A CSV file (no quoted fields) as rows of column -> text.
std::vector<std::map<std::string, std::string>> read_csv(const std::string& path) {
  std::ifstream in(path);
  REQUIRE(in.good());
  auto split = [](const std::string& line) {
    std::vector<std::string> fields;
    std::stringstream s(line);
    for (std::string f; std::getline(s, f, ',');) fields.push_back(f);
    return fields;
  };
  std::string line;
  std::getline(in, line);
  const std::vector<std::string> header = split(line);
  std::vector<std::map<std::string, std::string>> rows;
  while (std::getline(in, line)) {
    const std::vector<std::string> fields = split(line);
    REQUIRE(fields.size() == header.size());
    std::map<std::string, std::string> row;
    for (std::size_t c = 0; c < header.size(); ++c) row[header[c]] = fields[c];
    rows.push_back(row);
  }
  return rows;
}

// The units the trajectory below uses: nm and us.
enum Kind : int32_t { cell, ves, lig, rec };

model::Setup make_setup() {
  model::Setup s;
  s.box = {100, 100, 100};
  s.boundary = model::Boundary::periodic;
  s.dt = 0.5;
  s.seed = 7;
  auto kind = [&](const char* name, bool compartment, double r, double q, double D) {
    model::Kind k;
    k.name = name;
    k.compartment = compartment;
    k.radius = r;
    k.thickness = q;
    k.diffusion = D;
    k.membrane = std::string(name) == "rec";
    s.kinds.push_back(k);
  };
  kind("cell", true, 30, 4, 0);
  kind("ves", true, 8, 2, 1);
  kind("lig", false, 1, 1, 50);
  kind("rec", false, 1.5, 1.5, 1);
  s.capacity = 8;
  s.model_text = "(made in test_analyze.cpp)";
  return s;
}

struct Placed {
  int64_t id;
  int32_t kind;
  std::array<double, 3> position;
  int64_t parent = -1, membrane = -1;
};

model::Frame make_frame(const model::Setup& s, uint64_t step, const std::vector<Placed>& bodies,
                      uint64_t next_id) {
  model::Frame f;
  f.step = step;
  f.time = double(step) * s.dt;
  f.next_id = next_id;
  for (const Placed& b : bodies) {
    f.id.push_back(b.id);
    f.kind.push_back(b.kind);
    f.position.push_back(b.position);
    f.radius.push_back(s.kinds[std::size_t(b.kind)].radius);
    f.thickness.push_back(s.kinds[std::size_t(b.kind)].thickness);
    f.parent.push_back(b.parent);
    f.membrane.push_back(b.membrane);
  }
  return f;
}

// Frame 0: a cell holding a vesicle (with a ligand in it), a ligand in its lumen and a
// receptor in its membrane; two ligands outside that touch across the periodic x edge.
// Frame 1 (step 10): ligand 3 gone, ligand 7 new; the vesicle moves 2 in z carrying its
// ligand, which also moves 1 in y; ligand 5 crosses x = 100, ligand 6 crosses x = 0.
// Frame 2 (step 20): ligand 2 has left the vesicle for the cell's lumen; 5 and 6 go on.
// Frame 3 (step 30): as frame 2 plus 150 bodies placed at random, for the contact counts.
std::vector<model::Frame> make_frames(const model::Setup& s) {
  std::vector<model::Frame> frames;
  std::vector<Placed> b = {
      {0, cell, {50, 50, 50}},   {1, ves, {40, 50, 50}, 0},     {2, lig, {40, 50, 50}, 1},
      {3, lig, {60, 50, 50}, 0}, {4, rec, {78, 50, 50}, -1, 0}, {5, lig, {99.2, 50, 50}},
      {6, lig, {0.5, 50, 50}},
  };
  frames.push_back(make_frame(s, 0, b, 7));

  b.erase(b.begin() + 3);  // ligand 3
  b[1].position = {40, 50, 52};
  b[2].position = {40, 51, 52};
  b[4].position = {0.7, 50, 50};   // 99.2 + 1.5
  b[5].position = {99.5, 50, 50};  // 0.5 - 1
  b.push_back({7, lig, {20, 20, 20}});
  frames.push_back(make_frame(s, 10, b, 8));

  b[2].position = {40, 62, 52};
  b[2].parent = 0;
  b[4].position = {1.7, 50, 50};
  b[5].position = {99.0, 50, 50};
  frames.push_back(make_frame(s, 20, b, 8));

  std::mt19937_64 random(42);
  std::uniform_real_distribution<double> in_box(0, 100), offset(-5, 5);
  int64_t id = 8;
  for (int k = 0; k < 30; ++k) {
    const std::array<double, 3> c{in_box(random), in_box(random), in_box(random)};
    b.push_back({id++, ves, c});
    for (int j = 0; j < 4; ++j)  // ligands in and around the vesicle
      b.push_back({id++,
                   lig,
                   {std::fmod(c[0] + offset(random) + 100, 100.0),
                    std::fmod(c[1] + offset(random) + 100, 100.0),
                    std::fmod(c[2] + offset(random) + 100, 100.0)}});
  }
  frames.push_back(make_frame(s, 30, b, uint64_t(id)));
  return frames;
}

std::string write_trajectory(const std::string& name, const std::vector<model::Frame>& frames,
                             const model::Setup& setup = make_setup()) {
  const std::string path = temp_dir() + "/" + name;
  io::H5mdWriter w(path, setup, "0.1.0-test");
  for (const auto& f : frames) w.write(f);
  w.close();
  return path;
}

// The contacts of a frame by the test's own double loop (reference.h).
std::pair<std::size_t, std::size_t> reference_contacts(const model::Frame& f) {
  SphereSet<double> bodies;
  for (std::size_t s = 0; s < f.id.size(); ++s)
    if (f.id[s] >= 0)
      bodies.push_back(f.position[s][0], f.position[s][1], f.position[s][2], f.radius[s],
                       f.thickness[s]);
  BroadphaseOptions o;
  o.domain.periodic = true;
  o.domain.size = {100, 100, 100};
  const std::size_t hollow = reference_pairs(bodies, o).size();
  o.overlap = Overlap::solid;
  return {hollow, reference_pairs(bodies, o).size()};
}

std::string count_of(const std::vector<std::map<std::string, std::string>>& rows,
                     const std::string& frame, const std::string& kind,
                     const std::string& location) {
  for (const auto& r : rows)
    if (r.at("frame") == frame && r.at("kind") == kind && r.at("location") == location)
      return r.at("count");
  return "absent";
}

double msd_of(const std::vector<std::map<std::string, std::string>>& rows, const std::string& frame,
              const std::string& kind, std::string* bodies) {
  for (const auto& r : rows)
    if (r.at("frame") == frame && r.at("kind") == kind) {
      *bodies = r.at("bodies");
      return std::stod(r.at("msd_nm2"));
    }
  *bodies = "absent";
  return NAN;
}

}  // namespace

TEST_CASE("counts by location, MSD across periodic wraps, and HSX against SSX") {
  const std::vector<model::Frame> frames = make_frames(make_setup());
  const std::string path = write_trajectory("hand.h5", frames);
  const std::string dir = temp_dir() + "/tables";
  const Run r = run_nestsim("analyze " + path + " --csv " + dir);
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("4 frames") != std::string::npos);
  CHECK(r.out.find("no reaction rules in this model") != std::string::npos);
  CHECK(r.out.find("lig in ves") != std::string::npos);

  SUBCASE("counts") {
    const auto rows = read_csv(dir + "/counts.csv");
    CHECK(count_of(rows, "0", "cell", "outside") == "1");
    CHECK(count_of(rows, "0", "ves", "in cell") == "1");
    CHECK(count_of(rows, "0", "lig", "in ves") == "1");
    CHECK(count_of(rows, "0", "lig", "in cell") == "1");
    CHECK(count_of(rows, "0", "lig", "outside") == "2");
    CHECK(count_of(rows, "0", "rec", "on cell") == "1");
    CHECK(count_of(rows, "0", "rec", "outside") == "absent");  // never occupied
    CHECK(count_of(rows, "1", "lig", "in ves") == "1");
    CHECK(count_of(rows, "1", "lig", "in cell") == "0");
    CHECK(count_of(rows, "1", "lig", "outside") == "3");
    CHECK(count_of(rows, "2", "lig", "in ves") == "0");
    CHECK(count_of(rows, "2", "lig", "in cell") == "1");
    CHECK(count_of(rows, "2", "rec", "on cell") == "1");
    CHECK(count_of(rows, "3", "ves", "outside") == "30");
    CHECK(count_of(rows, "3", "lig", "outside") == "123");
    CHECK(rows.front().count("time_us") == 1);
    CHECK(count_of(rows, "2", "lig", "in cell") == "1");
    for (const auto& row : rows)
      if (row.at("frame") == "2") CHECK(row.at("time_us") == "10");
  }

  SUBCASE("mean squared displacement") {
    const auto rows = read_csv(dir + "/msd.csv");
    std::string n;
    CHECK(msd_of(rows, "0", "lig", &n) == 0);
    CHECK(n == "4");
    // Frame 1: ligands 2 (0,1,2), 5 (+1.5 across x = 100), 6 (-1 across x = 0); 3 gone,
    // 7 not in frame 0.
    CHECK(msd_of(rows, "1", "lig", &n) == doctest::Approx((5 + 2.25 + 1) / 3.0));
    CHECK(n == "3");
    CHECK(msd_of(rows, "1", "ves", &n) == doctest::Approx(4));
    CHECK(n == "1");
    CHECK(msd_of(rows, "1", "cell", &n) == 0);
    // Frame 2: ligand 2 at (0,12,2), 5 at +2.5, 6 at -1.5 from where they started.
    CHECK(msd_of(rows, "2", "lig", &n) == doctest::Approx((148 + 6.25 + 2.25) / 3.0));
    CHECK(msd_of(rows, "3", "lig", &n) == doctest::Approx((148 + 6.25 + 2.25) / 3.0));
    CHECK(n == "3");  // the random bodies of frame 3 are not followed
    CHECK(msd_of(rows, "2", "rec", &n) == 0);
  }

  SUBCASE("contacts") {
    const auto rows = read_csv(dir + "/contacts.csv");
    REQUIRE(rows.size() == 4);
    // Frame 0 by hand: HSX the receptor and its cell, the ligands across the x edge;
    // SSX also the cell with the vesicle and both ligands inside, the vesicle with its.
    CHECK(rows[0].at("bodies") == "7");
    CHECK(rows[0].at("hsx") == "2");
    CHECK(rows[0].at("ssx") == "6");
    for (std::size_t f = 0; f < frames.size(); ++f) {
      const auto [hollow, solid] = reference_contacts(frames[f]);
      CHECK(rows[f].at("hsx") == std::to_string(hollow));
      CHECK(rows[f].at("ssx") == std::to_string(solid));
    }
    const auto [hollow, solid] = reference_contacts(frames[3]);
    CHECK(solid > hollow + 20);  // ligands inside the random vesicles
  }

  SUBCASE("events.csv has a header only") {
    CHECK(slurp(dir + "/events.csv") == "frame,step,time_us,observable,column,value\n");
  }
}

TEST_CASE("event counters under /observables appear without code changes") {
  const std::vector<model::Frame> frames = make_frames(make_setup());
  const std::string path = write_trajectory("events.h5", frames);
  {  // A cumulative counter, as a reaction engine would write it: [frame][rule].
    const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    REQUIRE(f >= 0);
    const hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    H5Pset_create_intermediate_group(lcpl, 1);
    const hsize_t dims[2] = {4, 2};
    const hid_t space = H5Screate_simple(2, dims, nullptr);
    const hid_t d = H5Dcreate2(f, "/observables/events/reactions/value", H5T_STD_I64LE, space, lcpl,
                               H5P_DEFAULT, H5P_DEFAULT);
    REQUIRE(d >= 0);
    const int64_t counts[8] = {0, 0, 2, 1, 5, 1, 9, 4};
    REQUIRE(H5Dwrite(d, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, counts) >= 0);
    const hid_t type = H5Tcopy(H5T_C_S1);
    H5Tset_size(type, H5T_VARIABLE);
    const hsize_t two = 2;
    const hid_t label_space = H5Screate_simple(1, &two, nullptr);
    const hid_t a = H5Acreate2(d, "labels", type, label_space, H5P_DEFAULT, H5P_DEFAULT);
    const char* labels[2] = {"binding", "unbinding"};
    REQUIRE(H5Awrite(a, type, labels) >= 0);
    H5Aclose(a);
    H5Sclose(label_space);
    H5Tclose(type);
    H5Dclose(d);
    H5Sclose(space);
    H5Pclose(lcpl);
    H5Fclose(f);
  }
  const std::string dir = temp_dir() + "/events";
  const Run r = run_nestsim("analyze " + path + " --csv " + dir);
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("no reaction rules") == std::string::npos);
  CHECK(r.out.find("events/reactions: binding=9 unbinding=4") != std::string::npos);
  const auto rows = read_csv(dir + "/events.csv");
  REQUIRE(rows.size() == 8);
  CHECK(rows[2].at("frame") == "1");
  CHECK(rows[2].at("observable") == "events/reactions");
  CHECK(rows[2].at("column") == "binding");
  CHECK(rows[2].at("value") == "2");
  CHECK(rows[7].at("column") == "unbinding");
  CHECK(rows[7].at("value") == "4");
}

TEST_CASE("reaction counts per interval: totals are sums, reactions.csv; list sizes") {
  model::Setup s = make_setup();
  for (const char* name : {"bind", "unbind"}) {
    model::Reaction rule;
    rule.name = name;
    s.reactions.push_back(rule);
  }
  s.collision = model::Collision::solid;
  std::vector<model::Frame> frames = make_frames(s);
  REQUIRE(frames.size() == 4);
  // Cumulative counts as the engine reports them; the file keeps the increments
  // {0,0}, {2,1}, {3,0}, {4,3}.
  const std::vector<std::vector<uint64_t>> cumulative = {{0, 0}, {2, 1}, {5, 1}, {9, 4}};
  const int64_t lists[4] = {-1, 11, 12, 13};  // frame 0: not known
  for (std::size_t f = 0; f < 4; ++f) {
    frames[f].reaction_events = cumulative[f];
    frames[f].broadphase_pairs = lists[f];
  }
  const std::string path = write_trajectory("reactions.h5", frames, s);
  const std::string dir = temp_dir() + "/reactions";
  const Run r = run_nestsim("analyze " + path + " --csv " + dir);
  INFO(r.err);
  REQUIRE(r.code == 0);
  INFO(r.out);
  CHECK(r.out.find("no reaction rules") == std::string::npos);
  CHECK(r.out.find("reactions/bind: 9\n") != std::string::npos);
  CHECK(r.out.find("reactions/unbind: 4\n") != std::string::npos);
  CHECK(r.out.find("  reactions: 13\n") != std::string::npos);  // all rules
  CHECK(r.out.find("Other observables") == std::string::npos);  // lists are not one
  CHECK(r.out.find("solid broad phase") != std::string::npos);

  const auto reactions = read_csv(dir + "/reactions.csv");
  REQUIRE(reactions.size() == 4);
  const char* bind[4] = {"0", "2", "3", "4"};
  const char* unbind[4] = {"0", "1", "0", "3"};
  for (std::size_t f = 0; f < 4; ++f) {
    CHECK(reactions[f].at("frame") == std::to_string(f));
    CHECK(reactions[f].at("step") == std::to_string(10 * f));
    CHECK(reactions[f].at("time_us") == std::to_string(5 * f));
    CHECK(reactions[f].at("bind") == bind[f]);
    CHECK(reactions[f].at("unbind") == unbind[f]);
  }
  const auto contacts = read_csv(dir + "/contacts.csv");
  REQUIRE(contacts.size() == 4);
  for (std::size_t f = 0; f < 4; ++f) CHECK(contacts[f].at("lists") == std::to_string(lists[f]));

  // The contact table: a lists column, "-" where unknown.
  const std::size_t table = r.out.find("Contacts:");
  REQUIRE(table != std::string::npos);
  std::istringstream lines(r.out.substr(table));
  std::vector<std::vector<std::string>> rows;
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::vector<std::string> cells;
    for (std::string w; words >> w;) cells.push_back(w);
    if (!cells.empty() && cells[0].find_first_not_of("0123456789") == std::string::npos)
      rows.push_back(cells);
  }
  REQUIRE(rows.size() == 4);
  for (std::size_t f = 0; f < 4; ++f)
    CHECK(rows[f].back() == (f == 0 ? "-" : std::to_string(lists[f])));
}

TEST_CASE("without reaction rules or list sizes: reactions.csv has no rule column") {
  const std::string path = write_trajectory("plain.h5", make_frames(make_setup()));
  const std::string dir = temp_dir() + "/plain";
  const Run r = run_nestsim("analyze " + path + " --csv " + dir);
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("lists") == std::string::npos);  // every frame: unknown
  const auto reactions = read_csv(dir + "/reactions.csv");
  REQUIRE(reactions.size() == 4);
  CHECK(reactions[0].size() == 3);  // frame, step, time_us
}

TEST_CASE("--plot writes PNG files") {
  if (std::system("/usr/bin/python3 -c 'import matplotlib' > /dev/null 2>&1") != 0) {
    MESSAGE("skipped: /usr/bin/python3 has no matplotlib");
    return;
  }
  const std::string path = write_trajectory("plot.h5", make_frames(make_setup()));
  const std::string dir = temp_dir() + "/plots";
  const Run r = run_nestsim("analyze " + path + " --plot " + dir);
  INFO(r.err);
  REQUIRE(r.code == 0);
  for (const char* name : {"counts.png", "msd.png", "contacts.png"}) {
    const std::string png = slurp(dir + "/" + name);
    INFO(name);
    REQUIRE(png.size() > 1000);
    CHECK(png.compare(0, 8, "\x89PNG\r\n\x1a\n") == 0);
  }
  CHECK(exists(dir + "/counts.csv"));           // the tables the plots come from
  CHECK_FALSE(exists(dir + "/reactions.png"));  // no reaction rules

  model::Setup s = make_setup();
  model::Reaction rule;
  rule.name = "bind";
  s.reactions.push_back(rule);
  std::vector<model::Frame> frames = make_frames(s);
  for (std::size_t f = 0; f < frames.size(); ++f) frames[f].reaction_events = {3 * f};
  const std::string with_rules = write_trajectory("plot_rules.h5", frames, s);
  const std::string rules_dir = temp_dir() + "/plots_rules";
  const Run rr = run_nestsim("analyze " + with_rules + " --plot " + rules_dir);
  INFO(rr.err);
  REQUIRE(rr.code == 0);
  const std::string png = slurp(rules_dir + "/reactions.png");
  REQUIRE(png.size() > 1000);
  CHECK(png.compare(0, 8, "\x89PNG\r\n\x1a\n") == 0);
}

TEST_CASE("files that are not trajectories") {
  Run r = run_nestsim("analyze " + temp_dir() + "/missing.h5");
  CHECK(r.code == 2);
  CHECK(r.err.find("missing.h5: cannot open: no such file") != std::string::npos);

  const std::string text = temp_dir() + "/text.h5";
  std::ofstream(text) << "frame,x\n0,1\n";
  r = run_nestsim("analyze " + text + " --csv " + temp_dir() + "/no_tables");
  CHECK(r.code == 2);
  CHECK(r.err.find("text.h5: not a nestsim trajectory (not an HDF5 file)") != std::string::npos);
  CHECK_FALSE(exists(temp_dir() + "/no_tables/counts.csv"));

  const std::string other = temp_dir() + "/other.h5";
  H5Fclose(H5Fcreate(other.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
  r = run_nestsim("analyze " + other);
  CHECK(r.code == 2);
  CHECK(r.err.find("other.h5: not a nestsim trajectory (") != std::string::npos);
  CHECK(r.out.empty());

  r = run_nestsim("analyze");
  CHECK(r.code == 2);
  CHECK(r.err.find("no trajectory given") != std::string::npos);
  r = run_nestsim("analyze --help");
  CHECK(r.code == 0);
  CHECK(r.out.find("usage: nestsim analyze") != std::string::npos);
}
