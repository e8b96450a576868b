#include "ensemble_analysis.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "ensemble/ensemble_store.h"
#include "tool_script.h"

namespace nestsim::app {

double student_t975(std::size_t dof) {
  static const double table[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306,
                                 2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120,
                                 2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
                                 2.060,  2.056, 2.052, 2.048, 2.045, 2.042};
  if (dof == 0) return 0;
  if (dof <= 30) return table[dof - 1];
  return 1.959964 + 2.4 / double(dof);  // within 0.002 of the quantile beyond 30
}

MeanInterval mean_interval(const std::vector<double>& values) {
  MeanInterval r;
  r.n = values.size();
  if (r.n == 0) return r;
  double sum = 0;
  for (double v : values) sum += v;
  r.mean = sum / double(r.n);
  double ss = 0;
  for (double v : values) ss += (v - r.mean) * (v - r.mean);
  const double half =
      r.n > 1 ? student_t975(r.n - 1) * std::sqrt(ss / double(r.n - 1) / double(r.n)) : 0;
  r.low = r.mean - half;
  r.high = r.mean + half;
  return r;
}

namespace {

// One scan point's done replicas, on the frames and columns they all have.
struct PointStats {
  std::vector<std::string> columns;
  std::vector<double> time;
  std::vector<std::vector<MeanInterval>> stats;  // [frame][column]
  std::size_t done = 0, other = 0;
};

PointStats point_stats(const EnsembleIndex& index, uint64_t point) {
  PointStats p;
  std::vector<const MemberSeries*> done;
  for (const MemberSeries& m : index.ended) {
    if (m.point != point) continue;
    if (m.status == "done" && !m.time.empty()) done.push_back(&m);
    else ++p.other;
  }
  p.done = done.size();
  if (done.empty()) return p;
  p.columns = done.front()->columns;
  std::size_t frames = done.front()->time.size();
  for (const MemberSeries* m : done) frames = std::min(frames, m->time.size());
  p.time.assign(done.front()->time.begin(), done.front()->time.begin() + long(frames));
  std::vector<bool> keep(p.columns.size(), false);  // columns not 0 throughout
  for (const MemberSeries* m : done)
    for (std::size_t f = 0; f < frames; ++f)
      for (std::size_t c = 0; c < p.columns.size() && c < m->values[f].size(); ++c)
        if (m->values[f][c] != 0) keep[c] = true;
  std::vector<std::string> kept;
  for (std::size_t c = 0; c < p.columns.size(); ++c)
    if (keep[c]) kept.push_back(p.columns[c]);
  p.stats.assign(frames, {});
  for (std::size_t f = 0; f < frames; ++f)
    for (std::size_t c = 0; c < p.columns.size(); ++c) {
      if (!keep[c]) continue;
      std::vector<double> v;
      for (const MemberSeries* m : done)
        if (c < m->values[f].size() && m->columns == done.front()->columns)
          v.push_back(m->values[f][c]);
      p.stats[f].push_back(mean_interval(v));
    }
  p.columns = kept;
  return p;
}

std::string point_label(const EnsembleIndex& index, uint64_t point) {
  std::string s;
  for (std::size_t k = 0; k < index.scan_keys.size(); ++k)
    s += (s.empty() ? "" : " ") + index.scan_keys[k] + "=" + index.scan_values[point][k];
  return s.empty() ? "(no scan)" : s;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string num(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%.10g", x);
  return b;
}

void print_point(const EnsembleIndex& index, uint64_t point, const PointStats& p) {
  std::printf("\npoint %llu: %s  (%zu replica(s) done, %zu not)\n",
              static_cast<unsigned long long>(point), point_label(index, point).c_str(), p.done,
              p.other);
  if (p.time.empty()) return;
  std::printf("  at time %g %s (last frame): mean [95%% interval of the mean]\n",
              p.time.back(), index.time_unit.c_str());
  for (std::size_t c = 0; c < p.columns.size(); ++c) {
    const MeanInterval& s = p.stats.back()[c];
    std::printf("    %-40s %12.4g  [%.4g, %.4g]\n", p.columns[c].c_str(), s.mean, s.low, s.high);
  }
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + path);
}

void write_csvs(const EnsembleIndex& index, const std::vector<PointStats>& points,
                const std::string& dir) {
  std::filesystem::create_directories(dir);
  std::string text = "point";
  for (const std::string& k : index.scan_keys) text += "," + csv_field(k);
  text += ",replicas,frame,time_" + index.time_unit + ",observable,mean,ci95_low,ci95_high\n";
  for (std::size_t p = 0; p < points.size(); ++p) {
    std::string head = std::to_string(p);
    for (const std::string& v : index.scan_values[p]) head += "," + csv_field(v);
    head += "," + std::to_string(points[p].done);
    for (std::size_t f = 0; f < points[p].time.size(); ++f)
      for (std::size_t c = 0; c < points[p].columns.size(); ++c) {
        const MeanInterval& s = points[p].stats[f][c];
        text += head + "," + std::to_string(f) + "," + num(points[p].time[f]) + "," +
                csv_field(points[p].columns[c]) + "," + num(s.mean) + "," + num(s.low) + "," +
                num(s.high) + "\n";
      }
  }
  write_file(dir + "/ensemble_means.csv", text);
  text = "member,point,status,message\n";
  for (const MemberSeries& m : index.ended)
    text += std::to_string(m.index) + "," + std::to_string(m.point) + "," + m.status + "," +
            csv_field(m.message) + "\n";
  write_file(dir + "/ensemble_members.csv", text);
}

}  // namespace

int analyze_ensemble(const std::string& dir, const std::string& csv_dir,
                     const std::string& plot_dir) {
  EnsembleIndex index;
  try {
    index = read_index(dir);
  } catch (const std::exception& e) {
    std::cerr << "nestsim analyze: " << dir << " is not an ensemble directory (" << e.what()
              << ")\n";
    return 2;
  }
  std::printf("ensemble %s: %llu members, %zu ended\n", dir.c_str(),
              static_cast<unsigned long long>(index.members), index.ended.size());
  std::vector<PointStats> points;
  for (uint64_t p = 0; p < index.scan_values.size(); ++p) {
    points.push_back(point_stats(index, p));
    print_point(index, p, points.back());
  }
  for (const MemberSeries& m : index.ended)
    if (m.status != "done")
      std::printf("member %llu %s: %s\n", static_cast<unsigned long long>(m.index),
                  m.status.c_str(), m.message.c_str());
  const std::string csv = csv_dir.empty() ? plot_dir : csv_dir;
  if (!csv.empty()) write_csvs(index, points, csv);
  if (!plot_dir.empty()) {
    const std::string script = find_tool_script("plot_ensemble.py", "NESTSIM_ENSEMBLE_PLOT_SCRIPT");
    if (const int status = run_tool_script(script, {csv, plot_dir}); status != 0) {
      std::cerr << "nestsim analyze: " << script << " failed (exit " << status
                << "); the CSV files are in " << csv << "\n";
      return 1;
    }
  }
  return 0;
}

}  // namespace nestsim::app
