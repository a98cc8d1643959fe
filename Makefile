# SPDX-License-Identifier: GPL-2.0
#
# numab_minwait: the one entry point. `make demo` and `make check` build
# everything they need, installing packages with apt-get when missing.

SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c

# The kernel every target builds, boots and tests: Debian's
# linux-source-$(KSERIES) with its hook series. Each has its own build/
# folder; qemu/run and the scripts find it through KSERIES too.
# The series and their patches are the lines of kernel/series; the
# first is the default.
SERIES_LINES := $(shell awk '!/^\#/ && NF { print $$1 "=" $$2 }' kernel/series)
ALL_SERIES := $(foreach l,$(SERIES_LINES),$(firstword $(subst =, ,$(l))))
KSERIES ?= $(firstword $(ALL_SERIES))
PATCH := $(lastword $(subst =, ,$(filter $(KSERIES)=%,$(SERIES_LINES))))
ifeq ($(PATCH),)
$(error KSERIES=$(KSERIES): no such kernel series ($(ALL_SERIES)))
endif
export KSERIES

BUILD := $(CURDIR)/build/$(KSERIES)
USERSPACE := $(BUILD)/userspace
# The kernel trees and their ccache, shared by every clone on the machine;
# under the user's own cache folder for a build that is not root's.
ifeq ($(shell id -u),0)
NUMAB_CACHE ?= /var/cache/numab-minwait
else
NUMAB_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/numab-minwait
endif
export NUMAB_CACHE

# The guest configuration, the same for both series but for what a
# series-named fragment adds (kernel/build.sh).
FRAGMENTS := kernel/guest.config
DEBUG_FRAGMENTS := $(FRAGMENTS) kernel/debug.config \
	$(wildcard kernel/debug-$(KSERIES).config)
BUILD_KERNEL := kernel/build.sh --series $(KSERIES)

# make install
DESTDIR ?=
PREFIX ?= /usr/local
# libdir: where libminwait.so is found at run time (debian/rules moves it).
libdir ?= $(PREFIX)/lib
BINDIR := $(DESTDIR)$(PREFIX)/bin
LIBDIR := $(DESTDIR)$(libdir)
INCLUDEDIR := $(DESTDIR)$(PREFIX)/include
MANDIR := $(DESTDIR)$(PREFIX)/share/man
MAN_PAGES := $(wildcard docs/man/*.[0-9]*)
EXAMPLESDIR := $(DESTDIR)$(PREFIX)/share/doc/numab-tools/examples
EXAMPLE_UNIT := docs/examples/numab-disabled.service
EXAMPLE_RUNTIME := docs/examples/numab-oci-runtime
VERSION := $(shell scripts/version.sh)

.PHONY: help all deps kernel kernel-debug kernel-stock userspace tools check \
	check-all check-debug demo dkms deb lint lint-quick lint-bisect \
	install uninstall clean distclean

# A bare make explains rather than start a kernel build.
help:
	@echo 'make demo        build everything, boot the guest, show both features'
	@echo 'make check       every test on the 6.1 kernel; last line "N passed, N failed"'
	@echo 'make check-all   make check on 6.1, then on 6.12 (what CI runs)'
	@echo 'make check-debug the suite on a KASAN/lockdep kernel'
	@echo 'make bench       benchmarks under qemu -icount (QUICK=1: shorter)'
	@echo 'make lint        checkpatch, shellcheck, pyflakes, mandoc; lint-quick: no builds'
	@echo 'make install     numab-run, libminwait.so, the header, the man pages'
	@echo 'make dkms        DKMS builds the module for both guest kernels'
	@echo 'make deb         the -dkms and the tools Debian packages, in build/deb'
	@echo 'make all         the guest image (kernel, module, programs, initramfs)'
	@echo 'make clean       remove build/; distclean: the cached kernel trees too'
	@echo 'KSERIES=6.12 picks the other kernel; README.md says more.'

all: initramfs

deps:
	@scripts/deps.sh

kernel: deps
	@$(BUILD_KERNEL) --name kernel --link $(BUILD)/kernel --patch $(PATCH) \
		$(addprefix --fragment ,$(FRAGMENTS))

# KASAN, lockdep, kmemleak, fault injection: make check-debug.
kernel-debug: deps
	@$(BUILD_KERNEL) --name kernel-debug --link $(BUILD)/kernel-debug \
		--patch $(PATCH) $(addprefix --fragment ,$(DEBUG_FRAGMENTS))

# The same kernel without the series: the baseline of benchmarks and DKMS.
kernel-stock: deps
	@$(BUILD_KERNEL) --name kernel-stock --link $(BUILD)/kernel-stock \
		$(addprefix --fragment ,$(FRAGMENTS))

# The guest image of a kernel: the module built for it out of the source
# tree (build/module*), modules_install plus the module depmod'ed (stage),
# the initramfs. $(1): the kernel's name; $(2): "" or "-debug".
define guest_image
.PHONY: module$(2) stage$(2) initramfs$(2)

module$(2): $(1)
	@mkdir -p $(BUILD)/module$(2)
	@rsync -a --delete --exclude='*.mod.c' --include='*.[ch]' \
		--include=Kbuild --include=Makefile --exclude='*' \
		module/ $(BUILD)/module$(2)/
	@$(MAKE) -s -C $(BUILD)/module$(2) KERNEL_DIR=$(BUILD)/$(1)/obj \
		NUMAB_VERSION=$(VERSION)

stage$(2): module$(2)
	@rm -rf $(BUILD)/stage$(2)
	@mkdir -p $(BUILD)/stage$(2)/lib/modules
	@cp -a $(BUILD)/$(1)/modules/lib/modules/$$(KVER$(2)) \
		$(BUILD)/stage$(2)/lib/modules/
	@install -D -m 0644 $(BUILD)/module$(2)/numab_minwait.ko \
		$(BUILD)/stage$(2)/lib/modules/$$(KVER$(2))/extra/numab_minwait.ko
	@depmod -b $(BUILD)/stage$(2) $$(KVER$(2))

initramfs$(2): stage$(2) userspace
	@qemu/mkinitramfs --kver $$(KVER$(2)) --stage $(BUILD)/stage$(2) \
		--userspace $(USERSPACE) --out $(BUILD)/initramfs$(2).img

KVER$(2) = $$(shell cat $(BUILD)/$(1)/kernel.release)
endef
$(eval $(call guest_image,kernel,))
$(eval $(call guest_image,kernel-debug,-debug))

userspace: kernel
	@$(MAKE) -s -C userspace OUT=$(USERSPACE)/bin \
		SELFTEST_OUT=$(USERSPACE)/selftests \
		KSELFTEST_DIR=$(BUILD)/kernel/src/tools/testing/selftests \
		all selftests

# What make install installs; needs no kernel.
tools:
	@$(MAKE) -s -C userspace OUT=$(USERSPACE)/bin tools

# Its lint step checks both series' patches, each with its own kernel's
# checkpatch.pl: both sources, whatever KSERIES is.
check: initramfs
	@scripts/deps.sh --lint
	@userspace/tests/check.sh

# make check on each kernel series in turn (what CI runs).
check-all:
	@userspace/tests/check-all.sh $(ALL_SERIES)

check-debug: initramfs-debug
	@userspace/tests/check.sh --debug

# The initramfs itself loads the module before the demo starts.
demo: initramfs
	@qemu/run --append rd.driver.pre=numab_minwait -- demo.sh

# DKMS builds and installs the one module source for the patched guest
# kernel of each series (one guest boot each) and must refuse the stock
# kernel of $(KSERIES); see docs/dkms-and-lint.md. Any built kernel object
# folders can be given instead.
DKMS_SERIES := $(ALL_SERIES)
DKMS_KERNELS ?= $(foreach s,$(DKMS_SERIES),$(CURDIR)/build/$(s)/kernel)
DKMS_UNPATCHED ?= $(BUILD)/kernel-stock
dkms: kernel-stock userspace
	@for series in $(filter-out $(KSERIES),$(DKMS_SERIES)); do \
		$(MAKE) --no-print-directory KSERIES=$$series kernel; \
	done
	@scripts/dkms-test.sh $(addprefix --kernel ,$(DKMS_KERNELS)) \
		--unpatched $(DKMS_UNPATCHED) --userspace $(USERSPACE)

# make lint: the quick checks (what make check and CI run), then a build
# of each commit of both series on its own (~20 min each on 2 cores);
# make lint-bisect bisects the series of $(KSERIES).
lint: lint-quick
	@for series in $(ALL_SERIES); do \
		$(MAKE) --no-print-directory KSERIES=$$series lint-bisect; \
	done

# checkpatch.pl of each series' own kernel: both sources.
lint-quick:
	@scripts/deps.sh --lint
	@scripts/lint.sh

lint-bisect: deps
	@$(BUILD_KERNEL) --bisect --patch $(PATCH) \
		$(addprefix --fragment ,$(FRAGMENTS))

# The man pages carry the version in their footer. They and the examples
# are written for the default PREFIX; their copies name where the files
# are installed.
INSTALL_PATHS := sed -e 's/@VERSION@/$(VERSION)/' \
	-e 's|/usr/local/bin/numab\(\\\?\)-run|$(PREFIX)/bin/numab\1-run|g' \
	-e 's|/usr/local/lib/libminwait\.so|$(libdir)/libminwait.so|g'
install: tools
	install -D -m 0755 $(USERSPACE)/bin/numab-run $(BINDIR)/numab-run
	install -D -m 0644 $(USERSPACE)/bin/libminwait.so $(LIBDIR)/libminwait.so
	install -D -m 0644 userspace/include/numab_uapi.h \
		$(INCLUDEDIR)/numab_uapi.h
	for page in $(MAN_PAGES); do \
		section=$${page##*.}; \
		install -d $(MANDIR)/man$${section:0:1}; \
		$(INSTALL_PATHS) $$page \
			> $(MANDIR)/man$${section:0:1}/$${page##*/}; \
	done
	install -d $(EXAMPLESDIR)
	$(INSTALL_PATHS) $(EXAMPLE_UNIT) > $(EXAMPLESDIR)/$(notdir $(EXAMPLE_UNIT))
	$(INSTALL_PATHS) $(EXAMPLE_RUNTIME) \
		> $(EXAMPLESDIR)/$(notdir $(EXAMPLE_RUNTIME))
	chmod 0755 $(EXAMPLESDIR)/$(notdir $(EXAMPLE_RUNTIME))

uninstall:
	rm -f $(BINDIR)/numab-run $(LIBDIR)/libminwait.so \
		$(INCLUDEDIR)/numab_uapi.h
	for page in $(MAN_PAGES); do \
		section=$${page##*.}; \
		rm -f $(MANDIR)/man$${section:0:1}/$${page##*/}; \
	done
	rm -f $(addprefix $(EXAMPLESDIR)/,$(notdir $(EXAMPLE_UNIT) $(EXAMPLE_RUNTIME)))

# The two Debian packages, into build/deb/ (never installed here).
deb:
	@scripts/deb.sh

clean:
	rm -rf $(CURDIR)/build

# Also the kernel trees and the ccache that kernel/build.sh made in
# $(NUMAB_CACHE) (shared by every clone on this machine).
distclean: clean
	@kernel/build.sh --purge

include userspace/bench/bench.mk
