// The whole-series reads of io::Trajectory (trajectory_series.h): rows over the complete
// frames and the /observables walker.
#include "trajectory_series.h"

#include <algorithm>

namespace nestsim::io::h5md {

using hdf5::check;

void read_rows(hid_t dataset, const std::string& file, const std::string& name, hid_t memory_type,
               hsize_t rows, void* data) {
  if (rows == 0) return;
  const std::vector<hsize_t> extent = hdf5::dims(dataset);
  if (extent.empty() || extent[0] < rows) not_nestsim(file, name + ": fewer rows than frames");
  const hdf5::Rows selected(dataset, 0, rows);
  check(H5Dread(dataset, memory_type, selected.memory_space.get(), selected.file_space.get(),
                H5P_DEFAULT, data),
        "cannot read " + name);
}

namespace {

// The series `name` (the path below /observables without "/value") held by `dataset`:
// its complete frames' rows as doubles and its labels. False when it holds no numbers,
// or numbers HDF5 cannot convert: nothing to report.
bool numeric_rows(hid_t dataset, const std::string& file, const std::string& name, hsize_t frames,
                  ObservableRows& s) {
  const std::string where = "/observables/" + name + "/value";
  const std::vector<hsize_t> dims = hdf5::dims(dataset);
  if (dims.empty()) return false;
  const hsize_t rows = std::min<hsize_t>(dims[0], frames);
  std::size_t columns = 1;
  bool too_large = false;
  for (std::size_t d = 1; d < dims.size(); ++d)
    too_large |= __builtin_mul_overflow(columns, std::size_t(dims[d]), &columns);
  if (too_large || (columns > 0 && rows > max_values / columns))
    not_nestsim(file, where + ": too large to read");
  const Handle stored(H5Dget_type(dataset), H5Tclose, "the type of " + where);
  const H5T_class_t c = H5Tget_class(stored.get());
  if (c != H5T_INTEGER && c != H5T_FLOAT) return false;
  s.name = name;
  s.columns = columns;
  // The complete frames' rows only: a series may be longer (a run killed mid-frame),
  // and nothing is sized beyond what is reported.
  s.values.resize(std::size_t(rows) * columns);
  if (!s.values.empty()) {
    try {
      read_rows(dataset, file, where, H5T_NATIVE_DOUBLE, rows, s.values.data());
    } catch (const hdf5::Error&) {
      return false;
    }
  }
  if (H5Aexists(dataset, "labels") > 0) try {
      s.labels = read_string_attributes(dataset, file, where + " labels", columns);
    } catch (const std::exception&) {  // labels that are not `columns` strings: none
      s.labels.clear();
    }
  return true;
}

void walk(hid_t group, const std::string& file, const std::string& prefix, hsize_t frames,
          const std::vector<std::string>& except, std::vector<ObservableRows>& out) {
  H5G_info_t info;
  if (H5Gget_info(group, &info) < 0) return;
  for (hsize_t k = 0; k < info.nlinks; ++k) {
    const ssize_t length =
        H5Lget_name_by_idx(group, ".", H5_INDEX_NAME, H5_ITER_INC, k, nullptr, 0, H5P_DEFAULT);
    if (length <= 0) continue;
    std::string name(std::size_t(length) + 1, '\0');
    H5Lget_name_by_idx(group, ".", H5_INDEX_NAME, H5_ITER_INC, k, name.data(), name.size(),
                       H5P_DEFAULT);
    name.resize(std::size_t(length));
    const hid_t id = H5Oopen(group, name.c_str(), H5P_DEFAULT);
    if (id < 0) continue;
    const Handle object(id, H5Oclose, "cannot open " + name);
    const H5I_type_t type = H5Iget_type(object.get());
    const std::string child = prefix.empty() ? name : prefix + "/" + name;
    if (type == H5I_GROUP) {
      if (std::find(except.begin(), except.end(), child) == except.end())
        walk(object.get(), file, child, frames, except, out);
      continue;
    }
    if (type != H5I_DATASET || name != "value" || prefix.empty()) continue;
    ObservableRows s;
    if (numeric_rows(object.get(), file, prefix, frames, s)) out.push_back(std::move(s));
  }
}

}  // namespace

void collect_observables(hid_t group, const std::string& file, hsize_t frames,
                         const std::vector<std::string>& except, std::vector<ObservableRows>& out) {
  walk(group, file, "", frames, except, out);
}

ObservableRows read_observable(hid_t file_id, const std::string& file, const std::string& name,
                               hsize_t frames) {
  const std::string where = "/observables/" + name + "/value";
  if (!hdf5::exists(file_id, where)) not_nestsim(file, "no " + where);
  const Handle d = hdf5::open_dataset(file_id, where);
  ObservableRows s;
  if (!numeric_rows(d.get(), file, name, frames, s))
    not_nestsim(file, where + ": not numbers that read");
  return s;
}

}  // namespace nestsim::io::h5md
