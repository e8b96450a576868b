# Names the frames of /tmp/stk_PID.txt (backtrace_symbols_fd lines "lib(+0x..)[0xADDR]", written by
# stackdump.c) with the maps saved in /tmp/maps_PID: addr2line for libraries with debug
# information, the nearest exported symbol for libc.
import re, subprocess, sys
pid = sys.argv[1]
_syms = None
def libc_sym(path, rel):
    global _syms
    if _syms is None:
        _syms = []
        for l in subprocess.run(["nm", "-D", "--defined-only", path], capture_output=True, text=True).stdout.split("\n"):
            f = l.split()
            if len(f) == 3 and f[1] in "TtWw": _syms.append((int(f[0], 16), f[2]))
        _syms.sort()
    best = None
    for a, n in _syms:
        if a <= rel: best = (n, rel - a)
    return f"{best[0]}+{best[1]:#x}" if best else "?"
maps = []
for line in open(f"/tmp/maps_{pid}"):
    f = line.split()
    if len(f) < 6: continue
    lo, hi = (int(x, 16) for x in f[0].split("-"))
    maps.append((lo, hi, int(f[2], 16), f[5]))
for line in open(f"/tmp/stk_{pid}.txt"):
    m = re.search(r"\[0x([0-9a-f]+)\]", line)
    if not m or "===" in line:
        print(line.rstrip()); continue
    a = int(m.group(1), 16)
    for lo, hi, off, path in maps:
        if lo <= a < hi:
            rel = a - lo + off
            if "libc.so" in path:
                print(f"  libc+{rel:#x} {libc_sym(path, rel)}"); break
            if "libcuda" in path or "python3" in path or "libstdc" in path:
                print(f"  {path.split('/')[-1]}+{rel:#x}"); break
            r = subprocess.run(["addr2line", "-f", "-C", "-i", "-e", path, f"{rel:#x}"], capture_output=True, text=True).stdout.split("\n")
            print(f"  {path.split('/')[-1]}+{rel:#x} " + " | ".join(x for x in r if x)[:300]); break
    else:
        print("  ?", line.rstrip())
