// `nestsim analyze`: what happened in a trajectory, as tables, CSV files and plots.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "commands/commands.h"
#include "commands/output_file.h"
#include "ensemble/ensemble_analysis.h"
#include "nestsim/analysis/trajectory_analysis.h"
#include "tool_script.h"

namespace nestsim::app {

using analysis::analyze_trajectory;
using analysis::AnalysisTables;
using analysis::FrameContacts;
using analysis::ObservableSeries;
using analysis::TrajectoryError;
using analysis::location_count;
using analysis::location_name;
using analysis::read_trajectory_info;
using analysis::TrajectoryInfo;

const char* const kAnalyzeHelp =
    "usage: nestsim analyze OUT.h5 [--csv DIR] [--plot DIR]\n"
    "       nestsim analyze ENSEMBLE_DIR [--csv DIR] [--plot DIR]\n"
    "\n"
    "Given the directory of `nestsim ensemble -o DIR`: per scan point, the mean over its\n"
    "done replicas of each observable over time with the 95% confidence interval of the\n"
    "mean (Student's t); --csv writes ensemble_means.csv and ensemble_members.csv,\n"
    "--plot a plot per observable (tools/plot_ensemble.py).\n"
    "\n"
    "Reads a trajectory written by `nestsim run` and prints, per frame:\n"
    "  - bodies of each kind by location: outside every compartment, 'in K' (in the\n"
    "    lumen of a compartment of kind K) or 'on K' (in the membrane of one);\n"
    "  - reaction and compartment event totals: every counter under /observables whose\n"
    "    name starts with events/ or reactions/, or 'no reaction rules in this model'.\n"
    "    reactions/RULE holds each reaction rule's events per output interval (those\n"
    "    since the previous frame), reactions those of all rules: their totals are\n"
    "    sums over the frames. Other counters count since step 0: their total is the\n"
    "    last frame's value;\n"
    "  - the mean squared displacement of each kind from frame 0, over the bodies of\n"
    "    frame 0 that are still present with the same kind (periodic jumps unwrapped\n"
    "    with minimum images between frames, so a body must move less than half a box\n"
    "    edge from one frame to the next);\n"
    "  - contact counts: HSX, pairs of nested hollow spheres that touch, against SSX,\n"
    "    the pairs a solid-sphere tool would report (it counts every body inside a\n"
    "    compartment's lumen as touching the compartment); and 'lists', when the run\n"
    "    stored them, the pairs the run's neighbour lists need at the frame (its\n"
    "    --collision broad phase, hollow or solid, with the reaction rules' reach,\n"
    "    without the lists' skin).\n"
    "Long tables show 21 evenly spaced frames; the CSV files hold every frame.\n"
    "\n"
    "--csv DIR   write counts.csv, msd.csv (with each kind's D from the model),\n"
    "            contacts.csv (lists: -1 unknown),\n"
    "            events.csv (every counter as stored) and reactions.csv (frame, step,\n"
    "            time, then one column per reaction rule: its events in the output\n"
    "            interval that ends at the frame) to DIR (created if needed); times in\n"
    "            the model's unit, lengths in its unit\n"
    "--plot DIR  write counts.png, msd.png, contacts.png and, when the model has\n"
    "            reaction rules, reactions.png (cumulative events per rule) to DIR with\n"
    "            /usr/bin/python3 (matplotlib) and tools/plot_trajectory.py, a script\n"
    "            to read and adapt; the CSV files go to DIR too unless --csv is given.\n"
    "            NESTSIM_PLOT_SCRIPT=FILE uses another script with the same arguments.\n"
    "\n"
    "Exit codes: 0 done, 1 failure, 2 bad usage or a file that is not a nestsim\n"
    "trajectory ('OUT.h5: not a nestsim trajectory (why)').\n";

namespace {

const char* const kPython = "/usr/bin/python3";

struct AnalyzeArgs {
  std::string trajectory, csv_dir, plot_dir;
};

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

AnalyzeArgs parse(const std::vector<std::string>& args) {
  AnalyzeArgs p;
  for (std::size_t k = 0; k < args.size(); ++k) {
    const std::string& a = args[k];
    auto value = [&]() -> const std::string& {
      if (k + 1 >= args.size() || args[k + 1].empty()) throw UsageError(a + " needs a directory");
      return args[++k];
    };
    if (a == "--csv")
      p.csv_dir = value();
    else if (a == "--plot")
      p.plot_dir = value();
    else if (!a.empty() && a[0] == '-')
      throw UsageError("unknown option '" + a + "'");
    else if (p.trajectory.empty())
      p.trajectory = a;
    else
      throw UsageError("more than one trajectory given ('" + p.trajectory + "', '" + a + "')");
  }
  if (p.trajectory.empty()) throw UsageError("no trajectory given");
  return p;
}

std::string number(double x, int digits = 6) {
  char text[40];
  std::snprintf(text, sizeof text, "%.*g", digits, x);
  return text;
}

// The frames a printed table shows: all of up to 25, else 21 evenly spaced ones.
std::vector<std::size_t> shown_frames(std::size_t n) {
  std::vector<std::size_t> rows;
  if (n <= 25) {
    for (std::size_t f = 0; f < n; ++f) rows.push_back(f);
    return rows;
  }
  for (std::size_t i = 0; i <= 20; ++i) rows.push_back((i * (n - 1) + 10) / 20);
  return rows;
}

// A text table: right-aligned columns, each as wide as its widest cell. A table wider
// than a terminal is printed in blocks of columns, each repeating the leading ones.
class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header, std::size_t leading = 3) : leading_(leading) {
    rows_.push_back(std::move(header));
  }
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  void print(std::ostream& out, std::size_t max_width = 120) const {
    const std::size_t columns = rows_[0].size();
    std::vector<std::size_t> width(columns, 0);
    for (const auto& row : rows_)
      for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size() + 2);
    std::size_t lead = 0;
    for (std::size_t c = 0; c < std::min(leading_, columns); ++c) lead += width[c];
    for (std::size_t first = std::min(leading_, columns); first < columns || first == leading_;) {
      std::size_t last = first, used = lead;
      while (last < columns && (last == first || used + width[last] <= max_width))
        used += width[last++];
      if (first > leading_) out << "\n";
      for (const auto& row : rows_) {
        std::string line;
        auto cell = [&](std::size_t c) {
          line += std::string(width[c] - row[c].size(), ' ') + row[c];
        };
        for (std::size_t c = 0; c < std::min(leading_, columns); ++c) cell(c);
        for (std::size_t c = first; c < last; ++c) cell(c);
        out << line << "\n";
      }
      if (last == first) break;  // only the leading columns
      first = last;
    }
  }

 private:
  std::size_t leading_;
  std::vector<std::vector<std::string>> rows_;
};

// The (kind, location) pairs that hold a body in some frame, in kind then location order.
std::vector<std::pair<std::size_t, std::size_t>> occupied(const TrajectoryInfo& info,
                                                          const AnalysisTables& t) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  for (std::size_t k = 0; k < info.kinds.size(); ++k)
    for (std::size_t l = 0; l < location_count(info.kinds.size()); ++l)
      for (const auto& frame : t.counts)
        if (frame[k][l] > 0) {
          out.emplace_back(k, l);
          break;
        }
  return out;
}

// The kinds with bodies to follow for the mean squared displacement.
std::vector<std::size_t> tracked_kinds(const AnalysisTables& t) {
  std::vector<std::size_t> out;
  if (t.tracked.empty()) return out;
  for (std::size_t k = 0; k < t.tracked[0].size(); ++k)
    if (t.tracked[0][k] > 0) out.push_back(k);
  return out;
}

std::vector<std::string> stamp(const AnalysisTables& t, std::size_t f) {
  return {std::to_string(f), std::to_string(t.frames[f].step), number(t.frames[f].time)};
}

// What a table shows of the frames: the rows, and their note (" (21 of 120 frames)").
struct Shown {
  std::vector<std::size_t> rows;
  std::string note;
  std::string time_header;
};

void print_header(const TrajectoryInfo& info, const AnalysisTables& t, std::ostream& out) {
  out << info.path << ": " << t.frames.size() << " frames, steps " << t.frames.front().step
      << " to " << t.frames.back().step << ", time " << number(t.frames.front().time) << " to "
      << number(t.frames.back().time) << " " << info.time_unit << "; box " << number(info.box[0])
      << " x " << number(info.box[1]);
  if (info.dim == 3) out << " x " << number(info.box[2]);
  out << " " << info.length_unit << (info.periodic ? ", periodic" : ", walls") << "\n";
  out << "kinds:";
  for (std::size_t k = 0; k < info.kinds.size(); ++k)
    out << (k ? ", " : " ") << info.kinds[k] << (info.compartment[k] ? " (compartment)" : "");
  out << "\n\n";
}

void print_counts(const TrajectoryInfo& info, const AnalysisTables& t, const Shown& v,
                  std::ostream& out) {
  const std::vector<std::size_t>& rows = v.rows;
  const std::string& shown = v.note;
  const std::string& time_header = v.time_header;
  const auto pairs = occupied(info, t);
  out << "Bodies by kind and location ('in K': in the lumen of a K, 'on K': in its "
         "membrane)"
      << shown << "\n";
  std::vector<std::string> header{"frame", "step", time_header};
  for (const auto& [k, l] : pairs)
    header.push_back(info.kinds[k] + " " + location_name(l, info.kinds));
  TextTable counts(header);
  for (std::size_t f : rows) {
    std::vector<std::string> row = stamp(t, f);
    for (const auto& [k, l] : pairs) row.push_back(std::to_string(t.counts[f][k][l]));
    counts.add(row);
  }
  counts.print(out);
}

void print_events(const AnalysisTables& t, std::ostream& out) {
  out << "\nReaction and compartment events (totals since step 0)\n";
  bool any_events = false;
  for (const auto& s : t.observables) {
    if (!s.is_event_counter || s.values.empty()) continue;
    any_events = true;
    out << "  " << s.name << ":";
    for (std::size_t c = 0; c < s.columns.size(); ++c) {
      double total = s.values.back()[c];  // a count since step 0
      if (s.per_interval) {               // counts per output interval
        total = 0;
        for (const auto& frame : s.values) total += frame[c];
      }
      out << (s.columns.size() > 1 ? " " + s.columns[c] + "=" : " ") << number(total, 12);
    }
    out << "\n";
  }
  if (!any_events) out << "  no reaction rules in this model\n";
  bool any_other = false;
  for (const auto& s : t.observables) {
    if (s.is_event_counter || s.values.empty()) continue;
    if (!any_other) out << "Other observables (last frame)\n";
    any_other = true;
    out << "  " << s.name << ":";
    for (std::size_t c = 0; c < s.columns.size(); ++c)
      out << (s.columns.size() > 1 ? " " + s.columns[c] + "=" : " ")
          << number(s.values.back()[c], 12);
    out << "\n";
  }
}

void print_msd(const TrajectoryInfo& info, const AnalysisTables& t, const Shown& v,
               std::ostream& out) {
  const std::vector<std::size_t>& rows = v.rows;
  const std::string& shown = v.note;
  const std::string& time_header = v.time_header;
  const auto kinds = tracked_kinds(t);
  out << "\nMean squared displacement from frame 0 (" << info.length_unit
      << "^2) of the bodies present since frame 0" << shown << "\n";
  std::vector<std::string> header = {"frame", "step", time_header};
  for (std::size_t k : kinds) header.push_back(info.kinds[k]);
  TextTable msd(header);
  for (std::size_t f : rows) {
    std::vector<std::string> row = stamp(t, f);
    for (std::size_t k : kinds) row.push_back(t.tracked[f][k] > 0 ? number(t.msd[f][k], 5) : "-");
    msd.add(row);
  }
  msd.print(out);
  const std::size_t last = t.frames.size() - 1;
  const double elapsed = t.frames[last].time - t.frames[0].time;
  if (elapsed > 0 && !kinds.empty()) {
    out << "  MSD / (" << 2 * info.dim << " t) at the last frame, against the model's D ("
        << info.length_unit << "^2/" << info.time_unit << "; lower where membranes confine):\n";
    for (std::size_t k : kinds) {
      if (t.tracked[last][k] == 0) continue;
      out << "    " << info.kinds[k] << ": " << number(t.msd[last][k] / (2 * info.dim * elapsed), 4)
          << " (model " << number(info.diffusion[k], 4) << ", " << t.tracked[last][k]
          << " bodies)\n";
    }
  }
}

void print_contacts(const TrajectoryInfo& info, const AnalysisTables& t, const Shown& v,
                    std::ostream& out) {
  const std::vector<std::size_t>& rows = v.rows;
  const std::string& shown = v.note;
  const std::string& time_header = v.time_header;
  out << "\nContacts: HSX (hollow spheres) against SSX (solid spheres; also counts bodies "
         "inside a lumen)"
      << shown << "\n";
  const bool lists = std::any_of(t.contacts.begin(), t.contacts.end(),
                                 [](const FrameContacts& c) { return c.lists >= 0; });
  if (lists)
    out << "lists: pairs the run's neighbour lists need ("
        << (info.collision.empty() ? "its" : info.collision)
        << " broad phase, with the reaction reach, no skin)\n";
  std::vector<std::string> contact_header{"frame", "step", time_header, "bodies",
                                          "HSX",   "SSX",  "SSX only"};
  if (lists) contact_header.push_back("lists");
  TextTable contacts(contact_header);
  for (std::size_t f : rows) {
    std::vector<std::string> row = stamp(t, f);
    const FrameContacts& c = t.contacts[f];
    row.push_back(std::to_string(c.bodies));
    row.push_back(std::to_string(c.hollow));
    row.push_back(std::to_string(c.solid));
    row.push_back(std::to_string(c.solid - c.hollow));
    if (lists) row.push_back(c.lists >= 0 ? std::to_string(c.lists) : "-");
    contacts.add(row);
  }
  contacts.print(out);
}

void print_tables(const TrajectoryInfo& info, const AnalysisTables& t, std::ostream& out) {
  Shown v;
  v.time_header = "time (" + info.time_unit + ")";
  v.rows = shown_frames(t.frames.size());
  v.note = v.rows.size() < t.frames.size() ? " (" + std::to_string(v.rows.size()) + " of " +
                                                 std::to_string(t.frames.size()) + " frames)"
                                           : "";
  print_header(info, t, out);
  print_counts(info, t, v, out);
  print_events(t, out);
  print_msd(info, t, v, out);
  print_contacts(info, t, v, out);
}

// CSV fields: quoted when they hold a comma or a quote.
std::string field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

void write_csv(const std::string& path, const std::string& text) {
  OutputFile out(path);
  out.write(text.data(), text.size());
  out.commit();
}

void write_csvs(const TrajectoryInfo& info, const AnalysisTables& t, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw std::runtime_error(dir + ": cannot create the directory: " + ec.message());
  const std::string time_column = "time_" + info.time_unit;
  auto stamp_fields = [&](std::size_t f) {
    return std::to_string(f) + "," + std::to_string(t.frames[f].step) + "," +
           number(t.frames[f].time, 15) + ",";
  };

  std::string text = "frame,step," + time_column + ",kind,location,count\n";
  const auto pairs = occupied(info, t);
  for (std::size_t f = 0; f < t.frames.size(); ++f)
    for (const auto& [k, l] : pairs)
      text += stamp_fields(f) + field(info.kinds[k]) + "," + field(location_name(l, info.kinds)) +
              "," + std::to_string(t.counts[f][k][l]) + "\n";
  write_csv(dir + "/counts.csv", text);

  // The model's D of each kind beside its MSD: the plots draw free diffusion from it.
  text = "frame,step," + time_column + ",kind,bodies,msd_" + info.length_unit + "2,diffusion_" +
         info.length_unit + "2_per_" + info.time_unit + "\n";
  const auto kinds = tracked_kinds(t);
  for (std::size_t f = 0; f < t.frames.size(); ++f)
    for (std::size_t k : kinds)
      if (t.tracked[f][k] > 0)
        text += stamp_fields(f) + field(info.kinds[k]) + "," + std::to_string(t.tracked[f][k]) +
                "," + number(t.msd[f][k], 15) + "," + number(info.diffusion[k], 15) + "\n";
  write_csv(dir + "/msd.csv", text);

  text = "frame,step," + time_column + ",bodies,hsx,ssx,lists\n";
  for (std::size_t f = 0; f < t.frames.size(); ++f)
    text += stamp_fields(f) + std::to_string(t.contacts[f].bodies) + "," +
            std::to_string(t.contacts[f].hollow) + "," + std::to_string(t.contacts[f].solid) + "," +
            std::to_string(t.contacts[f].lists) + "\n";
  write_csv(dir + "/contacts.csv", text);

  text = "frame,step," + time_column + ",observable,column,value\n";
  for (const auto& s : t.observables)
    for (std::size_t f = 0; f < s.values.size() && f < t.frames.size(); ++f)
      for (std::size_t c = 0; c < s.columns.size(); ++c)
        text += stamp_fields(f) + field(s.name) + "," + field(s.columns[c]) + "," +
                number(s.values[f][c], 15) + "\n";
  write_csv(dir + "/events.csv", text);

  text = "frame,step," + time_column;
  for (const auto& rule : info.reactions) text += "," + field(rule);
  text += "\n";
  for (std::size_t f = 0; f < t.frames.size(); ++f) {
    text += std::to_string(f) + "," + std::to_string(t.frames[f].step) + "," +
            number(t.frames[f].time, 15);
    for (int64_t n : t.reaction_events[f]) text += "," + std::to_string(n);
    text += "\n";
  }
  write_csv(dir + "/reactions.csv", text);
}

}  // namespace

int analyze_command(const std::vector<std::string>& args) {
  if (std::find(args.begin(), args.end(), "--help") != args.end() ||
      std::find(args.begin(), args.end(), "-h") != args.end()) {
    std::cout << kAnalyzeHelp;
    return 0;
  }
  AnalyzeArgs p;
  try {
    p = parse(args);
  } catch (const UsageError& e) {
    std::cerr << "nestsim analyze: " << e.what() << "\n\n" << kAnalyzeHelp;
    return 2;
  }
  try {
    if (std::filesystem::is_directory(p.trajectory)) {  // `nestsim ensemble -o DIR`
      if (!std::filesystem::exists(std::filesystem::path(p.trajectory) / "ensemble.h5")) {
        std::cerr << "nestsim analyze: " << p.trajectory
                  << ": is a directory, not a trajectory (and not an ensemble directory: it has "
                     "no ensemble.h5)\n";
        return 2;
      }
      return analyze_ensemble(p.trajectory, p.csv_dir, p.plot_dir);
    }
    const TrajectoryInfo info = read_trajectory_info(p.trajectory);
    if (info.frames == 0) throw TrajectoryError(p.trajectory + ": the trajectory holds no frame");
    const AnalysisTables tables = analyze_trajectory(info);
    print_tables(info, tables, std::cout);
    if (!p.csv_dir.empty()) write_csvs(info, tables, p.csv_dir);
    if (!p.plot_dir.empty()) {
      const std::string script = find_tool_script("plot_trajectory.py", "NESTSIM_PLOT_SCRIPT");
      const std::string csv_dir = p.csv_dir.empty() ? p.plot_dir : p.csv_dir;
      if (p.csv_dir.empty()) write_csvs(info, tables, csv_dir);
      const std::string title = std::filesystem::path(p.trajectory).filename().string();
      const int status = run_tool_script(script, {csv_dir, p.plot_dir, "--title", title});
      if (status != 0) {
        std::cerr << "nestsim analyze: " << kPython << " " << script << " failed (exit " << status
                  << "); the CSV files are in " << csv_dir << "\n";
        return 1;
      }
    }
    return 0;
  } catch (const TrajectoryError& e) {
    std::cerr << "nestsim analyze: " << e.what() << "\n";
    return 2;
  }
}

}  // namespace nestsim::app
