// Trajectories damaged by a kill while they were written (nestsim/io/repair.h): a chunk
// of a series overwritten with garbage on purpose, as a SIGKILL during HDF5's flush
// leaves it; `nestsim run --resume` must repair the file and end, bitwise, in the
// trajectory of an uninterrupted run (h5diff: every dataset and attribute), keep the
// damaged file aside, and refuse a file with nothing readable without touching it.
#include <doctest/doctest.h>
#include <hdf5.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "cli_helpers.h"
#include "nestsim/io/h5md.h"
#include "nestsim/io/repair.h"
#include "nestsim/io/errors.h"

using namespace nestsim::testing;

namespace {

const char* position = "/particles/bodies/position/value";  // 1 frame a chunk

std::string path(const std::string& name) { return temp_path(name); }

// decay.yaml (200 bodies, A -> 0) with a frame every 10 steps: `steps` / 10 + 1 frames,
// past the first 64-frame chunk of the small series.
std::string run_decay(const std::string& name, int steps) {
  const Run r = run_shell("cd " + temp_dir() + " && OMP_NUM_THREADS=1 " +
                          std::string(NESTSIM_BINARY) + " run " + NESTSIM_SOURCE_DIR +
                          "/tests/ensemble/decay.yaml --set reactions.decay.rate=0.05"
                          " --set simulation.output.every=10 --steps " +
                          std::to_string(steps) + " -o " + name + " --force");
  REQUIRE_MESSAGE(r.code == 0, r.err);
  return path(name);
}

// The uninterrupted run of 1,000 steps (101 frames) the repaired ones must equal.
std::string reference() {
  static const std::string file = run_decay("reference.h5", 1000);
  return file;
}

Run resume(const std::string& file, int steps) {
  return run_shell("cd " + temp_dir() + " && OMP_NUM_THREADS=1 " + std::string(NESTSIM_BINARY) +
                   " run --resume " + file + " --steps " + std::to_string(steps));
}

// Overwrites the stored bytes of the chunk of `dataset` that holds frame `frame` with
// garbage that no filter accepts (zlib: a wrong header).
void damage_chunk(const std::string& file, const char* dataset, hsize_t frame) {
  haddr_t address = 0;
  hsize_t size = 0;
  {
    const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    REQUIRE(f >= 0);
    const hid_t d = H5Dopen2(f, dataset, H5P_DEFAULT);
    REQUIRE(d >= 0);
    const hid_t space = H5Dget_space(d);
    std::vector<hsize_t> offset(std::size_t(H5Sget_simple_extent_ndims(space)), 0);
    hsize_t chunk[3] = {0, 0, 0};
    const hid_t props = H5Dget_create_plist(d);
    H5Pget_chunk(props, int(offset.size()), chunk);
    offset[0] = frame / chunk[0] * chunk[0];
    unsigned mask = 0;
    REQUIRE(H5Dget_chunk_info_by_coord(d, offset.data(), &mask, &address, &size) >= 0);
    H5Pclose(props);
    H5Sclose(space);
    H5Dclose(d);
    H5Fclose(f);
  }
  REQUIRE(size > 0);
  std::fstream out(file, std::ios::in | std::ios::out | std::ios::binary);
  out.seekp(std::streamoff(address));
  const std::string garbage(std::size_t(size), '\xa5');
  out.write(garbage.data(), std::streamsize(size));
  REQUIRE(out.good());
}

bool same_h5(const std::string& a, const std::string& b, std::string& diff) {
  const Run r = run_shell("h5diff " + a + " " + b);
  diff = r.out + r.err;
  return r.code == 0;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("a damaged chunk: resume repairs and ends in the uninterrupted run") {
  const std::string file = run_decay("damaged.h5", 900);  // 91 frames
  damage_chunk(file, position, 64);                       // frame 64 unreadable
  const std::string damaged = slurp(file);
  const Run r = resume("damaged.h5", 1000);
  REQUIRE_MESSAGE(r.code == 0, r.err);
  CHECK_MESSAGE(contains(r.err, "nestsim run: damaged.h5 was damaged (killed while writing?): " +
                                    std::string(position) +
                                    " unreadable; kept frames 0-63 of 91, the damaged file is "
                                    "damaged.h5.damaged; continuing from step 630"),
                r.err);
  CHECK(exists(path("damaged.h5.damaged")));
  CHECK_FALSE(exists(path("damaged.h5.repair.tmp")));
  std::string diff;
  CHECK_MESSAGE(same_h5(file, reference(), diff), diff);
  CHECK(slurp(path("damaged.h5.damaged")) == damaged);  // kept as the kill left it
}

// A small series (64 frames a chunk, uncompressed) carries a checksum: a few bytes
// changed inside its chunk are found, not carried into the resumed run.
TEST_CASE("a small series with changed bytes: the checksum finds them, resume repairs") {
  const char* counts = "/observables/body_count/value";
  const std::string file = run_decay("summed.h5", 900);  // 91 frames
  {
    const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    REQUIRE(f >= 0);
    const hid_t d = H5Dopen2(f, counts, H5P_DEFAULT);
    REQUIRE(d >= 0);
    const hid_t props = H5Dget_create_plist(d);
    bool fletcher = false;
    for (int i = 0; i < H5Pget_nfilters(props); ++i) {
      unsigned flags = 0;
      std::size_t n = 0;
      fletcher = fletcher || H5Pget_filter2(props, unsigned(i), &flags, &n, nullptr, 0, nullptr,
                                            nullptr) == H5Z_FILTER_FLETCHER32;
    }
    CHECK(fletcher);
    H5Pclose(props);
    H5Dclose(d);
    H5Fclose(f);
  }
  // 256 bytes of the chunk that holds frames 64-127, changed in place.
  haddr_t address = 0;
  hsize_t size = 0;
  {
    const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    const hid_t d = H5Dopen2(f, counts, H5P_DEFAULT);
    hsize_t offset[2] = {64, 0};
    unsigned mask = 0;
    REQUIRE(H5Dget_chunk_info_by_coord(d, offset, &mask, &address, &size) >= 0);
    H5Dclose(d);
    H5Fclose(f);
  }
  REQUIRE(size > 256);
  {
    std::fstream out(file, std::ios::in | std::ios::out | std::ios::binary);
    out.seekp(std::streamoff(address + 8));
    std::string bytes(256, '\0');
    for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = char((i * 167 + 13) & 0xff);
    out.write(bytes.data(), std::streamsize(bytes.size()));
    REQUIRE(out.good());
  }
  const Run r = resume("summed.h5", 1000);
  REQUIRE_MESSAGE(r.code == 0, r.err);
  CHECK_MESSAGE(contains(r.err, std::string(counts) + " unreadable; kept frames 0-63 of 91"), r.err);
  std::string diff;
  CHECK_MESSAGE(same_h5(file, reference(), diff), diff);
}

TEST_CASE("a file unreadable from frame 0 is refused and left untouched") {
  const std::string file = run_decay("lost.h5", 300);  // 31 frames, all in chunk 0
  damage_chunk(file, position, 0);
  const std::string before = slurp(file);
  const Run r = resume("lost.h5", 1000);
  CHECK(r.code != 0);
  CHECK_MESSAGE(contains(r.err, "lost.h5: damaged (killed while writing?): " +
                                    std::string(position) + " unreadable from frame 0"),
                r.err);
  CHECK(slurp(file) == before);
  CHECK_FALSE(exists(path("lost.h5.damaged")));
  CHECK_FALSE(exists(path("lost.h5.repair.tmp")));
}

TEST_CASE("an undamaged file is resumed as before, with no repair") {
  const std::string file = run_decay("whole.h5", 900);
  const nestsim::io::Repair none = nestsim::io::repair_trajectory(file);
  CHECK_FALSE(none.repaired);
  CHECK(none.frames_before == 91);
  CHECK(none.frames_kept == 91);
  const Run r = resume("whole.h5", 1000);
  REQUIRE_MESSAGE(r.code == 0, r.err);
  CHECK_FALSE(contains(r.err, "damaged"));
  CHECK_FALSE(exists(path("whole.h5.damaged")));
  std::string diff;
  CHECK_MESSAGE(same_h5(file, reference(), diff), diff);
}

TEST_CASE("repair_trajectory: a per-slot series damaged at its last frame; backups numbered") {
  const std::string file = run_decay("slots.h5", 900);
  const std::string copy = path("slots_copy.h5");
  std::ofstream(copy, std::ios::binary) << slurp(file);
  std::ofstream(file + ".damaged") << "an older backup, kept";
  damage_chunk(file, position, 90);
  const nestsim::io::Repair r = nestsim::io::repair_trajectory(file);
  CHECK(r.repaired);
  CHECK(r.frames_before == 91);
  CHECK(r.frames_kept == 90);
  CHECK(r.unreadable == std::vector<std::string>{position});
  CHECK(r.backup == file + ".damaged.1");
  CHECK(slurp(file + ".damaged") == "an older backup, kept");
  CHECK(nestsim::io::describe_repair("slots.h5", r) ==
        "slots.h5 was damaged (killed while writing?): " + std::string(position) +
            " unreadable; kept frames 0-89 of 91, the damaged file is " + file + ".damaged.1");
  // Frames 0-89 as they were: the last one read back equals the undamaged copy's.
  const nestsim::io::Checkpoint repaired = nestsim::io::read_last_frame(file);
  CHECK(repaired.frames == 90);
  const nestsim::model::Frame expected = nestsim::io::read_frame(copy, 89);
  CHECK(repaired.frame.step == expected.step);
  CHECK(repaired.frame.id == expected.id);
  CHECK(repaired.frame.position == expected.position);
  CHECK(repaired.frame.reaction_events == expected.reaction_events);
  // Checked again: nothing left to repair.
  CHECK_FALSE(nestsim::io::repair_trajectory(file).repaired);
}

TEST_CASE("repair_trajectory: not a trajectory is an InputError naming the file") {
  const std::string text = path("notes.h5");
  std::ofstream(text) << "not HDF5";
  const std::string expected = text + ": not a nestsim trajectory";
  CHECK_THROWS_WITH_AS(nestsim::io::repair_trajectory(text), doctest::Contains(expected.c_str()),
                       nestsim::io::InputError);
}

TEST_CASE("an ensemble run again repairs a damaged member, or runs it again from step 0") {
  const std::string ensemble = "OMP_NUM_THREADS=1 " + std::string(NESTSIM_BINARY) + " ensemble " +
                               NESTSIM_SOURCE_DIR +
                               "/tests/ensemble/decay.yaml -o ens --steps 1000 --replicas 2"
                               " --set simulation.output.every=10"
                               " --set reactions.decay.rate=0.05 --threads 1";
  const Run first = run_shell("cd " + temp_dir() + " && " + ensemble);
  REQUIRE_MESSAGE(first.code == 0, first.err);
  const std::string a = path("ens/members/0000.h5"), b = path("ens/members/0001.h5");
  std::ofstream(path("whole0.h5"), std::ios::binary) << slurp(a);
  std::ofstream(path("whole1.h5"), std::ios::binary) << slurp(b);
  damage_chunk(a, position, 64);  // frames 0-63 kept
  damage_chunk(b, position, 0);   // nothing kept
  // Every member run again: as after a kill, before ensemble.h5 recorded them.
  std::remove(path("ens/ensemble.h5").c_str());
  const Run again = run_shell("cd " + temp_dir() + " && " + ensemble);
  REQUIRE_MESSAGE(again.code == 0, again.err);
  CHECK_MESSAGE(contains(again.out,
                         "resumed at step 630 (ens/members/0000.h5 was damaged (killed while "
                         "writing?): /particles/bodies/position/value unreadable; kept frames 0-63 "
                         "of 101, the damaged file is ens/members/0000.h5.damaged)"),
                again.out);
  CHECK_MESSAGE(contains(again.out,
                         "run again from step 0: ens/members/0001.h5: damaged (killed while "
                         "writing?): /particles/bodies/position/value unreadable from frame 0"),
                again.out);
  std::string diff;
  CHECK_MESSAGE(same_h5(a, path("whole0.h5"), diff), diff);
  CHECK_MESSAGE(same_h5(b, path("whole1.h5"), diff), diff);
}
