#!/usr/bin/env bash
# shellcheck disable=SC2154 # initdir, moddir: set by dracut
# dracut module "numab": turns a dracut initramfs into a one-shot test
# runner for the numab guest (see qemu/README.md).
#
# dracut *sources* this file and calls check/depends/install, so it must not
# change the caller's shell options: no top-level `set -euo pipefail` here
# (dracut itself is not written for them).  The scripts that run in the guest
# (guest-init.sh) do use them.
#
# Inputs, from the environment (exported by qemu/mkinitramfs):
#   NUMAB_USERSPACE  folder with bin/ (guest programs, *.so libraries) and,
#                    optionally, selftests/ and kselftest/ (the runner of
#                    run_tests.sh); any may be missing.

# Only when asked for by name (-m/--add): never part of a host's own image.
check() {
    return 255
}

depends() {
    # dracut's /init and its hooks (qemu/run --dracut-init); the runner
    # itself needs none of it.
    echo base
    return 0
}

# numab_is_elf FILE: true when FILE starts with the ELF magic.
numab_is_elf() {
    local magic
    magic=$(head -c 4 -- "$1" 2> /dev/null | tr -d '\0') || return 1
    [[ $magic == $'\x7f'ELF ]]
}

# numab_inst_file SRC DST: install SRC at DST in the image; ELF files with
# their shared libraries, anything else as is (mode kept).
numab_inst_file() {
    local src=$1 dst=$2
    if numab_is_elf "$src"; then
        inst_binary "$src" "$dst" && return 0
        dwarning "numab: installing $src without its libraries"
    fi
    inst_simple "$src" "$dst"
}

# numab_inst_tree SRC_DIR DST_DIR [LIB_DIR]: install every file under
# SRC_DIR at the same relative path under DST_DIR; with LIB_DIR, shared
# libraries (*.so, *.so.N) go there instead.
numab_inst_tree() {
    local src=$1 dst=$2 libdst=${3:-} f rel
    [[ -d $src ]] || return 0
    while IFS= read -r -d '' f; do
        rel=${f#"$src"/}
        if [[ -n $libdst && ${f##*/} =~ \.so(\.[0-9.]+)?$ ]]; then
            numab_inst_file "$f" "$libdst/${f##*/}" || return 1
        else
            numab_inst_file "$f" "$dst/$rel" || return 1
        fi
    done < <(find "$src" \( -type f -o -type l \) -print0 | sort -z)
}

install() {
    # Tools every guest command may rely on.
    inst_multiple bash env cat grep sed sleep mount umount dmesg true false \
        timeout ls echo mkdir rmdir rm cp mv ln cut tr tee head tail wc sort \
        uniq date uname id stat chmod readlink basename dirname touch sync \
        seq nproc printf test mktemp \
        modprobe rmmod lsmod insmod modinfo \
        || return 1
    # Nice to have; whatever the host lacks is skipped.
    inst_multiple -o kill ps pgrep pkill taskset chrt nice nohup setsid \
        awk xargs find sysctl numactl free od hexdump cmp diff md5sum \
        mountpoint stdbuf tty
    # stdbuf is nothing without its preload library (6.12's kselftest
    # runner runs every test under stdbuf --output=L when it is there).
    if [[ -e $initdir/usr/bin/stdbuf || -e $initdir/bin/stdbuf ]]; then
        inst /usr/libexec/coreutils/libstdbuf.so || return 1
    fi
    # How the guest powers off: `busybox reboot -f` (a plain reboot(2)),
    # else the host's reboot -f (systemctl or sysvinit: also reboot(2)).
    inst_multiple -o busybox || :
    [[ -e $initdir/usr/bin/busybox || -e $initdir/bin/busybox ]] \
        || inst_multiple reboot || return 1

    # The runner: qemu/run boots it directly (rdinit=/usr/lib/numab/guest-init)
    # or, with --dracut-init, dracut's /init reaches it through this hook.
    inst_script "$moddir/guest-init.sh" /usr/lib/numab/guest-init || return 1
    # Last cmdline hook: runs after every other module's command-line parsing
    # (e.g. rd.driver.pre from kernel-modules, if added) and never returns.
    inst_hook cmdline 99 "$moddir/numab-hook.sh"

    mkdir -p "$initdir/opt/numab/bin" "$initdir/opt/numab/lib" \
        "$initdir/etc/numab" "$initdir/root"
    # base writes /etc/passwd; give group 0 a name too.
    grep -qs '^root:' "$initdir/etc/group" \
        || echo 'root:x:0:' >> "$initdir/etc/group"

    if [[ -n ${NUMAB_USERSPACE:-} ]]; then
        # dracut-install skips libraries it cannot find (libminwait.so for
        # programs linked against it): those come from /opt/numab/lib, which
        # the runner puts on LD_LIBRARY_PATH.
        numab_inst_tree "$NUMAB_USERSPACE/bin" /opt/numab/bin /opt/numab/lib \
            || return 1
        numab_inst_tree "$NUMAB_USERSPACE/selftests" /opt/numab/selftests \
            || return 1
        numab_inst_tree "$NUMAB_USERSPACE/kselftest" /opt/numab/kselftest \
            || return 1
    fi
    return 0
}
