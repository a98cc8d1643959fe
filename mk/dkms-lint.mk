# SPDX-License-Identifier: GPL-2.0
#
# make dkms, make lint, make lint-bisect; included by the Makefile, whose
# variables (BUILD, KERNEL, USERSPACE) and targets (deps, kernel,
# userspace) they use.  See docs/dkms-and-lint.md.

# Kernels with hooks.patch that DKMS builds the module for, one guest boot
# each (a scripts/build-kernel.sh tree or a kernel object folder), and a
# kernel without the hooks that DKMS must refuse.
DKMS_KERNELS ?= $(KERNEL) $(BUILD)/kernel-debug
DKMS_UNPATCHED ?= $(BUILD)/kernel-stock

.PHONY: dkms lint lint-quick lint-bisect

dkms: kernel kernel-debug kernel-stock userspace
	@scripts/dkms-test.sh $(addprefix --kernel ,$(DKMS_KERNELS)) \
		--unpatched $(DKMS_UNPATCHED) --userspace $(USERSPACE)

# make lint: the quick checks (what make check and CI run), then a build
# of each commit of the series on its own (~20 min on 2 cores).
lint: lint-quick lint-bisect

lint-quick: deps
	@scripts/lint.sh

lint-bisect: deps
	@scripts/lint-bisect.sh
