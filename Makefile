# SPDX-License-Identifier: GPL-2.0
#
# numab_minwait: the one entry point. `make demo` and `make check` build
# everything they need, installing packages with apt-get when missing.

SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c

BUILD := $(CURDIR)/build
KERNEL := $(BUILD)/kernel
KOBJ := $(KERNEL)/obj
KSRC := $(KERNEL)/src
STAGE := $(BUILD)/stage
USERSPACE := $(BUILD)/userspace
INITRAMFS := $(BUILD)/initramfs.img
KVER = $(shell cat $(KERNEL)/kernel.release)

.PHONY: all deps kernel kernel-stock module stage userspace initramfs check demo lint clean

all: initramfs

deps:
	@scripts/deps.sh

kernel: deps
	@scripts/build-kernel.sh --link $(KERNEL) --patch hooks.patch \
		--fragment qemu/guest.config

# The same kernel without the series: the baseline of benchmarks and DKMS.
kernel-stock: deps
	@scripts/build-kernel.sh --name kernel-stock --link $(BUILD)/kernel-stock \
		--fragment qemu/guest.config

module: kernel
	@$(MAKE) -s -C module KERNEL_DIR=$(KOBJ)

# modules_install of the kernel plus our module, depmod'ed for the guest.
stage: module
	@rm -rf $(STAGE)
	@mkdir -p $(STAGE)/lib/modules
	@cp -a $(KERNEL)/modules/lib/modules/$(KVER) $(STAGE)/lib/modules/
	@install -D -m 0644 module/numab_minwait.ko \
		$(STAGE)/lib/modules/$(KVER)/extra/numab_minwait.ko
	@depmod -b $(STAGE) $(KVER)

userspace: kernel
	@$(MAKE) -s -C userspace OUT=$(USERSPACE)/bin \
		SELFTEST_OUT=$(USERSPACE)/selftests \
		KSELFTEST_DIR=$(KSRC)/tools/testing/selftests all selftests

initramfs: stage userspace
	@qemu/mkinitramfs --kver $(KVER) --stage $(STAGE) \
		--userspace $(USERSPACE) --out $(INITRAMFS)

check: initramfs
	@scripts/check.sh

# The initramfs itself loads the module before the demo starts.
demo: initramfs
	@qemu/run --append rd.driver.pre=numab_minwait -- demo.sh

clean:
	-@$(MAKE) -s -C module KERNEL_DIR=$(KOBJ) clean 2>/dev/null
	rm -rf $(BUILD)

include mk/debug.mk
include mk/bench.mk
include mk/dkms-lint.mk
