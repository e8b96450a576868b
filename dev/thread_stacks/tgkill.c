// tgkill PID TID SIG: a signal to one thread of a process (dev/thread_stacks/dump.sh).
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>
int main(int c, char** v) { return c < 4 ? 2 : (int)syscall(SYS_tgkill, atoi(v[1]), atoi(v[2]), atoi(v[3])); }
