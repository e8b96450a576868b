// `nestsim export`: a trajectory as extended XYZ, for OVITO, VMD and ASE.
#include <charconv>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "commands/commands.h"
#include "commands/output_file.h"
#include "nestsim/io/errors.h"
#include "nestsim/io/trajectory.h"
#include "view/view_trajectory.h"

namespace nestsim::app {

const char* const kExportHelp =
    "usage: nestsim export OUT.h5 --format xyz [--frames A:B:S] -o FILE\n"
    "\n"
    "Writes the trajectory's frames as extended XYZ (one block per frame), which OVITO,\n"
    "VMD and ASE read. Each block lists the live bodies only (empty slots are left\n"
    "out): its first line is the body count, its second\n"
    "  Lattice=\"Lx 0 0 0 Ly 0 0 0 Lz\" Properties=species:S:1:pos:R:3:radius:R:1:\n"
    "  thickness:R:1:id:I:1 Time=T Step=S pbc=\"T T T\" length_unit=nm time_unit=us\n"
    "then one line per body: its kind's name, x y z (wrapped into the box when it is\n"
    "periodic), radius, membrane thickness (= radius for a protein) and id. Compartments\n"
    "and proteins are all listed; OVITO draws each body with its radius.\n"
    "\n"
    "options:\n"
    "  --format xyz     the format (extended XYZ is the only one)\n"
    "  --frames A:B:S   frames A, A+S, ... before B (0-based, B excluded; each part\n"
    "                   optional: ':' all, '::10' every 10th, '5:6' frame 5 only);\n"
    "                   default: every frame\n"
    "  -o FILE          the output file ('-': standard output)\n"
    "\n"
    "exit status: 0 written, 1 a write error, 2 a missing or unreadable trajectory or bad\n"
    "options.\n";

namespace {

struct Usage : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

struct FrameRange {
  uint64_t start = 0, stop = UINT64_MAX, step = 1;
};

uint64_t parse_count(const std::string& text, const std::string& what) {
  uint64_t v = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || error != std::errc() || end != text.data() + text.size())
    throw Usage("--frames: " + what + " '" + text + "' is not a whole number from 0 to " +
                std::to_string(UINT64_MAX));
  return v;
}

FrameRange parse_frames(const std::string& text) {
  if (text.empty()) throw Usage("--frames: empty (A:B:S, ':' for every frame)");
  std::vector<std::string> parts{""};
  for (char c : text) {
    if (c == ':')
      parts.emplace_back();
    else
      parts.back().push_back(c);
  }
  if (parts.size() > 3) throw Usage("--frames: '" + text + "' is not A:B:S");
  FrameRange r;
  if (!parts[0].empty()) r.start = parse_count(parts[0], "start");
  if (parts.size() == 1) {
    r.stop = r.start + 1;  // one number: that frame
    return r;
  }
  if (!parts[1].empty()) r.stop = parse_count(parts[1], "stop");
  if (parts.size() == 3 && !parts[2].empty()) r.step = parse_count(parts[2], "step");
  if (r.step == 0) throw Usage("--frames: the step must be at least 1");
  return r;
}

std::string format_number(double x) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.9g", x);
  return buffer;
}

void write_block(OutputFile& out, const ViewTrajectory& t, const model::Frame& frame) {
  uint64_t live = 0;
  for (int64_t id : frame.id) live += id >= 0;
  std::string text = std::to_string(live) + "\nLattice=\"";
  for (int row = 0; row < 3; ++row)
    for (int col = 0; col < 3; ++col)
      text += (row || col ? " " : "") + format_number(row == col ? t.box[row] : 0.0);
  const char* pbc = t.periodic ? "T" : "F";
  text += "\" Properties=species:S:1:pos:R:3:radius:R:1:thickness:R:1:id:I:1 Time=" +
          format_number(frame.time) + " Step=" + std::to_string(frame.step) + " pbc=\"" +
          pbc + " " + pbc + " " + pbc + "\" length_unit=" + t.length_unit +
          " time_unit=" + t.time_unit + "\n";
  for (std::size_t s = 0; s < frame.id.size(); ++s) {
    if (frame.id[s] < 0) continue;
    const auto kind = std::size_t(frame.kind[s]);
    text += (kind < t.kinds.size() ? t.kinds[kind].name : "kind" + std::to_string(kind));
    for (double x : frame.position[s]) text += " " + format_number(x);
    text += " " + format_number(frame.radius[s]) + " " + format_number(frame.thickness[s]) +
            " " + std::to_string(frame.id[s]) + "\n";
    if (text.size() > (1u << 20)) {
      out.write(text.data(), text.size());
      text.clear();
    }
  }
  out.write(text.data(), text.size());
}

struct ExportArgs {
  std::string trajectory, format, output;
  FrameRange frames;
};

ExportArgs parse(const std::vector<std::string>& args) {
  ExportArgs a;
  for (std::size_t k = 0; k < args.size(); ++k) {
    const std::string& arg = args[k];
    const auto value = [&]() -> const std::string& {
      if (k + 1 >= args.size()) throw Usage(arg + " needs a value");
      return args[++k];
    };
    if (arg == "--format") {
      a.format = value();
      if (a.format != "xyz") throw Usage("--format: '" + a.format + "' is not known (xyz)");
    } else if (arg == "--frames") {
      a.frames = parse_frames(value());
    } else if (arg == "-o" || arg == "--output") {
      a.output = value();
    } else if (!arg.empty() && arg[0] == '-' && arg != "-") {
      throw Usage("unknown option '" + arg + "'");
    } else if (a.trajectory.empty()) {
      a.trajectory = arg;
    } else {
      throw Usage("one trajectory only ('" + a.trajectory + "' and '" + arg + "')");
    }
  }
  if (a.trajectory.empty()) throw Usage("which trajectory? (nestsim export OUT.h5 ...)");
  if (a.format.empty()) throw Usage("--format is required (xyz)");
  if (a.output.empty()) throw Usage("-o FILE is required ('-': standard output)");
  return a;
}

}  // namespace

int export_command(const std::vector<std::string>& args) {
  for (const std::string& a : args)
    if (a == "-h" || a == "--help") {
      std::cout << kExportHelp;
      return 0;
    }
  ExportArgs a;
  try {
    a = parse(args);
  } catch (const Usage& e) {
    std::cerr << "nestsim export: " << e.what() << "\n\n" << kExportHelp;
    return 2;
  }
  ViewTrajectory t;
  try {
    t = read_view_trajectory(a.trajectory);
  } catch (const ViewError& e) {
    std::cerr << "nestsim export: " << e.what() << "\n";
    return 2;
  }
  if (a.frames.start >= t.frames) {
    std::cerr << "nestsim export: --frames: " << a.trajectory << " holds frames 0 to "
              << (t.frames == 0 ? std::string("(none)") : std::to_string(t.frames - 1))
              << "; none is selected from " << a.frames.start << " on\n";
    return 2;
  }
  try {
    const io::Trajectory trajectory(a.trajectory);
    OutputFile out(a.output);
    uint64_t written = 0;
    for (uint64_t f = a.frames.start; f < std::min(a.frames.stop, t.frames); f += a.frames.step) {
      write_block(out, t, trajectory.read_frame(f));
      ++written;
    }
    out.commit();
    if (a.output != "-")
      std::cerr << "nestsim export: " << written << " frames -> " << a.output << "\n";
  } catch (const std::invalid_argument& e) {
    std::cerr << "nestsim export: " << e.what() << "\n";
    return 2;
  } catch (const io::InputError& e) {
    std::cerr << "nestsim export: " << e.what() << "\n";
    return 2;
  }
  return 0;
}

}  // namespace nestsim::app
