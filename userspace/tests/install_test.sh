#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# On the host, in a temporary DESTDIR: make install puts numab-run,
# libminwait.so, the uapi header, the man pages and the two examples in
# place, and nothing else, the runtime wrapper executable, naming the
# paths they were installed at; man finds each page; make uninstall leaves no file behind.  TAP.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

dest=$(mktemp -d)
trap 'rm -rf -- "$dest"' EXIT
expected=(
	usr/bin/numab-run
	usr/include/numab_uapi.h
	usr/lib/libminwait.so
	usr/share/doc/numab-tools/examples/numab-disabled.service
	usr/share/doc/numab-tools/examples/numab-oci-runtime
	usr/share/man/man1/numab-run.1
	usr/share/man/man2/EPOLL_CTL_MIN_WAIT.2const
	usr/share/man/man2/PR_NUMA_BALANCING.2const
	usr/share/man/man7/libminwait.7
)
pages=("1 numab-run" "2const PR_NUMA_BALANCING" "2const EPOLL_CTL_MIN_WAIT"
	"7 libminwait")

# shellcheck source=userspace/tests/tap.sh
. userspace/tests/tap.sh
# files: what is under $dest, relative, sorted.
files() {
	(cd "$dest" && find . \( -type f -o -type l \) -printf '%P\n' | LC_ALL=C sort)
}

echo "TAP version 13"
echo "1..4"
rc=0
make -s install DESTDIR="$dest" PREFIX=/usr 2>&1 | sed 's/^/# /' || rc=$?
[[ "$(files)" == "$(printf '%s\n' "${expected[@]}")" ]] || rc=1
files | sed 's/^/# installed: /'
[[ -x $dest/usr/share/doc/numab-tools/examples/numab-oci-runtime ]] || {
	echo "# numab-oci-runtime is not executable"
	rc=1
}
# The pages and examples name the paths the files were installed at;
# what a user installs himself (his service, the OCI wrapper he copies)
# keeps its /usr/local.
if grep -rnE '/usr/local/(bin/numab\\?-run|lib/libminwait)' "$dest"; then
	echo "# installed with PREFIX=/usr, these name /usr/local"
	rc=1
fi
if ! grep -q 'ExecStart=/usr/bin/numab-run .* /usr/local/bin/my-service' \
	"$dest/usr/share/doc/numab-tools/examples/numab-disabled.service"; then
	echo "# the unit's ExecStart does not name /usr/bin/numab-run and the user's /usr/local service"
	rc=1
fi
tap_result "$rc" "make install DESTDIR=... PREFIX=/usr installs exactly ${#expected[@]} files"

rc=0
"$dest/usr/bin/numab-run" --version | sed 's/^/# /' || rc=$?
tap_result "$rc" "the installed numab-run runs (--version)"

rc=0
for page in "${pages[@]}"; do
	# shellcheck disable=SC2086 # "SECTION NAME"
	path=$(man -M "$dest/usr/share/man" -w $page) || { rc=1; continue; }
	echo "# man ${page}: ${path#"$dest"/}"
	mandoc -Tlint -W warning "$path" | sed 's/^/# /' || rc=1
done
tap_result "$rc" "man finds each installed page, and it renders cleanly"

rc=0
make -s uninstall DESTDIR="$dest" PREFIX=/usr 2>&1 | sed 's/^/# /' || rc=$?
left=$(files)
[[ -z $left ]] || { printf '# left: %s\n' "$left"; rc=1; }
tap_result "$rc" "make uninstall leaves no file behind"
exit "$tap_failed"
