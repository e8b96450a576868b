// `nestsim view`'s HTTP server (cpp-httplib), bound to 127.0.0.1.
#include "view_server.h"

#include <httplib.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <atomic>
#include <deque>
#include <iostream>
#include <mutex>
#include <thread>
#include <utility>

#include "view/view_trajectory.h"

extern char** environ;

namespace nestsim::app {
namespace {

constexpr uint64_t kDefaultMaxBodies = 2000000;
constexpr std::size_t kCachedFrames = 4;

// The trajectory behind one lock: the HDF5 library of Debian is not thread-safe, and
// httplib answers requests on several threads. Encoded frames are kept while the file
// is unchanged (same size and modification time), so scrubbing back is instant.
class TrajectorySource {
 public:
  explicit TrajectorySource(std::string path) : path_(std::move(path)) {}

  std::string meta() {
    std::lock_guard<std::mutex> lock(mutex_);
    return to_json(read_view_trajectory(path_));
  }

  std::string frame(uint64_t index, uint64_t max_bodies) {
    std::lock_guard<std::mutex> lock(mutex_);
    const std::string stamp = file_stamp();
    for (const auto& c : cache_)
      if (c.index == index && c.max_bodies == max_bodies && c.stamp == stamp) return c.bytes;
    const ViewTrajectory t = read_view_trajectory(path_);
    if (index >= t.frames)
      throw ViewError(path_ + ": no frame " + std::to_string(index) + " (the file holds " +
                      std::to_string(t.frames) + ")");
    std::string bytes = encode_frame(path_, index, max_bodies, t.kinds);
    cache_.push_front({index, max_bodies, stamp, bytes});
    if (cache_.size() > kCachedFrames) cache_.pop_back();
    return bytes;
  }

 private:
  std::string file_stamp() const {
    struct stat st;
    if (::stat(path_.c_str(), &st) != 0) return "";
    return std::to_string(st.st_size) + ":" + std::to_string(st.st_mtim.tv_sec) + "." +
           std::to_string(st.st_mtim.tv_nsec);
  }

  struct Cached {
    uint64_t index, max_bodies;
    std::string stamp, bytes;
  };
  std::string path_;
  std::mutex mutex_;
  std::deque<Cached> cache_;
};

void send_error(httplib::Response& res, int status, const std::string& what) {
  res.status = status;
  res.set_content("{\"error\":" + json_string(what) + "}", "application/json");
}

void add_routes(httplib::Server& server, TrajectorySource& source) {
  server.Get("/api/meta", [&source](const httplib::Request&, httplib::Response& res) {
    try {
      res.set_content(source.meta(), "application/json");
      res.set_header("Cache-Control", "no-store");
    } catch (const std::exception& e) {
      send_error(res, 500, e.what());
    }
  });
  server.Get(R"(/api/frame/(\d+))", [&source](const httplib::Request& req,
                                              httplib::Response& res) {
    try {
      const uint64_t index = std::stoull(req.matches[1].str());
      uint64_t max_bodies = kDefaultMaxBodies;
      if (req.has_param("max")) max_bodies = std::max<uint64_t>(1, std::stoull(req.get_param_value("max")));
      res.set_content(source.frame(index, max_bodies), "application/octet-stream");
      res.set_header("Cache-Control", "no-store");
    } catch (const std::exception& e) {
      send_error(res, 500, e.what());
    }
  });
}

// Binds 127.0.0.1: the port asked for, any free one (0), or the first free one from
// the default on (-1). Returns the port, or -1.
int bind_port(httplib::Server& server, int asked) {
  if (asked == 0) return server.bind_to_any_port("127.0.0.1");
  if (asked > 0) return server.bind_to_port("127.0.0.1", asked) ? asked : -1;
  for (int port = kDefaultViewPort; port < kDefaultViewPort + 20; ++port)
    if (server.bind_to_port("127.0.0.1", port)) return port;
  return -1;
}

// Opens the address in the desktop's browser (xdg-open), without waiting for it.
void open_in_browser(const std::string& url) {
  pid_t pid;
  std::string program = "xdg-open";
  char* argv[] = {program.data(), const_cast<char*>(url.c_str()), nullptr};
  if (posix_spawnp(&pid, "xdg-open", nullptr, nullptr, argv, environ) != 0) {
    std::cout << "nestsim view: --open: xdg-open is not available; open the address by hand\n";
    return;
  }
  std::thread([pid] { waitpid(pid, nullptr, 0); }).detach();
}

}  // namespace

int serve_view(const ViewServerOptions& options) {
  // SIGINT and SIGTERM go to one thread that stops the server (a signal handler may not
  // call stop()); blocked before httplib starts its threads, which inherit the mask.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  TrajectorySource source(options.trajectory);
  httplib::Server server;
  // httplib's default adds SO_REUSEPORT, with which a second server would share a port
  // that is in use instead of being refused: SO_REUSEADDR only (a quick restart).
  server.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, reinterpret_cast<const void*>(&yes), sizeof yes);
  });
  add_routes(server, source);
  if (!server.set_mount_point("/", options.asset_dir)) {
    std::cerr << "nestsim view: the page's files are missing: " << options.asset_dir << "\n";
    return 1;
  }
  const int port = bind_port(server, options.port);
  if (port < 0) {
    std::cerr << "nestsim view: cannot listen on 127.0.0.1"
              << (options.port > 0 ? ":" + std::to_string(options.port) + " (in use?)"
                                   : " (no free port)")
              << "; choose another with --port P\n";
    return 1;
  }
  const std::string url = "http://127.0.0.1:" + std::to_string(port) + "/";
  std::cout << "nestsim view: " << options.trajectory << " at " << url
            << "  (Ctrl-C stops)" << std::endl;
  if (options.open_browser) open_in_browser(url);

  std::atomic<bool> signalled{false};
  std::thread waiter([&server, &stop_signals, &signalled] {
    int signal = 0;
    sigwait(&stop_signals, &signal);
    signalled = true;
    server.stop();
  });
  const bool listened = server.listen_after_bind();
  if (!signalled) pthread_kill(waiter.native_handle(), SIGTERM);  // the server failed
  waiter.join();
  return listened || signalled ? 0 : 1;
}

}  // namespace nestsim::app
