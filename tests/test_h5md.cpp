// H5MD trajectories: the layout tools rely on, a bitwise round trip, appending,
// files of killed runs, reaction counts and list sizes, older files, and files that are
// not nestsim trajectories.
#include <doctest/doctest.h>
#include <hdf5.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "h5_read.h"
#include "nestsim/io/h5md.h"
#include "nestsim/model/model.h"
#include "nestsim/model/placement.h"
#include "nestsim/io/trajectory.h"

using namespace nestsim;

namespace {

std::string temp_path(const std::string& name) {
  return "/tmp/nestsim_test_h5md_" + std::to_string(::getpid()) + "_" + name;
}

const std::string model_text = R"(nestsim: 1
units: {length: nm, time: us}
box: {size: [400, 400, 400], boundary: periodic}
simulation: {dt: 0.5, seed: 3, capacity: 300}
compartments:
  cell: {radius: 150, thickness: 8, diffusion: 0}
  ves: {radius: 20, thickness: 4, diffusion: 1}
species:
  lig: {radius: 2, diffusion: 80}
  rec: {radius: 3, diffusion: 1, membrane: true}
interactions: {repulsion: 0}   # no soft contacts: any dt is accurate (the file is the point)
place:
  - {compartment: cell, at: [200, 200, 200]}
  - {compartment: ves, count: 3, in: cell}
  - {species: rec, count: 20, on: cell}
  - {species: lig, count: 30, in: cell}
  - {species: lig, count: 10, in: ves}
  - {species: lig, count: 40, outside: cell}
)";

model::Setup test_setup() { return model::make_setup(model::parse_model(model_text, "t.yaml")); }

// Frame k of a made-up run: positions moved by awkward doubles, body 5 removed at k >= 2.
model::Frame frame_at(const model::Setup& s, uint64_t k) {
  model::Frame f = io::frame_from_setup(s);
  f.step = 10 * k;
  f.time = double(f.step) * s.dt;
  for (std::size_t i = 0; i < f.position.size(); ++i)
    for (int d = 0; d < 3; ++d)
      f.position[i][d] = std::fmod(f.position[i][d] + k * (0.1 + i * 1e-7) + d / 3.0, 400.0);
  if (k >= 2) f.id[5] = -1;
  f.image.resize(f.position.size());
  for (std::size_t i = 0; i < f.image.size(); ++i)
    f.image[i] = {int32_t(k) - int32_t(i % 3), int32_t(i % 5), -int32_t(k * i % 7)};
  return f;
}

bool same_bits(const model::Frame& a, const model::Frame& b) {
  const std::size_t n = a.id.size();
  // Slots beyond `a` read back empty.
  for (std::size_t s = n; s < b.id.size(); ++s)
    if (b.id[s] != -1 || b.kind[s] != -1 || b.parent[s] != -1 || b.membrane[s] != -1)
      return false;
  if (b.id.size() < n) return false;
  bool same = a.step == b.step && std::memcmp(&a.time, &b.time, sizeof a.time) == 0 &&
              a.next_id == b.next_id;
  for (std::size_t s = 0; s < n; ++s) {
    same = same && a.id[s] == b.id[s];
    if (a.id[s] < 0) continue;
    // Images a frame does not give are stored as 0.
    const std::array<int32_t, 3> image = s < a.image.size() ? a.image[s] : std::array<int32_t, 3>{};
    same = same && b.image.size() >= n && image == b.image[s];
    same = same && std::memcmp(a.position[s].data(), b.position[s].data(), 24) == 0 &&
           a.kind[s] == b.kind[s] && a.parent[s] == b.parent[s] &&
           a.membrane[s] == b.membrane[s] &&
           std::memcmp(&a.radius[s], &b.radius[s], 8) == 0 &&
           std::memcmp(&a.thickness[s], &b.thickness[s], 8) == 0;
  }
  return same;
}

std::vector<hsize_t> dims_of(hid_t file, const char* path) {
  const hid_t d = H5Dopen2(file, path, H5P_DEFAULT);
  REQUIRE(d >= 0);
  const hid_t space = H5Dget_space(d);
  std::vector<hsize_t> dims(H5Sget_simple_extent_ndims(space));
  H5Sget_simple_extent_dims(space, dims.data(), nullptr);
  H5Sclose(space);
  H5Dclose(d);
  return dims;
}

template <typename T>
std::vector<T> read_all(hid_t file, const char* path, hid_t type) {
  const hid_t d = H5Dopen2(file, path, H5P_DEFAULT);
  REQUIRE(d >= 0);
  const hid_t space = H5Dget_space(d);
  std::vector<T> data(H5Sget_simple_extent_npoints(space));
  REQUIRE(H5Dread(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data()) >= 0);
  H5Sclose(space);
  H5Dclose(d);
  return data;
}

std::string string_attribute(hid_t file, const char* object, const char* name) {
  const hid_t a = H5Aopen_by_name(file, object, name, H5P_DEFAULT, H5P_DEFAULT);
  REQUIRE(a >= 0);
  const hid_t type = H5Tcopy(H5T_C_S1);
  H5Tset_size(type, H5T_VARIABLE);
  H5Tset_cset(type, H5T_CSET_UTF8);
  char* text = nullptr;
  REQUIRE(H5Aread(a, type, &text) >= 0);
  std::string value = text;
  H5free_memory(text);
  H5Tclose(type);
  H5Aclose(a);
  return value;
}

void write_run(const std::string& path, const model::Setup& s, uint64_t frames) {
  io::H5mdWriter w(path, s, "0.1.0-test");
  for (uint64_t k = 0; k < frames; ++k) w.write(frame_at(s, k));
}

}  // namespace

TEST_CASE("the file has the H5MD layout") {
  const model::Setup s = test_setup();
  const std::string path = temp_path("layout.h5");
  write_run(path, s, 3);
  const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(f >= 0);
  const std::size_t n = s.bodies.size(), K = s.kinds.size();
  REQUIRE(n == 104);
  REQUIRE(s.capacity == 300);

  const auto version =
      [&] {
        const hid_t a = H5Aopen_by_name(f, "/h5md", "version", H5P_DEFAULT, H5P_DEFAULT);
        REQUIRE(a >= 0);
        std::vector<int> v(2);
        H5Aread(a, H5T_NATIVE_INT, v.data());
        H5Aclose(a);
        return v;
      }();
  CHECK(version == std::vector<int>{1, 1});
  CHECK(string_attribute(f, "/h5md/creator", "name") == "nestsim");
  CHECK(string_attribute(f, "/h5md/creator", "version") == "0.1.0-test");
  CHECK(!string_attribute(f, "/h5md/author", "name").empty());
  CHECK(string_attribute(f, "/particles/bodies/position/value", "unit") == "nm");
  CHECK(string_attribute(f, "/particles/bodies/position/time", "unit") == "ns");
  CHECK(string_attribute(f, "/observables/model_time/value", "unit") == "us");
  {
    const hid_t a = H5Aopen_by_name(f, "/particles/bodies/box", "boundary", H5P_DEFAULT,
                                    H5P_DEFAULT);
    REQUIRE(a >= 0);
    const hid_t type = H5Tcopy(H5T_C_S1);
    H5Tset_size(type, H5T_VARIABLE);
  H5Tset_cset(type, H5T_CSET_UTF8);
    char* text[3] = {};
    REQUIRE(H5Aread(a, type, text) >= 0);
    for (char* t : text) {
      CHECK(std::string(t) == "periodic");
      H5free_memory(t);
    }
    H5Tclose(type);
    H5Aclose(a);
    int dimension = 0;
    const hid_t d = H5Aopen_by_name(f, "/particles/bodies/box", "dimension", H5P_DEFAULT,
                                    H5P_DEFAULT);
    H5Aread(d, H5T_NATIVE_INT, &dimension);
    H5Aclose(d);
    CHECK(dimension == 3);
  }
  CHECK(dims_of(f, "/particles/bodies/position/value") == std::vector<hsize_t>{3, 300, 3});
  for (const char* p : {"/particles/bodies/id/value", "/particles/bodies/species/value",
                        "/particles/bodies/radius/value", "/particles/bodies/thickness/value",
                        "/particles/bodies/parent/value", "/particles/bodies/membrane/value"})
    CHECK(dims_of(f, p) == std::vector<hsize_t>{3, 300});
  CHECK(dims_of(f, "/particles/bodies/box/edges/value") == std::vector<hsize_t>{3, 3, 3});
  const auto edges = read_all<double>(f, "/particles/bodies/box/edges/value", H5T_NATIVE_DOUBLE);
  CHECK(std::vector<double>(edges.begin(), edges.begin() + 9) ==
        std::vector<double>{400, 0, 0, 0, 400, 0, 0, 0, 400});
  CHECK(dims_of(f, "/observables/kind_count/value") == std::vector<hsize_t>{3, K});
  CHECK(dims_of(f, "/observables/container_count/value") == std::vector<hsize_t>{3, K, K + 1});
  CHECK(dims_of(f, "/parameters/species_names") == std::vector<hsize_t>{K});
  for (const char* group : {"/particles/bodies/id", "/particles/bodies/box/edges",
                            "/observables/body_count", "/observables/next_id"}) {
    CHECK(dims_of(f, (std::string(group) + "/step").c_str()) == std::vector<hsize_t>{3});
    CHECK(dims_of(f, (std::string(group) + "/time").c_str()) == std::vector<hsize_t>{3});
  }
  CHECK(read_all<int64_t>(f, "/particles/bodies/id/step", H5T_NATIVE_INT64) ==
        std::vector<int64_t>{0, 10, 20});
  CHECK(read_all<double>(f, "/observables/body_count/time", H5T_NATIVE_DOUBLE) ==
        std::vector<double>{0, 5000, 10000});  // ns
  CHECK(read_all<double>(f, "/observables/model_time/value", H5T_NATIVE_DOUBLE) ==
        std::vector<double>{0, 5, 10});  // us

  // Ids: the bodies, then -1 in every empty slot (and for the body removed at frame 2).
  const auto ids = read_all<int64_t>(f, "/particles/bodies/id/value", H5T_NATIVE_INT64);
  const auto species = read_all<int32_t>(f, "/particles/bodies/species/value", H5T_NATIVE_INT32);
  for (std::size_t frame = 0; frame < 3; ++frame)
    for (std::size_t slot = 0; slot < 300; ++slot) {
      const int64_t expected = slot < n && !(frame == 2 && slot == 5) ? int64_t(slot) : -1;
      CHECK(ids[frame * 300 + slot] == expected);
      if (expected < 0) CHECK(species[frame * 300 + slot] == -1);
    }
  // Observables: counts per kind and per containing compartment kind.
  const auto counts = read_all<int64_t>(f, "/observables/kind_count/value", H5T_NATIVE_INT64);
  CHECK(std::vector<int64_t>(counts.begin(), counts.begin() + 4) ==
        std::vector<int64_t>{1, 3, 80, 20});  // cell, ves, lig, rec
  REQUIRE(s.kinds[s.bodies[5].kind].name == "rec");
  CHECK(counts[2 * K + 3] == 19);  // frame 2: body 5 removed
  const auto by = read_all<int64_t>(f, "/observables/container_count/value", H5T_NATIVE_INT64);
  // frame 0: lig (kind 2): 30 in a cell, 10 in a ves, 40 with no parent.
  CHECK(by[2 * (K + 1) + 0] == 30);
  CHECK(by[2 * (K + 1) + 1] == 10);
  CHECK(by[2 * (K + 1) + K] == 40);
  CHECK(by[1 * (K + 1) + 0] == 3);  // the vesicles are in the cell
  CHECK(by[3 * (K + 1) + K] == 20);  // receptors: parent of the cell = none
  const auto on = read_all<int64_t>(f, "/observables/membrane_count/value", H5T_NATIVE_INT64);
  CHECK(on[3 * (K + 1) + 0] == 20);  // receptors in the cell membrane
  CHECK(read_all<int64_t>(f, "/observables/body_count/value", H5T_NATIVE_INT64) ==
        std::vector<int64_t>{104, 104, 103});
  CHECK(read_all<int64_t>(f, "/observables/next_id/value", H5T_NATIVE_INT64) ==
        std::vector<int64_t>{104, 104, 104});

  // Parameters.
  CHECK(read_all<uint64_t>(f, "/parameters/seed", H5T_NATIVE_UINT64) ==
        std::vector<uint64_t>{3});
  CHECK(read_all<double>(f, "/parameters/kinds/radius", H5T_NATIVE_DOUBLE) ==
        std::vector<double>{150, 20, 2, 3});
  // Chunked and compressed.
  {
    const hid_t d = H5Dopen2(f, "/particles/bodies/position/value", H5P_DEFAULT);
    const hid_t plist = H5Dget_create_plist(d);
    CHECK(H5Pget_layout(plist) == H5D_CHUNKED);
    bool deflate = false;
    for (int i = 0; i < H5Pget_nfilters(plist); ++i) {
      unsigned flags = 0;
      size_t nelem = 0;
      deflate = deflate || H5Pget_filter2(plist, unsigned(i), &flags, &nelem, nullptr, 0,
                                          nullptr, nullptr) == H5Z_FILTER_DEFLATE;
    }
    CHECK(deflate);
    H5Pclose(plist);
    H5Dclose(d);
  }
  // The small series uncompressed, with a checksum only: their chunks, rewritten at
  // every frame, keep their size and so their place in the file (h5md_layout.cpp).
  {
    const hid_t d = H5Dopen2(f, "/observables/kind_count/value", H5P_DEFAULT);
    const hid_t plist = H5Dget_create_plist(d);
    CHECK(H5Pget_layout(plist) == H5D_CHUNKED);
    REQUIRE(H5Pget_nfilters(plist) == 1);
    unsigned flags = 0;
    size_t nelem = 0;
    CHECK(H5Pget_filter2(plist, 0, &flags, &nelem, nullptr, 0, nullptr, nullptr) ==
          H5Z_FILTER_FLETCHER32);
    H5Pclose(plist);
    H5Dclose(d);
  }
  H5Fclose(f);
  const io::Checkpoint c = io::read_last_frame(path);
  CHECK(c.model_text == model_text);
  CHECK(c.model_path == "t.yaml");
  CHECK(c.seed == 3);
  CHECK(c.version == "0.1.0-test");
  CHECK(c.frames == 3);
  std::remove(path.c_str());
}

TEST_CASE("write then read is bitwise") {
  const model::Setup s = test_setup();
  const std::string path = temp_path("roundtrip.h5");
  write_run(path, s, 4);
  CHECK(same_bits(frame_at(s, 3), io::read_last_frame(path).frame));
  CHECK(same_bits(frame_at(s, 0), io::read_frame(path, 0)));
  CHECK(same_bits(frame_at(s, 2), io::read_frame(path, 2)));
  CHECK_THROWS_AS(io::read_frame(path, 4), io::InputError);
  // A frame that changes one body is not read back as the original.
  model::Frame changed = frame_at(s, 3);
  changed.position[7][1] = std::nextafter(changed.position[7][1], 1e9);
  CHECK_FALSE(same_bits(changed, io::read_last_frame(path).frame));
  changed = frame_at(s, 3);
  changed.image[9][2] += 1;  // the images are stored too
  CHECK_FALSE(same_bits(changed, io::read_last_frame(path).frame));
  std::remove(path.c_str());
}

TEST_CASE("appending continues a trajectory; steps must increase") {
  const model::Setup s = test_setup();
  const std::string path = temp_path("append.h5");
  write_run(path, s, 2);
  {
    io::H5mdWriter w = io::H5mdWriter::append(path);
    CHECK(w.frames() == 2);
    CHECK(w.slots() == 300);
    CHECK_THROWS_AS(w.write(frame_at(s, 1)), std::invalid_argument);
    w.write(frame_at(s, 2));
    w.write(frame_at(s, 3));
  }
  const io::Checkpoint c = io::read_last_frame(path);
  CHECK(c.frames == 4);
  CHECK(same_bits(frame_at(s, 3), c.frame));
  CHECK(same_bits(frame_at(s, 1), io::read_frame(path, 1)));
  std::remove(path.c_str());
}

TEST_CASE("more bodies than slots grow the slot dimension") {
  const model::Setup s = test_setup();
  const std::string path = temp_path("grow.h5");
  model::Frame big = frame_at(s, 1);
  for (int i = 0; i < 400; ++i) {  // 504 bodies > 300 slots
    big.position.push_back({1.0 * i, 2, 3});
    big.id.push_back(int64_t(big.next_id++));
    big.kind.push_back(2);
    big.radius.push_back(2);
    big.thickness.push_back(2);
    big.parent.push_back(-1);
    big.membrane.push_back(-1);
    big.image.push_back({i, -i, 1});
  }
  {
    io::H5mdWriter w(path, s, "test");
    w.write(frame_at(s, 0));
    w.write(big);
    CHECK(w.slots() == 504);
  }
  CHECK(same_bits(big, io::read_last_frame(path).frame));
  const model::Frame first = io::read_frame(path, 0);
  CHECK(first.id.size() == 504);
  CHECK(same_bits(frame_at(s, 0), first));  // the new slots read as empty
  std::remove(path.c_str());
}

TEST_CASE("a run killed without closing leaves a readable file") {
  const model::Setup s = test_setup();
  const std::string path = temp_path("killed.h5");
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    io::H5mdWriter w(path, s, "test");
    for (uint64_t k = 0; k < 5; ++k) w.write(frame_at(s, k));
    _exit(0);  // no destructors, no H5Fclose: as if killed after the fifth frame
  }
  int status = 0;
  waitpid(child, &status, 0);
  REQUIRE(WIFEXITED(status));
  const io::Checkpoint c = io::read_last_frame(path);
  CHECK(c.frames == 5);
  CHECK(same_bits(frame_at(s, 4), c.frame));

  // A frame cut short: one series got a sixth row, the rest did not. Readers take the
  // complete frames; appending drops the partial row and continues.
  {
    const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    REQUIRE(f >= 0);
    const hid_t d = H5Dopen2(f, "/particles/bodies/id/value", H5P_DEFAULT);
    const hsize_t extent[2] = {6, 300};
    REQUIRE(H5Dset_extent(d, extent) >= 0);
    H5Dclose(d);
    H5Fclose(f);
  }
  CHECK(io::read_last_frame(path).frames == 5);
  {
    io::H5mdWriter w = io::H5mdWriter::append(path);
    CHECK(w.frames() == 5);
    w.write(frame_at(s, 5));
  }
  const io::Checkpoint after = io::read_last_frame(path);
  CHECK(after.frames == 6);
  CHECK(same_bits(frame_at(s, 5), after.frame));
  std::remove(path.c_str());
}

TEST_CASE("files that are not nestsim trajectories are refused") {
  const std::string text = temp_path("text.h5");
  { std::ofstream(text) << "not hdf5\n"; }
  CHECK_THROWS_WITH_AS(io::read_last_frame(text), doctest::Contains("not an HDF5 file"),
                       io::InputError);
  CHECK_THROWS_AS(io::H5mdWriter::append(text), io::InputError);
  std::remove(text.c_str());

  const std::string other = temp_path("other.h5");
  {
    const hid_t f = H5Fcreate(other.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    H5Gclose(H5Gcreate2(f, "/particles", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    H5Fclose(f);
  }
  CHECK_THROWS_WITH_AS(io::read_last_frame(other),
                       doctest::Contains("not a nestsim trajectory"), io::InputError);
  std::remove(other.c_str());

  CHECK_THROWS_WITH_AS(io::read_last_frame(temp_path("missing.h5")),
                       doctest::Contains("no such file"), io::InputError);

  // A nestsim file without frames: no frame to resume from.
  const std::string empty = temp_path("empty.h5");
  { io::H5mdWriter w(empty, test_setup(), "test"); }
  CHECK_THROWS_WITH_AS(io::read_last_frame(empty), doctest::Contains("no complete frame"),
                       io::InputError);
  std::remove(empty.c_str());
}

TEST_CASE("output files are not overwritten unless forced") {
  const std::string path = temp_path("exists.h5");
  CHECK_NOTHROW(io::check_output_path(path, false));
  { std::ofstream(path) << "x"; }
  CHECK_THROWS_WITH_AS(io::check_output_path(path, false), doctest::Contains("--force"),
                       std::runtime_error);
  CHECK_NOTHROW(io::check_output_path(path, true));
  std::remove(path.c_str());
}

TEST_CASE("a writer replaces a file only when it can, and removes only what it made") {
  const model::Setup s = test_setup();
  const std::string path = temp_path("replace.h5");
  write_run(path, s, 3);
  {
    // While the file is open for writing (here by this process: HDF5's lock is per open
    // file, as for another run), it is neither replaced nor removed.
    io::H5mdWriter holder = io::H5mdWriter::append(path);
    CHECK_THROWS_WITH_AS(io::H5mdWriter(path, s, "0.1.0-test"),
                         doctest::Contains("open in another process"), std::runtime_error);
    holder.write(frame_at(s, 3));
  }
  CHECK(io::read_last_frame(path).frames == 4);
  // Not consented to: refused, kept.
  CHECK_THROWS_WITH_AS(io::H5mdWriter(path, s, "0.1.0-test", false),
                       doctest::Contains("exists"), std::runtime_error);
  CHECK(io::read_last_frame(path).frames == 4);
  // A directory in the way: refused, kept.
  const std::string dir = temp_path("a_directory");
  REQUIRE(::mkdir(dir.c_str(), 0755) == 0);
  CHECK_THROWS(io::H5mdWriter(dir, s, "0.1.0-test"));
  struct stat st;
  CHECK(::stat(dir.c_str(), &st) == 0);
  CHECK(S_ISDIR(st.st_mode));
  CHECK(::rmdir(dir.c_str()) == 0);
  // Closed without a frame, the new file is dropped and the old one kept.
  io::H5mdWriter(path, s, "0.1.0-test").close();
  CHECK(io::read_last_frame(path).frames == 4);
  CHECK_FALSE(std::ifstream(path + ".partial." + std::to_string(::getpid())).good());
  // Replaced when it ends with a frame: the old file stays until then.
  {
    io::H5mdWriter replacing(path, s, "0.1.0-test");
    replacing.write(frame_at(s, 0));
    CHECK(replacing.file_written() != path);
    CHECK(io::read_last_frame(path).frames == 4);
  }
  CHECK(io::read_last_frame(path).frames == 1);
  CHECK_FALSE(std::ifstream(path + ".partial." + std::to_string(::getpid())).good());
  std::remove(path.c_str());
}

// --- reaction counts, list sizes and the collision parameter ------------------------

namespace {

model::Setup setup_with_rules() {
  model::Setup s = test_setup();
  for (const char* name : {"binding", "decay"}) {
    model::Reaction r;
    r.name = name;
    s.reactions.push_back(r);
  }
  return s;
}

model::Frame frame_with_events(const model::Setup& s, uint64_t k, std::vector<uint64_t> events,
                             int64_t lists) {
  model::Frame f = frame_at(s, k);
  f.reaction_events = std::move(events);
  f.broadphase_pairs = lists;
  return f;
}

using nestsim::testing::string_dataset;

std::vector<std::string> string_array(hid_t file, const char* path) {
  const hid_t d = H5Dopen2(file, path, H5P_DEFAULT);
  REQUIRE(d >= 0);
  const hid_t space = H5Dget_space(d);
  std::vector<char*> text(std::size_t(H5Sget_simple_extent_npoints(space)), nullptr);
  const hid_t type = H5Tcopy(H5T_C_S1);
  H5Tset_size(type, H5T_VARIABLE);
  H5Tset_cset(type, H5T_CSET_UTF8);
  REQUIRE(H5Dread(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, text.data()) >= 0);
  std::vector<std::string> out;
  for (char* t : text) {
    out.emplace_back(t);
    H5free_memory(t);
  }
  H5Tclose(type);
  H5Sclose(space);
  H5Dclose(d);
  return out;
}

bool has_link(hid_t file, const char* path) { return H5Lexists(file, path, H5P_DEFAULT) > 0; }

using Counts = std::vector<int64_t>;
using Cumulative = std::vector<uint64_t>;

}  // namespace

TEST_CASE("reaction counts are stored per output interval and read back cumulative") {
  const model::Setup s = setup_with_rules();
  const std::string path = temp_path("reactions.h5");
  {
    io::H5mdWriter w(path, s, "test");
    w.write(frame_with_events(s, 0, {0, 0}, 120));
    w.write(frame_with_events(s, 1, {3, 1}, 135));
    w.write(frame_with_events(s, 2, {5, 1}, -1));
    // Counts that go down, or are for another set of rules, are refused before
    // anything is written.
    CHECK_THROWS_AS(w.write(frame_with_events(s, 3, {4, 1}, 0)), std::invalid_argument);
    CHECK_THROWS_AS(w.write(frame_with_events(s, 3, {6}, 0)), std::invalid_argument);
    CHECK_THROWS_AS(w.write(frame_at(s, 3)), std::invalid_argument);  // no counts at all
    CHECK(w.frames() == 3);
  }
  {
    const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    REQUIRE(f >= 0);
    CHECK(read_all<int64_t>(f, "/observables/reactions/binding/value", H5T_NATIVE_INT64) ==
          Counts{0, 3, 2});
    CHECK(read_all<int64_t>(f, "/observables/reactions/decay/value", H5T_NATIVE_INT64) ==
          Counts{0, 1, 0});
    CHECK(read_all<int64_t>(f, "/observables/reactions/value", H5T_NATIVE_INT64) ==
          Counts{0, 4, 2});  // all rules
    CHECK(read_all<int64_t>(f, "/observables/reactions/decay/step", H5T_NATIVE_INT64) ==
          Counts{0, 10, 20});
    CHECK(read_all<double>(f, "/observables/reactions/binding/time", H5T_NATIVE_DOUBLE) ==
          std::vector<double>{0, 5000, 10000});  // ns, the shared time dataset
    CHECK(read_all<int64_t>(f, "/observables/broadphase_pairs/value", H5T_NATIVE_INT64) ==
          Counts{120, 135, -1});
    CHECK(read_all<int64_t>(f, "/observables/broadphase_pairs/step", H5T_NATIVE_INT64) ==
          Counts{0, 10, 20});
    CHECK(string_array(f, "/parameters/reaction_names") ==
          std::vector<std::string>{"binding", "decay"});
    CHECK(string_dataset(f, "/parameters/collision") == "hollow");
    H5Fclose(f);
  }
  CHECK(io::read_frame(path, 0).reaction_events == Cumulative{0, 0});
  CHECK(io::read_frame(path, 1).reaction_events == Cumulative{3, 1});
  CHECK(io::read_frame(path, 1).broadphase_pairs == 135);
  io::Checkpoint c = io::read_last_frame(path);
  CHECK(c.frame.reaction_events == Cumulative{5, 1});
  CHECK(c.frame.broadphase_pairs == -1);
  CHECK(c.reaction_names == std::vector<std::string>{"binding", "decay"});
  CHECK(c.collision == "hollow");
  {  // io::Trajectory, the file opened once: the same frames, and the series behind them
    const io::Trajectory t(path);
    CHECK(t.frames() == 3);
    CHECK(t.slots() == io::read_frame(path, 0).id.size());
    CHECK(t.steps() == Counts{0, 10, 20});
    CHECK(t.times() == std::vector<double>{0, 10 * s.dt, 20 * s.dt});
    CHECK(t.reaction_names() == std::vector<std::string>{"binding", "decay"});
    CHECK(t.reaction_events(0) == Counts{0, 3, 2});
    CHECK(t.reaction_events(1) == Counts{0, 1, 0});
    CHECK(same_bits(t.read_frame(1), io::read_frame(path, 1)));
    CHECK(t.read_frame(2).reaction_events == Cumulative{5, 1});
    CHECK_THROWS_AS(t.read_frame(3), io::InputError);
    REQUIRE(t.kinds().names.size() == s.kinds.size());
    for (std::size_t k = 0; k < s.kinds.size(); ++k) {
      CHECK(t.kinds().names[k] == s.kinds[k].name);
      CHECK(t.kinds().compartment[k] == s.kinds[k].compartment);
      CHECK(t.kinds().membrane[k] == s.kinds[k].membrane);
      CHECK(t.kinds().radius[k] == s.kinds[k].radius);
      CHECK(t.kinds().diffusion[k] == s.kinds[k].diffusion);
    }
    CHECK(t.box() == s.box);
    CHECK(t.periodic() == (s.boundary == model::Boundary::periodic));
    CHECK(t.time_unit() == s.time_unit);
    CHECK(t.collision() == "hollow");
    CHECK(t.seed() == s.seed);
    const std::vector<io::ObservableRows> series = t.observables({"kind_count"});
    bool binding = false;
    for (const io::ObservableRows& o : series) {
      CHECK(o.name != "kind_count");
      if (o.name != "reactions/binding") continue;
      binding = true;
      CHECK(o.columns == 1);
      CHECK(o.values == std::vector<double>{0, 3, 2});
    }
    CHECK(binding);
  }

  // A run killed while writing frame 3: its binding count got a row (a large one) and
  // nothing else did. Appending drops it and continues from the sums of frames 0..2.
  {
    const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    REQUIRE(f >= 0);
    const hid_t d = H5Dopen2(f, "/observables/reactions/binding/value", H5P_DEFAULT);
    const hsize_t extent = 4, row = 3, one = 1;
    REQUIRE(H5Dset_extent(d, &extent) >= 0);
    const hid_t file_space = H5Dget_space(d);
    H5Sselect_hyperslab(file_space, H5S_SELECT_SET, &row, nullptr, &one, nullptr);
    const hid_t memory_space = H5Screate_simple(1, &one, nullptr);
    const int64_t junk = 1000;
    REQUIRE(H5Dwrite(d, H5T_NATIVE_INT64, memory_space, file_space, H5P_DEFAULT, &junk) >= 0);
    H5Sclose(memory_space);
    H5Sclose(file_space);
    H5Dclose(d);
    H5Fclose(f);
  }
  CHECK(io::read_last_frame(path).frames == 3);
  {
    io::H5mdWriter w = io::H5mdWriter::append(path);
    CHECK(w.frames() == 3);
    CHECK_THROWS_AS(w.write(frame_with_events(s, 3, {4, 1}, 0)), std::invalid_argument);
    w.write(frame_with_events(s, 3, {9, 4}, 140));
    w.write(frame_with_events(s, 4, {9, 6}, 150));
  }
  {
    const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    REQUIRE(f >= 0);
    CHECK(read_all<int64_t>(f, "/observables/reactions/binding/value", H5T_NATIVE_INT64) ==
          Counts{0, 3, 2, 4, 0});
    CHECK(read_all<int64_t>(f, "/observables/reactions/decay/value", H5T_NATIVE_INT64) ==
          Counts{0, 1, 0, 3, 2});
    CHECK(read_all<int64_t>(f, "/observables/reactions/value", H5T_NATIVE_INT64) ==
          Counts{0, 4, 2, 7, 2});
    CHECK(read_all<int64_t>(f, "/observables/broadphase_pairs/value", H5T_NATIVE_INT64) ==
          Counts{120, 135, -1, 140, 150});
    H5Fclose(f);
  }
  c = io::read_last_frame(path);
  CHECK(c.frames == 5);
  CHECK(c.frame.reaction_events == Cumulative{9, 6});
  CHECK(io::read_frame(path, 3).reaction_events == Cumulative{9, 4});
  CHECK(same_bits(frame_at(s, 4), c.frame));
  std::remove(path.c_str());
}

TEST_CASE("a first frame that already counts events stores its counts") {
  model::Setup s = setup_with_rules();
  s.collision = model::Collision::solid;
  const std::string path = temp_path("continued.h5");
  {
    io::H5mdWriter w(path, s, "test");
    w.write(frame_with_events(s, 1, {7, 2}, 5));
    w.write(frame_with_events(s, 2, {8, 2}, 6));
  }
  const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(f >= 0);
  CHECK(read_all<int64_t>(f, "/observables/reactions/binding/value", H5T_NATIVE_INT64) ==
        Counts{7, 1});
  CHECK(read_all<int64_t>(f, "/observables/reactions/decay/value", H5T_NATIVE_INT64) ==
        Counts{2, 0});
  CHECK(string_dataset(f, "/parameters/collision") == "solid");
  H5Fclose(f);
  CHECK(io::read_frame(path, 0).reaction_events == Cumulative{7, 2});
  CHECK(io::read_last_frame(path).frame.reaction_events == Cumulative{8, 2});
  CHECK(io::read_last_frame(path).collision == "solid");
  // The initial state counts no events yet, one zero per rule.
  CHECK(io::frame_from_setup(s).reaction_events == Cumulative{0, 0});
  std::remove(path.c_str());
}

TEST_CASE("a model without reaction rules has no reaction series") {
  const model::Setup s = test_setup();
  REQUIRE(s.reactions.empty());
  const std::string path = temp_path("no_rules.h5");
  {
    io::H5mdWriter w(path, s, "test");
    w.write(frame_at(s, 0));
    CHECK_THROWS_AS(w.write(frame_with_events(s, 1, {1}, -1)), std::invalid_argument);
    w.write(frame_at(s, 1));
  }
  const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(f >= 0);
  CHECK_FALSE(has_link(f, "/observables/reactions"));
  CHECK_FALSE(has_link(f, "/parameters/reaction_names"));
  CHECK(read_all<int64_t>(f, "/observables/broadphase_pairs/value", H5T_NATIVE_INT64) ==
        Counts{-1, -1});
  H5Fclose(f);
  const io::Checkpoint c = io::read_last_frame(path);
  CHECK(c.frames == 2);
  CHECK(c.frame.reaction_events.empty());
  CHECK(c.reaction_names.empty());
  {
    io::H5mdWriter w = io::H5mdWriter::append(path);
    w.write(frame_at(s, 2));
  }
  CHECK(io::read_last_frame(path).frames == 3);
  std::remove(path.c_str());
}

TEST_CASE("files written before list sizes, collision and reaction counts were stored") {
  const model::Setup s = test_setup();
  const std::string path = temp_path("older.h5");
  write_run(path, s, 2);
  {  // remove what the older writer did not write
    const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    REQUIRE(f >= 0);
    REQUIRE(H5Ldelete(f, "/observables/broadphase_pairs", H5P_DEFAULT) >= 0);
    REQUIRE(H5Ldelete(f, "/parameters/collision", H5P_DEFAULT) >= 0);
    H5Fclose(f);
  }
  io::Checkpoint c = io::read_last_frame(path);
  CHECK(c.frames == 2);
  CHECK(c.collision.empty());
  CHECK(c.frame.broadphase_pairs == -1);
  CHECK(c.frame.reaction_events.empty());
  CHECK(same_bits(frame_at(s, 1), c.frame));
  {
    io::H5mdWriter w = io::H5mdWriter::append(path);
    model::Frame next = frame_at(s, 2);
    next.broadphase_pairs = 77;
    w.write(next);
  }
  const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(f >= 0);
  // Added on append: unknown (-1) for the frames written before.
  CHECK(read_all<int64_t>(f, "/observables/broadphase_pairs/value", H5T_NATIVE_INT64) ==
        Counts{-1, -1, 77});
  CHECK(read_all<int64_t>(f, "/observables/broadphase_pairs/step", H5T_NATIVE_INT64) ==
        Counts{0, 10, 20});
  H5Fclose(f);
  c = io::read_last_frame(path);
  CHECK(c.frames == 3);
  CHECK(c.frame.broadphase_pairs == 77);
  CHECK(same_bits(frame_at(s, 2), c.frame));
  std::remove(path.c_str());
}
