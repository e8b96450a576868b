// Reading trajectories with HDF5 itself in tests (independent of nestsim's reader).
#pragma once
#include <doctest/doctest.h>
#include <hdf5.h>

#include <string>

namespace nestsim::testing {

// A scalar variable-length UTF-8 string dataset of an open file.
inline std::string string_dataset(hid_t file, const char* path) {
  const hid_t d = H5Dopen2(file, path, H5P_DEFAULT);
  REQUIRE(d >= 0);
  const hid_t type = H5Tcopy(H5T_C_S1);
  H5Tset_size(type, H5T_VARIABLE);
  H5Tset_cset(type, H5T_CSET_UTF8);
  char* text = nullptr;
  REQUIRE(H5Dread(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, &text) >= 0);
  std::string value = text;
  H5free_memory(text);
  H5Tclose(type);
  H5Dclose(d);
  return value;
}

}  // namespace nestsim::testing
