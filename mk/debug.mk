# SPDX-License-Identifier: GPL-2.0
#
# The debug guest kernel (KASAN, lockdep, kmemleak, fault injection; see
# qemu/debug.config) and `make check-debug`, the test suite on it.
# Included by the Makefile, after its variables.

DEBUG_KERNEL := $(BUILD)/kernel-debug
DEBUG_KOBJ := $(DEBUG_KERNEL)/obj
DEBUG_FRAGMENT := $(BUILD)/kernel-debug.config
DEBUG_MODULE := $(BUILD)/module-debug
DEBUG_STAGE := $(BUILD)/stage-debug
DEBUG_INITRAMFS := $(BUILD)/initramfs-debug.img
DEBUG_KVER = $(shell cat $(DEBUG_KERNEL)/kernel.release)

.PHONY: kernel-debug module-debug stage-debug initramfs-debug check-debug

# guest.config with the symbols that debug.config sets taken out, then
# debug.config: build-kernel.sh insists on every line it is given.
$(DEBUG_FRAGMENT): qemu/guest.config qemu/debug.config
	@mkdir -p $(BUILD)
	@scripts/merge-fragments.sh qemu/guest.config qemu/debug.config > $@

kernel-debug: deps $(DEBUG_FRAGMENT)
	@scripts/build-kernel.sh --name kernel-debug --link $(DEBUG_KERNEL) \
		--patch hooks.patch --fragment $(DEBUG_FRAGMENT)

# module/ holds the objects of the main build: build a copy.
module-debug: kernel-debug
	@mkdir -p $(DEBUG_MODULE)
	@rsync -a --delete --exclude='*.mod.c' --include='*.[ch]' \
		--include=Kbuild --include=Makefile --exclude='*' \
		module/ $(DEBUG_MODULE)/
	@$(MAKE) -s -C $(DEBUG_MODULE) KERNEL_DIR=$(DEBUG_KOBJ)

stage-debug: module-debug
	@rm -rf $(DEBUG_STAGE)
	@mkdir -p $(DEBUG_STAGE)/lib/modules
	@cp -a $(DEBUG_KERNEL)/modules/lib/modules/$(DEBUG_KVER) \
		$(DEBUG_STAGE)/lib/modules/
	@install -D -m 0644 $(DEBUG_MODULE)/numab_minwait.ko \
		$(DEBUG_STAGE)/lib/modules/$(DEBUG_KVER)/extra/numab_minwait.ko
	@depmod -b $(DEBUG_STAGE) $(DEBUG_KVER)

initramfs-debug: stage-debug userspace
	@qemu/mkinitramfs --kver $(DEBUG_KVER) --stage $(DEBUG_STAGE) \
		--userspace $(USERSPACE) --out $(DEBUG_INITRAMFS)

check-debug: initramfs-debug
	@scripts/check-debug.sh --kernel $(DEBUG_KOBJ)/arch/x86/boot/bzImage \
		--initramfs $(DEBUG_INITRAMFS)
