// Repairing a trajectory damaged by a kill while it was written (nestsim/io/repair.h):
// find the frames every time series still reads, copy the file with those frames into a
// new one, keep the damaged one aside.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "h5md_layout.h"
#include "nestsim/io/h5md.h"
#include "nestsim/io/repair.h"
#include "nestsim/io/errors.h"
#include "nestsim/io/trajectory.h"
#include "trajectory_series.h"

namespace nestsim::io {

using hdf5::check;
using hdf5::Handle;

namespace {

constexpr hsize_t per_slot_tail = 4;                  // frames checked of a large file
constexpr uint64_t whole_check_bytes = 256ull << 20;  // per-slot series read whole below
constexpr uint64_t copy_block_bytes = 16ull << 20;    // rows copied per read and write

// One link of the file, in the order a depth-first walk meets it.
struct Link {
  std::string path;               // absolute
  H5L_type_t type;                // hard, soft or external
  haddr_t address = HADDR_UNDEF;  // of a hard link's object
  H5O_type_t object = H5O_TYPE_UNKNOWN;
};

// A time series: a chunked dataset whose first (frame) dimension is unlimited.
struct Series {
  std::string path;
  haddr_t address = HADDR_UNDEF;
  std::vector<hsize_t> dims, chunk;
  uint64_t row_bytes = 0;                          // one frame, uncompressed
  bool per_slot() const { return chunk[0] == 1; }  // one frame a chunk, written once
};

std::vector<std::string> link_names(hid_t file, const std::string& group) {
  const Handle g = hdf5::open_group(file, group);
  std::vector<std::string> names;
  const auto collect = [](hid_t, const char* name, const H5L_info_t*, void* out) -> herr_t {
    static_cast<std::vector<std::string>*>(out)->push_back(name);
    return 0;
  };
  hsize_t index = 0;
  check(H5Literate(g.get(), H5_INDEX_NAME, H5_ITER_INC, &index, collect, &names),
        "cannot list " + group);
  return names;
}

// Every link under `group`, each group's members after it; a group met again through
// another hard link is not entered twice.
void walk(hid_t file, const std::string& group, std::vector<Link>& links,
          std::vector<haddr_t>& entered) {
  for (const std::string& name : link_names(file, group)) {
    Link l;
    l.path = (group == "/" ? "" : group) + "/" + name;
    H5L_info_t info;
    check(H5Lget_info(file, l.path.c_str(), &info, H5P_DEFAULT), "cannot read " + l.path);
    l.type = info.type;
    if (l.type == H5L_TYPE_HARD) {
      l.address = info.u.address;
      H5O_info_t object;
      check(H5Oget_info_by_name2(file, l.path.c_str(), &object, H5O_INFO_BASIC, H5P_DEFAULT),
            "cannot open " + l.path);
      l.object = object.type;
    }
    links.push_back(l);
    if (l.object == H5O_TYPE_GROUP &&
        std::find(entered.begin(), entered.end(), l.address) == entered.end()) {
      entered.push_back(l.address);
      walk(file, l.path, links, entered);
    }
  }
}

std::vector<Series> time_series(hid_t file, const std::vector<Link>& links) {
  std::vector<Series> out;
  for (const Link& l : links) {
    if (l.object != H5O_TYPE_DATASET) continue;
    if (std::any_of(out.begin(), out.end(),
                    [&](const Series& s) { return s.address == l.address; }))
      continue;
    const Handle d = hdf5::open_dataset(file, l.path);
    const Handle props(H5Dget_create_plist(d.get()), H5Pclose, "cannot read " + l.path);
    if (H5Pget_layout(props.get()) != H5D_CHUNKED) continue;
    const Handle space(H5Dget_space(d.get()), H5Sclose, "cannot read " + l.path);
    const int rank = H5Sget_simple_extent_ndims(space.get());
    if (rank < 1) continue;
    Series s{l.path, l.address, std::vector<hsize_t>(rank), std::vector<hsize_t>(rank), 0};
    std::vector<hsize_t> maxdims(rank);
    H5Sget_simple_extent_dims(space.get(), s.dims.data(), maxdims.data());
    if (maxdims[0] != H5S_UNLIMITED) continue;
    check(H5Pget_chunk(props.get(), rank, s.chunk.data()), "cannot read " + l.path);
    const Handle type(H5Dget_type(d.get()), H5Tclose, "cannot read " + l.path);
    s.row_bytes = H5Tget_size(type.get());
    for (int i = 1; i < rank; ++i) s.row_bytes *= s.dims[std::size_t(i)];
    out.push_back(std::move(s));
  }
  return out;
}

using hdf5::Rows;

// The frames of `s` that read from frame 0 on, checked over [from, frames) chunk by chunk:
// the start of the first chunk that does not read, `frames` when all do.
hsize_t readable_frames(hid_t file, const Series& s, hsize_t from, hsize_t frames) {
  const Handle d = hdf5::open_dataset(file, s.path);
  const Handle type(H5Dget_type(d.get()), H5Tclose, "type");
  const hsize_t block = s.chunk[0];
  std::vector<unsigned char> buffer;
  for (hsize_t first = from / block * block; first < frames; first += block) {
    const hsize_t n = std::min(block, frames - first);
    const Rows rows(d.get(), first, n);
    buffer.resize(std::size_t(n * s.row_bytes));
    if (H5Dread(d.get(), type.get(), rows.memory_space.get(), rows.file_space.get(), H5P_DEFAULT,
                buffer.data()) < 0)
      return first;
  }
  return frames;
}

struct Check {
  hsize_t frames = 0;  // complete frames: the shortest series
  hsize_t good = 0;    // frames that read in every series
  std::vector<std::string> unreadable;
};

Check check_series(hid_t file, const std::vector<Series>& series) {
  Check c;
  if (series.empty()) return c;
  c.frames = series[0].dims[0];
  for (const Series& s : series) c.frames = std::min(c.frames, s.dims[0]);
  uint64_t per_slot_bytes = 0;
  for (const Series& s : series)
    if (s.per_slot()) per_slot_bytes += c.frames * s.row_bytes;
  c.good = c.frames;
  for (const Series& s : series) {
    const bool tail_only = s.per_slot() && per_slot_bytes >= whole_check_bytes;
    const hsize_t from = tail_only && c.frames > per_slot_tail ? c.frames - per_slot_tail : 0;
    const hsize_t good = readable_frames(file, s, from, c.frames);
    if (good < c.frames) c.unreadable.push_back(s.path);
    c.good = std::min(c.good, good);
  }
  return c;
}

// The attributes of `from` written onto `to`, values and types as they are.
void copy_attributes(hid_t from, hid_t to, const std::string& where) {
  std::vector<std::string> names;
  const auto collect = [](hid_t, const char* name, const H5A_info_t*, void* out) -> herr_t {
    static_cast<std::vector<std::string>*>(out)->push_back(name);
    return 0;
  };
  hsize_t index = 0;
  check(H5Aiterate2(from, H5_INDEX_NAME, H5_ITER_INC, &index, collect, &names),
        "cannot list the attributes of " + where);
  for (const std::string& name : names) {
    const std::string what = "attribute " + name + " of " + where;
    const Handle a(H5Aopen(from, name.c_str(), H5P_DEFAULT), H5Aclose, "cannot open " + what);
    const Handle type(H5Aget_type(a.get()), H5Tclose, what);
    const Handle space(H5Aget_space(a.get()), H5Sclose, what);
    const hssize_t points = H5Sget_simple_extent_npoints(space.get());
    std::vector<unsigned char> value(std::size_t(std::max<hssize_t>(points, 1)) *
                                     H5Tget_size(type.get()));
    check(H5Aread(a.get(), type.get(), value.data()), "cannot read " + what);
    const Handle copy(
        H5Acreate2(to, name.c_str(), type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose,
        "cannot create " + what);
    const herr_t written = H5Awrite(copy.get(), type.get(), value.data());
    if (H5Tdetect_class(type.get(), H5T_VLEN) > 0 || H5Tis_variable_str(type.get()) > 0)
      H5Dvlen_reclaim(type.get(), space.get(), H5P_DEFAULT, value.data());
    check(written, "cannot write " + what);
  }
}

// A time series recreated in `to` with the same type, creation properties (chunks,
// filters, fill value) and attributes, holding frames [0, keep) of the original.
void copy_series(hid_t from, hid_t to, const Series& s, hsize_t keep) {
  const Handle d = hdf5::open_dataset(from, s.path);
  const Handle type(H5Dget_type(d.get()), H5Tclose, "type");
  const Handle props(H5Dget_create_plist(d.get()), H5Pclose, "properties");
  const Handle old_space(H5Dget_space(d.get()), H5Sclose, "dataspace");
  std::vector<hsize_t> extent = s.dims, maxdims(s.dims.size());
  H5Sget_simple_extent_dims(old_space.get(), nullptr, maxdims.data());
  extent[0] = keep;
  const Handle space(H5Screate_simple(int(extent.size()), extent.data(), maxdims.data()), H5Sclose,
                     "dataspace");
  const Handle copy(H5Dcreate2(to, s.path.c_str(), type.get(), space.get(), H5P_DEFAULT,
                               props.get(), H5P_DEFAULT),
                    H5Dclose, "cannot create " + s.path);
  copy_attributes(d.get(), copy.get(), s.path);
  const hsize_t chunk = s.chunk[0];
  const hsize_t block =
      chunk * std::max<hsize_t>(1, copy_block_bytes / std::max<uint64_t>(1, chunk * s.row_bytes));
  std::vector<unsigned char> buffer;
  for (hsize_t first = 0; first < keep; first += block) {
    const hsize_t n = std::min(block, keep - first);
    const Rows in(d.get(), first, n), out(copy.get(), first, n);
    buffer.resize(std::size_t(n * s.row_bytes));
    check(H5Dread(d.get(), type.get(), in.memory_space.get(), in.file_space.get(), H5P_DEFAULT,
                  buffer.data()),
          "cannot read " + s.path);
    check(H5Dwrite(copy.get(), type.get(), out.memory_space.get(), out.file_space.get(),
                   H5P_DEFAULT, buffer.data()),
          "cannot write " + s.path);
  }
}

// Every link of `from` made again in `to`: groups with their attributes, hard links to
// an object met before as hard links again, time series cut to `keep` frames, other
// datasets and named types copied as they are (H5Ocopy).
void copy_file(hid_t from, hid_t to, const std::vector<Link>& links,
               const std::vector<Series>& series, hsize_t keep) {
  {
    const Handle root_from = hdf5::open_group(from, "/"), root_to = hdf5::open_group(to, "/");
    copy_attributes(root_from.get(), root_to.get(), "/");
  }
  std::map<haddr_t, std::string> made;  // object address -> its first path in `to`
  for (const Link& l : links) {
    if (l.type == H5L_TYPE_SOFT || l.type == H5L_TYPE_EXTERNAL) {
      H5L_info_t info;
      check(H5Lget_info(from, l.path.c_str(), &info, H5P_DEFAULT), "cannot read " + l.path);
      std::vector<char> value(info.u.val_size + 1, 0);
      check(H5Lget_val(from, l.path.c_str(), value.data(), value.size(), H5P_DEFAULT),
            "cannot read " + l.path);
      if (l.type == H5L_TYPE_SOFT) {
        check(H5Lcreate_soft(value.data(), to, l.path.c_str(), H5P_DEFAULT, H5P_DEFAULT),
              "cannot create " + l.path);
      } else {
        const char *file = nullptr, *object = nullptr;
        check(H5Lunpack_elink_val(value.data(), info.u.val_size, nullptr, &file, &object),
              "cannot read " + l.path);
        check(H5Lcreate_external(file, object, to, l.path.c_str(), H5P_DEFAULT, H5P_DEFAULT),
              "cannot create " + l.path);
      }
      continue;
    }
    if (const auto earlier = made.find(l.address); earlier != made.end()) {
      check(
          H5Lcreate_hard(to, earlier->second.c_str(), to, l.path.c_str(), H5P_DEFAULT, H5P_DEFAULT),
          "cannot link " + l.path);
      continue;
    }
    made[l.address] = l.path;
    const auto s = std::find_if(series.begin(), series.end(),
                                [&](const Series& x) { return x.address == l.address; });
    if (s != series.end()) {
      copy_series(from, to, *s, keep);
    } else if (l.object == H5O_TYPE_GROUP) {
      const Handle g_from = hdf5::open_group(from, l.path), g_to = hdf5::create_group(to, l.path);
      copy_attributes(g_from.get(), g_to.get(), l.path);
    } else {
      check(H5Ocopy(from, l.path.c_str(), to, l.path.c_str(), H5P_DEFAULT, H5P_DEFAULT),
            "cannot copy " + l.path);
    }
  }
}

void sync_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

// The file a symbolic link names (it is the one repaired, next to itself); else `path`.
std::string file_behind(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode))
    if (char resolved[PATH_MAX]; ::realpath(path.c_str(), resolved)) return resolved;
  return path;
}

std::string directory_of(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

// The damaged file under the first free name of path.damaged, path.damaged.1, ...: a
// hard link made first (never replacing a file), so that `path` names a file throughout.
std::string keep_aside(const std::string& path) {
  for (int k = 0; k < 10000; ++k) {
    const std::string name = path + ".damaged" + (k == 0 ? "" : "." + std::to_string(k));
    if (::link(path.c_str(), name.c_str()) == 0) return name;
    if (errno == EEXIST) continue;
    struct stat st;  // a file system without hard links: rename to a free name
    if (::stat(name.c_str(), &st) == 0) continue;
    if (std::rename(path.c_str(), name.c_str()) == 0) return name;
    throw InputError(path, 0,
                     "cannot keep the damaged file as " + name + ": " + std::strerror(errno));
  }
  throw InputError(path, 0, "cannot keep the damaged file: " + path + ".damaged.* all taken");
}

// Writes the copy of `source` with frames [0, keep) to `temporary`, flushed and synced.
void write_copy(hid_t source, const std::string& temporary, const std::vector<Link>& links,
                const std::vector<Series>& series, hsize_t keep) {
  const Handle create(H5Fget_create_plist(source), H5Pclose, "file properties");
  Handle to(H5Fcreate(temporary.c_str(), H5F_ACC_TRUNC, create.get(), H5P_DEFAULT), H5Fclose,
            "cannot create " + temporary);
  copy_file(source, to.get(), links, series, keep);
  check(H5Fflush(to.get(), H5F_SCOPE_GLOBAL), "cannot flush " + temporary);
  to.reset();
  sync_file(temporary);
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// Whether `path` begins with HDF5's signature (at offset 0, where nestsim writes it).
bool hdf5_signature(const std::string& path) {
  static const char signature[8] = {'\x89', 'H', 'D', 'F', '\r', '\n', '\x1a', '\n'};
  char head[8] = {0};
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return false;
  const bool ok = ::read(fd, head, sizeof head) == ssize_t(sizeof head);
  ::close(fd);
  return ok && std::memcmp(head, signature, sizeof head) == 0;
}

// A file cut short (a copy or a download interrupted, a disk filled outside HDF5) ends
// before HDF5's end of allocation, and HDF5 refuses to open it at all. A copy padded with
// zeros well past that end (sparse, so the padding takes no room) opens: what the cut
// took reads as damage, and the frames that read are kept as for any damage. Returns
// the copy's name, or "" when `path` is not an HDF5 file that fails to open.
std::string padded_copy(const std::string& path) {
  if (!hdf5_signature(path)) return "";
  const std::string copy = path + ".padded.tmp";
  {
    std::ifstream in(path, std::ios::binary);
    std::ofstream out(copy, std::ios::binary | std::ios::trunc);
    out << in.rdbuf();
    if (!out.flush()) {
      std::remove(copy.c_str());
      return "";
    }
  }
  struct stat st;
  if (::stat(copy.c_str(), &st) != 0 ||
      ::truncate(copy.c_str(), st.st_size * 2 + (off_t(1) << 20)) != 0) {
    std::remove(copy.c_str());
    return "";
  }
  return copy;
}

// Whether HDF5 refuses to open `path` for another reason than a lock that a writer holds
// (a file cut short), so that a padded copy may open.
bool refused_by_hdf5(const std::string& path) {
  hdf5::quiet();
  const hid_t id = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (id >= 0) {
    H5Fclose(id);
    return false;
  }
  const int e = hdf5::last_errno();
  return e != EAGAIN && e != EWOULDBLOCK;
}

// Removes a file when it goes out of scope (the padded copy).
struct RemoveLater {
  std::string path;
  ~RemoveLater() {
    if (!path.empty()) std::remove(path.c_str());
  }
};

}  // namespace

Repair repair_trajectory(const std::string& given) {
  const std::string path = file_behind(given);
  const std::string temporary = path + ".repair.tmp";
  Repair r;
  RemoveLater padded;
  try {
    Check c;
    {
      // The file through the one reader, its layout checked before a series is read.
      std::optional<Trajectory> opened;
      try {
        opened.emplace(given);
      } catch (const InputError&) {
        if (!refused_by_hdf5(given)) throw;  // not a trajectory, or being written
        padded.path = padded_copy(path);     // HDF5 cannot open it: cut short?
        if (padded.path.empty()) throw;
        try {
          opened.emplace(padded.path);
        } catch (const std::exception&) {
          throw InputError(given, 0, "cannot open it (HDF5), nor a copy padded as if cut short");
        }
      }
      const hid_t file = TrajectoryFile::of(*opened);
      std::vector<Link> links;
      std::vector<haddr_t> entered;
      walk(file, "/", links, entered);
      const std::vector<Series> series = time_series(file, links);
      c = check_series(file, series);
      r.frames_before = r.frames_kept = c.frames;
      if (c.good == c.frames && padded.path.empty()) return r;
      if (c.unreadable.empty()) c.unreadable.push_back("the end of the file (cut short)");
      if (c.good == 0)
        throw InputError(given, 0,
                         "damaged (killed while writing?): " + joined(c.unreadable) +
                             " unreadable from frame 0; nothing can be kept, run it again");
      write_copy(file, temporary, links, series, c.good);
    }
    r.repaired = true;
    r.frames_kept = c.good;
    r.unreadable = c.unreadable;
  } catch (const hdf5::Error& e) {
    std::remove(temporary.c_str());
    throw InputError(given, 0, std::string("cannot read or repair it: ") + e.what());
  } catch (...) {
    std::remove(temporary.c_str());
    throw;
  }
  r.backup = keep_aside(path);
  if (std::rename(temporary.c_str(), path.c_str()) != 0)
    throw InputError(
        given, 0,
        "cannot put the repaired copy " + temporary + " in its place: " + std::strerror(errno));
  sync_file(directory_of(path));
  return r;
}

std::string describe_repair(const std::string& path, const Repair& r) {
  return path + " was damaged (killed while writing?): " + joined(r.unreadable) +
         " unreadable; kept frames 0-" + std::to_string(r.frames_kept - 1) + " of " +
         std::to_string(r.frames_before) + ", the damaged file is " + r.backup;
}

}  // namespace nestsim::io
