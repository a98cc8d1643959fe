#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# PID 1 of the numab guest, /usr/lib/numab/guest-init: either the kernel's
# rdinit= (qemu/run's default, which skips dracut's /init and saves seconds
# under TCG), or exec'd as "guest-init dracut" by the cmdline hook once
# dracut's /init has mounted /proc, /sys, /dev and /run and loaded the
# modules of rd.driver.pre.
#
# Runs /etc/numab/cmd (written by qemu/run into a cpio appended to the
# initramfs) as root, or a shell on the console when there is none, prints
# "NUMAB-EXIT-STATUS: <rc>" on the console and powers the guest off with
# reboot -f (QEMU runs with -no-reboot, so it exits).  Kernel command line:
#   numab.preload=1     modprobe numab_minwait before the command
#   rd.driver.pre=a,b   modprobe a and b before the command (as rdinit=;
#                       dracut's /init has done it otherwise)
# If a modprobe fails the command is not run and the status is 125.
set -euo pipefail

readonly CMD_FILE=/etc/numab/cmd
readonly START_MARK='NUMAB-CMD-START'
readonly EXIT_MARK='NUMAB-EXIT-STATUS:'
readonly GUEST_PATH=/opt/numab/bin:/usr/sbin:/usr/bin:/sbin:/bin

export PATH=$GUEST_PATH

say() {
    printf 'numab: %s\n' "$*" >&2
}

# Never return: PID 1 exiting would panic the kernel.
power_off() {
    trap - EXIT
    sync || true
    if command -v busybox > /dev/null 2>&1; then
        busybox reboot -f || true
    fi
    reboot -f || true
    say "reboot -f failed; exiting PID 1 instead (the kernel will panic)"
    exit 1
}
trap power_off EXIT

# mount_fs TYPE DIR [OPTIONS]: mount unless something already is at DIR.
mount_fs() {
    local type=$1 dir=$2 opts=${3:-nosuid,nodev,noexec}
    if [[ -r /proc/mounts ]] && grep -q " $dir " /proc/mounts; then
        return 0
    fi
    mkdir -p "$dir"
    mount -t "$type" -o "$opts" "$type" "$dir" \
        || say "could not mount $type at $dir"
}

# What dracut's /init does before its hooks, for when this runs as the
# kernel's rdinit=; after dracut's /init only debugfs is new.
setup_system() {
    mount_fs proc /proc
    mount_fs sysfs /sys
    mount_fs devtmpfs /dev mode=0755,nosuid
    mount_fs devpts /dev/pts gid=5,mode=620,noexec,nosuid
    mount_fs tmpfs /dev/shm mode=1777,nosuid,nodev
    mount_fs tmpfs /run mode=0755,nosuid,nodev
    mount_fs debugfs /sys/kernel/debug
    # The links dracut's /init (and udev) make; kselftest's runner.sh
    # writes to /dev/stdout.
    [[ -e /dev/fd ]] || ln -s /proc/self/fd /dev/fd
    local i fd=0
    for i in stdin stdout stderr; do
        [[ -e /dev/$i ]] || ln -s "/proc/self/fd/$fd" "/dev/$i"
        fd=$((fd + 1))
    done
    if [[ ! -t 1 ]]; then
        exec 0<> /dev/console 1<> /dev/console 2<> /dev/console
    fi
}

# Modules to load before the command: numab.preload=1 means numab_minwait;
# rd.driver.pre=a,b as in dracut, unless dracut's /init ($1 == dracut) has
# loaded those already.
preload_modules() {
    local from=$1 word mod
    local -a words mods=() more
    read -r -a words < /proc/cmdline || true
    for word in "${words[@]}"; do
        case $word in
            numab.preload=1) mods+=(numab_minwait) ;;
            rd.driver.pre=?*)
                [[ $from != dracut ]] || continue
                IFS=, read -r -a more <<< "${word#*=}"
                mods+=("${more[@]}")
                ;;
        esac
    done
    for mod in "${mods[@]}"; do
        modprobe "$mod" || {
            say "modprobe $mod failed"
            return 1
        }
    done
    return 0
}

run_command() {
    # A clean environment, as after `sudo -i`, plus the project's paths.
    env -i HOME=/root USER=root LOGNAME=root SHELL=/bin/bash \
        TERM="${TERM:-linux}" PATH="$GUEST_PATH" \
        LD_LIBRARY_PATH=/opt/numab/lib \
        /bin/bash "$CMD_FILE" < /dev/null
}

# A shell on the serial console, its controlling terminal when setsid can
# make it so (job control, ^C).
run_shell() {
    local tty=/dev/ttyS0
    [[ -c $tty ]] || tty=/dev/console
    if command -v setsid > /dev/null; then
        setsid -c -w bash -i <> "$tty" >&0 2>&1
    else
        bash -i <> "$tty" >&0 2>&1
    fi
}

main() {
    local rc=0
    setup_system
    cd /
    if ! preload_modules "${1:-}"; then
        say "not running the command"
        rc=125
    elif [[ ! -f $CMD_FILE ]]; then
        printf '%s\n' "$START_MARK"
        say "no command (qemu/run without one): a shell; exit powers off"
        run_shell || rc=$?
    else
        printf '%s\n' "$START_MARK"
        run_command || rc=$?
    fi
    # On a line of its own even if the command's output did not end in one.
    printf '\n%s %d\n' "$EXIT_MARK" "$rc"
}

# Errors in main must not kill PID 1 before the status is out (set -e does
# not apply inside a function called from ||).
main "$@" || true
power_off
