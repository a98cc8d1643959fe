#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""What the hook series costs at its sites while unused, from two built
kernels: every static-key (jump label) site in the functions that carry a
hook, with its key and the instruction built in (a NOP for a key that is
off, as built), and the plain load+compare that guards the epoll min-wait
and the fork and exit hooks. Prints markdown.

    hooks.py STOCK_VMLINUX PATCHED_VMLINUX

ep_poll() is inlined into do_epoll_wait(); task_tick_fair() is the
scheduler tick. The jump table is read with the x86-64 relative layout
(s32 code, s32 target, s64 key; each relative to its own field).
"""
import bisect
import re
import struct
import subprocess
import sys

FUNCS = ["do_epoll_wait", "task_tick_fair"]
# The min-wait functions of fs/eventpoll.c; those the compiler inlined are
# not in the symbol table, and show inside their callers.
MINWAIT_PATH = ["ep_min_wait", "ep_min_wait_wake", "ep_min_wait_timer",
                "ep_mw_init", "ep_mw_scan", "ep_mw_count", "ep_mw_account",
                "ep_mw_unaccount", "ep_mw_set_hold_until", "ep_mw_arm",
                "ep_mw_start", "ep_mw_dequeue"]
MODULE_REFS = ["try_module_get", "module_put", "__module_get"]
GUARDED_CALLS = ["ep_min_wait", "__numa_balancing_mm_init",
                 "__numa_balancing_mm_exit", "__numa_balancing_mm_release"]


def run(*cmd):
    return subprocess.run(cmd, check=True, capture_output=True,
                          text=True).stdout


def symbols(vmlinux):
    syms = {}
    for line in run("nm", "-S", vmlinux).splitlines():
        f = line.split()
        if len(f) == 4:
            syms[f[3]] = (int(f[0], 16), int(f[1], 16))
        elif len(f) == 3:
            syms.setdefault(f[2], (int(f[0], 16), 0))
    return syms


def read_vaddr(vmlinux, addr, size):
    for line in run("readelf", "-SW", vmlinux).splitlines():
        m = re.match(r"\s*\[\s*\d+\]\s+(\S+)\s+(\S+)\s+([0-9a-f]+)\s+"
                     r"([0-9a-f]+)\s+([0-9a-f]+)", line)
        if not m or m.group(2) == "NOBITS":
            continue
        start, off, sz = (int(m.group(i), 16) for i in (3, 4, 5))
        if start <= addr and addr + size <= start + sz:
            with open(vmlinux, "rb") as f:
                f.seek(off + addr - start)
                return f.read(size)
    raise SystemExit(f"address {addr:#x} not in a section of {vmlinux}")


def jump_sites(vmlinux, syms):
    start = syms["__start___jump_table"][0]
    stop = syms["__stop___jump_table"][0]
    data = read_vaddr(vmlinux, start, stop - start)
    by_addr = sorted((a, n) for n, (a, _) in syms.items())
    addrs = [a for a, _ in by_addr]
    sites = []
    for i in range(0, len(data), 16):
        code, _target, key = struct.unpack_from("<iiq", data, i)
        entry = start + i
        key_addr = (entry + 8 + key) & ~3
        flags = (entry + 8 + key) & 3
        j = bisect.bisect_right(addrs, key_addr) - 1
        name = hex(key_addr)
        if j >= 0:
            off = key_addr - by_addr[j][0]
            name = by_addr[j][1] + (f"+{off:#x}" if off else "")
        sites.append((entry + code, name, flags & 1))
    return sites


def disasm(vmlinux, start, stop):
    out = run("objdump", "-d", "--no-show-raw-insn",
              f"--start-address={start:#x}", f"--stop-address={stop:#x}",
              vmlinux)
    insns = []
    for line in out.splitlines():
        m = re.match(r"\s*([0-9a-f]+):\s+(.*)", line)
        if m:
            insns.append((int(m.group(1), 16), " ".join(m.group(2).split())))
    return insns


def report(label, vmlinux):
    syms = symbols(vmlinux)
    sites = jump_sites(vmlinux, syms)
    print(f"### {label}: `{vmlinux}`\n")
    print("| function | offset | static key | built-in instruction |")
    print("|---|---|---|---|")
    for fn in FUNCS:
        base, size = syms[fn]
        insns = dict(disasm(vmlinux, base, base + size))
        for addr, key, _ in sorted(sites):
            if base <= addr < base + size:
                print(f"| {fn} | +{addr - base:#x} | {key} | "
                      f"`{insns.get(addr, '?')}` |")
    guards = [c for c in GUARDED_CALLS if c in syms]
    if not guards:
        print("\nNo min-wait or fork/exit hook in this kernel.\n")
        return
    print("\nCalls into the min-wait and fork/exit hooks and the "
          "instructions that guard them (a load of the instance's min-wait "
          "state or of mm->numa_balancing_mode and a compare, no static "
          "key):\n")
    text = run("objdump", "-d", "--no-show-raw-insn", vmlinux)
    print("```")
    for func, insns in functions(text):
        for i, (_, insn) in enumerate(insns):
            if insn.startswith("call") and any(f"<{c}>" in insn
                                               for c in guards):
                print_guard(func, insns, i)
    print("```\n")


def functions(text):
    """(name, [(addr, insn)]) for each function of an objdump -d."""
    func, insns = None, []
    for line in text.splitlines():
        m = re.match(r"[0-9a-f]+ <(\S+)>:", line)
        if m:
            if func:
                yield func, insns
            func, insns = m.group(1), []
            continue
        m = re.match(r"\s*([0-9a-f]+):\s+(.*)", line)
        if m and func:
            insns.append((int(m.group(1), 16), " ".join(m.group(2).split())))
    if func:
        yield func, insns


def print_guard(func, insns, call):
    """The conditional jump that reaches insns[call]'s block, in context."""
    start = call
    while start > 0 and not re.match(r"(ret|jmp)", insns[start - 1][1]):
        start -= 1
    target = f"{insns[start][0]:x}"
    print(f"{func}:")
    for i, (addr, insn) in enumerate(insns):
        if re.match(r"j(?!mp)\w+ " + target + r"\b", insn):
            for a, s in insns[max(i - 2, 0):i + 1]:
                print(f"    {a:x}: {s}")
            print("    ...")
    for a, s in insns[start:call + 1]:
        print(f"    {a:x}: {s}")


def minwait_path(vmlinux):
    """What a blocking call on a min-wait instance executes that could be
    shared by all instances: every lock-prefixed (atomic) instruction and
    every call, in the functions of its path."""
    syms = symbols(vmlinux)
    path = [f for f in MINWAIT_PATH if f in syms]
    if not path:
        return
    print("### The blocking path of a min-wait call\n")
    print("A blocking `epoll_wait()` on an instance with a minimum wait runs "
          f"{', '.join(f'`{f}()`' for f in path)} (with their inlined "
          "helpers) besides the plain path. Their atomic (lock-prefixed) "
          "instructions and calls, from the patched vmlinux; an atomic on "
          "a global would have a `(%rip)` operand:\n")
    print("| function | atomics | calls |")
    print("|---|---|---|")
    shared = []
    for fn in path:
        base, size = syms[fn]
        atomics, calls = [], []
        for _, insn in disasm(vmlinux, base, base + size):
            if insn.startswith("lock "):
                atomics.append(insn)
                if "(%rip)" in insn:
                    shared.append(f"{fn}: {insn}")
            m = re.match(r"call\s+\S+ <([^>+]+)", insn)
            if m and m.group(1) not in calls:
                calls.append(m.group(1))
                if m.group(1) in MODULE_REFS:
                    shared.append(f"{fn}: calls {m.group(1)}")
        print(f"| {fn} | {', '.join(f'`{a}`' for a in atomics) or 'none'} "
              f"| {', '.join(f'`{c}`' for c in calls) or 'none'} |")
    print()
    if shared:
        print("Shared by all instances: " + "; ".join(shared) + "\n")
    else:
        print("No atomic on a global address, and no call to "
              f"{', '.join(f'`{c}`' for c in MODULE_REFS)}"
              ": the locks taken are the instance's (`ep->lock`, "
              "`ep->mtx`), the CPU's hrtimer base and run queue (in "
              "`hrtimer_start_range_ns()`, `hrtimer_cancel()`, "
              "`schedule()`, `wake_up_process()`), none shared by all "
              "instances. The previous version of the series took the "
              "module's reference count (an atomic shared by every caller) "
              "on the way in and out of every blocking call.\n")



def main():
    if len(sys.argv) != 3:
        print(f"usage: {sys.argv[0]} STOCK_VMLINUX PATCHED_VMLINUX",
              file=sys.stderr)
        sys.exit(2)
    print("Jump-label sites as built (`xchg %ax,%ax` and `nopl 0x0(%rax,%rax,1)` "
          "are the 2- and 5-byte NOPs). At run time the kernel rewrites a site "
          "into a jump while its key is on: `sched_numa_balancing` is on in "
          "A, B and C alike whenever kernel.numa_balancing is 1 (the default "
          "here). The series adds no jump-label site: the min-wait check in "
          "`ep_poll()` (inlined into `do_epoll_wait()`) is a load of the "
          "instance's min-wait state and a not-taken branch, the same in B and "
          "C, so no code is patched when the module loads or unloads.\n")
    report("A stock", sys.argv[1])
    report("B/C patched", sys.argv[2])
    minwait_path(sys.argv[2])


if __name__ == "__main__":
    main()
