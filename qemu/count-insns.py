# SPDX-License-Identifier: GPL-2.0
"""gdb command count-insns: the instructions one kernel call executes.

In a guest started with qemu/run --gdb PORT, from the host:

  gdb -q -batch -ex 'target remote :PORT' -x qemu/count-insns.py \\
      -ex 'count-insns do_epoll_wait 1000 3' build/6.1/kernel/obj/vmlinux

stops at FUNC (a hardware breakpoint) after SKIP calls, single-steps it
until it returns (the stack pointer rises above its entry's) and prints
the number of instructions, and how many ran in each function, for
CALLS calls. Code without a symbol in the vmlinux (a module's) counts
as "?". Under -icount these are the guest nanoseconds the call costs.
A call that sleeps runs other tasks on their own stacks: those are
counted too, until MAX_STEPS.
"""
import collections

import gdb

MAX_STEPS = 20000


def _symbol(pc):
    try:
        return gdb.execute("info symbol 0x%x" % pc, to_string=True).split()[0]
    except gdb.error:
        return "?"


def _reg(name):
    return int(gdb.parse_and_eval(name))


def count_call():
    """Step the call stopped at its entry; (steps, Counter by function)."""
    sp0 = _reg("$sp")
    counts = collections.Counter()
    steps = 0
    while steps < MAX_STEPS:
        name = _symbol(_reg("$pc"))
        counts["?" if name == "No" else name] += 1
        gdb.execute("stepi", to_string=True)
        steps += 1
        if _reg("$sp") > sp0:
            break
    return steps, counts


class CountInsns(gdb.Command):
    """count-insns FUNC [SKIP [CALLS]]: instructions of CALLS calls of FUNC."""

    def __init__(self):
        super().__init__("count-insns", gdb.COMMAND_USER)

    def invoke(self, arg, from_tty):
        argv = gdb.string_to_argv(arg)
        if not 1 <= len(argv) <= 3:
            raise gdb.GdbError("usage: count-insns FUNC [SKIP [CALLS]]")
        func = argv[0]
        skip = int(argv[1]) if len(argv) > 1 else 0
        calls = int(argv[2]) if len(argv) > 2 else 1
        bp = gdb.Breakpoint(func, type=gdb.BP_HARDWARE_BREAKPOINT,
                            internal=True)
        bp.ignore_count = skip
        for _ in range(calls):
            gdb.execute("continue", to_string=True)
            steps, counts = count_call()
            where = ", ".join("%s %d" % kv for kv in counts.most_common())
            cut = " (cut at MAX_STEPS)" if steps >= MAX_STEPS else ""
            print("%s: %d instructions%s: %s" % (func, steps, cut, where))
        bp.delete()


CountInsns()
