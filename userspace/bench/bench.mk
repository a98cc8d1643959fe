# SPDX-License-Identifier: GPL-2.0
#
# `make bench [QUICK=1] [SUITES=redis,...] [ROUNDS=N]`: the benchmarks of
# docs/benchmarks.md (bench.sh's --quick, --suites, --rounds). Not part
# of `make check`. Included from the Makefile; uses its BUILD, BUILD_KERNEL
# and FRAGMENTS and the patched kernel's initramfs.
#
#   bench-programs  static bench programs and the guest driver in
#                   build/SERIES/bench/bin (qemu/run --add ...:/opt/bench)
#   bench           builds the stock kernel too, boots each kernel in turn
#                   under qemu/run --icount, writes
#                   build/SERIES/bench/results.md and *.png from its raw/
#   bench-report    docs/benchmarks.md and docs/bench-*.png again from the
#                   committed raw results in docs/bench-raw/ (6.1), and
#                   docs/bench-6.12/ from docs/bench-raw-6.12/

BENCH_SRC := $(CURDIR)/userspace/bench
BENCH_BIN := $(BUILD)/bench/bin
BENCH_PROGS := bench_unused bench_rr bench_numa bench_memc bench_epcall \
	bench_procstat
BENCH_CFLAGS := -O2 -g -Wall -Wextra -Werror -I$(CURDIR)/userspace/include \
	-static -pthread

.PHONY: bench bench-programs bench-report

bench-programs: $(addprefix $(BENCH_BIN)/,$(BENCH_PROGS) bench-guest.sh)

$(BENCH_BIN):
	@mkdir -p $@

$(addprefix $(BENCH_BIN)/,$(BENCH_PROGS)): $(BENCH_BIN)/%: $(BENCH_SRC)/%.c \
		$(BENCH_SRC)/bench_util.h userspace/include/numab_uapi.h \
		userspace/include/proc_field.h \
		| $(BENCH_BIN)
	$(CC) $(BENCH_CFLAGS) -o $@ $< -lm

$(BENCH_BIN)/bench-guest.sh: $(BENCH_SRC)/bench-guest.sh | $(BENCH_BIN)
	@install -m 0755 $< $@

bench: initramfs kernel-stock bench-programs
	@userspace/bench/bench.sh --stock $(BUILD)/kernel-stock \
		$(if $(filter 1,$(QUICK)),--quick) \
		$(if $(SUITES),--suites $(SUITES)) $(if $(ROUNDS),--rounds $(ROUNDS))

bench-report:
	@userspace/bench/report.sh --raw docs/bench-raw --md docs/benchmarks.md \
		--plots docs
	@userspace/bench/report.sh --raw docs/bench-raw-6.12 \
		--md docs/bench-6.12/benchmarks.md --plots docs/bench-6.12
