#!/usr/bin/env bash
# PID 1 of the numab guest: either the kernel's rdinit= (qemu/run's default,
# which skips dracut's /init and saves seconds under TCG), or exec'd by the
# cmdline hook once dracut's /init has mounted /proc, /sys, /dev and /run.
#
# Runs /etc/numab/cmd (written by qemu/run into a cpio appended to the
# initramfs) as root, prints "NUMAB-EXIT-STATUS: <rc>" on the console and
# powers the guest off with reboot -f (QEMU runs with -no-reboot, so it
# exits).  Kernel command line:
#   numab.preload=1     modprobe numab_minwait before the command
#   rd.driver.pre=a,b   modprobe a and b before the command
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
    [[ -e /dev/fd ]] || ln -s /proc/self/fd /dev/fd
    if [[ ! -t 1 ]]; then
        exec 0<> /dev/console 1<> /dev/console 2<> /dev/console
    fi
}

# Modules to load before the command: numab.preload=1 means numab_minwait;
# rd.driver.pre=a,b as in dracut (dracut's kernel-modules module, when in the
# image and booted through dracut's /init, will have loaded them already).
preload_modules() {
    local word mod
    local -a words mods=() more
    read -r -a words < /proc/cmdline || true
    for word in "${words[@]}"; do
        case $word in
            numab.preload=1) mods+=(numab_minwait) ;;
            rd.driver.pre=?*)
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

main() {
    local rc=0
    setup_system
    cd /
    if ! preload_modules; then
        say "not running the command"
        rc=125
    elif [[ ! -f $CMD_FILE ]]; then
        say "no $CMD_FILE (boot with qemu/run); starting a shell"
        bash -i < /dev/console || rc=$?
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
