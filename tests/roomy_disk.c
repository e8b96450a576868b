/* A preloaded library for tests/test_run_faults: statvfs reports a terabyte free on
 * every filesystem, as a quota or a network filesystem may report room it will not
 * give. nestsim's check of the disk's room before a frame then passes, the write itself
 * fails on the full disk, and the test reaches the path that takes a failed write back
 * to the last complete frame. Plain C, without the sanitizers, so that it can be
 * preloaded into any build of the program. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sys/statvfs.h>

static void roomy(struct statvfs* s) {
  const unsigned long block = s->f_frsize ? s->f_frsize : 4096;
  s->f_bfree = s->f_bavail = (1UL << 40) / block;
}

int statvfs(const char* path, struct statvfs* s) {
  int (*real)(const char*, struct statvfs*) =
      (int (*)(const char*, struct statvfs*))dlsym(RTLD_NEXT, "statvfs");
  const int r = real(path, s);
  if (r == 0) roomy(s);
  return r;
}

int statvfs64(const char* path, struct statvfs64* s) {
  int (*real)(const char*, struct statvfs64*) =
      (int (*)(const char*, struct statvfs64*))dlsym(RTLD_NEXT, "statvfs64");
  const int r = real(path, s);
  if (r == 0) {
    const unsigned long block = s->f_frsize ? s->f_frsize : 4096;
    s->f_bfree = s->f_bavail = (1UL << 40) / block;
  }
  return r;
}
