// One trajectory frame in the page's binary layout (view_trajectory.h, encode_frame).
#include <algorithm>
#include <cstring>

#include "nestsim/io/h5md.h"
#include "nestsim/io/errors.h"
#include "view/view_trajectory.h"

namespace nestsim::app {
namespace {

constexpr uint32_t kMagic = 0x4656534e;  // "NSVF" read as little-endian bytes
constexpr uint32_t kVersion = 1;

template <typename T>
void put(std::string& out, std::size_t& at, const T& value) {
  std::memcpy(&out[at], &value, sizeof value);
  at += sizeof value;
}

}  // namespace

std::string encode_frame(const std::string& path, uint64_t index, uint64_t max_bodies,
                         const std::vector<ViewKind>& kinds) {
  model::Frame frame;
  try {
    frame = io::read_frame(path, index);
  } catch (const io::InputError& e) {
    throw ViewError(e.what());
  }
  // Compartments first: the page draws them as shells, the rest as instanced spheres.
  std::vector<std::size_t> compartments, proteins;
  std::vector<uint32_t> live_of_kind(kinds.size(), 0);
  for (std::size_t s = 0; s < frame.id.size(); ++s) {
    if (frame.id[s] < 0) continue;
    const auto kind = std::size_t(frame.kind[s]);
    const bool shell = kind < kinds.size() && kinds[kind].compartment;
    if (kind < kinds.size()) ++live_of_kind[kind];
    (shell ? compartments : proteins).push_back(s);
  }
  const uint64_t live = compartments.size() + proteins.size();
  uint64_t stride = 1;
  if (max_bodies > compartments.size() && live > max_bodies)
    stride = (proteins.size() + (max_bodies - compartments.size()) - 1) /
             (max_bodies - compartments.size());
  else if (live > max_bodies)
    stride = proteins.size() + 1;  // room for the compartments only
  std::vector<std::size_t> sent = compartments;
  for (std::size_t i = 0; i < proteins.size(); i += stride) sent.push_back(proteins[i]);
  const std::size_t n = sent.size();
  const std::size_t header = 6 * 4 + 2 * 8 + 4 + 4 * kinds.size();
  const std::size_t kinds_bytes = (2 * n + 3) / 4 * 4;
  std::string out(header + n * (5 * 4 + 4) + kinds_bytes, '\0');
  std::size_t at = 0;
  put(out, at, kMagic);
  put(out, at, kVersion);
  put(out, at, uint32_t(index));
  put(out, at, uint32_t(live));
  put(out, at, uint32_t(n));
  put(out, at, uint32_t(stride));
  put(out, at, double(frame.step));
  put(out, at, frame.time);
  put(out, at, uint32_t(kinds.size()));
  for (uint32_t count : live_of_kind) put(out, at, count);
  for (std::size_t s : sent)
    for (int d = 0; d < 3; ++d) put(out, at, float(frame.position[s][std::size_t(d)]));
  for (std::size_t s : sent) put(out, at, float(frame.radius[s]));
  for (std::size_t s : sent) put(out, at, float(frame.thickness[s]));
  for (std::size_t s : sent) put(out, at, uint32_t(frame.id[s]));
  for (std::size_t s : sent) put(out, at, uint16_t(frame.kind[s]));
  return out;
}

}  // namespace nestsim::app
