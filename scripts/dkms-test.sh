#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make dkms: proves that dkms.conf works, without installing anything for
# the machine's own kernel.  DKMS's trees (--dkmstree, --sourcetree,
# --installtree) all live in build/dkms/.  For each patched kernel given:
# dkms add/build/install, for that kernel, of the numab-minwait-dkms
# package's payload (scripts/deb.sh builds it, dpkg-deb -x extracts it),
# an initramfs made from the DKMS install tree, and a guest boot of that
# kernel whose initramfs loads its own DKMS-built module (rd.driver.pre=;
# vermagic and version checked) and runs the numab-tools payload's
# numab-run and libminwait.so before the tests run.
# Then a kernel without the hooks must be skipped by DKMS: exit status 77
# (BUILD_EXCLUSIVE_CONFIG), which dh-dkms's postinst takes as "skipped",
# so that the package installs on such a kernel, and nothing compiled.
set -euo pipefail

usage() {
	cat <<USAGE
usage: $0 --kernel TREE [--kernel TREE]... --unpatched TREE
       [--tests LIST] [--userspace DIR]

  --kernel TREE     a kernel with its hook series: a kernel/build.sh tree
                    (obj/, modules/) or a built kernel object folder
                    (repeatable; one guest boot each)
  --unpatched TREE  a built kernel without the hooks: DKMS must skip it
  --tests LIST      tests run in each guest (default: "$default_tests")
  --userspace DIR   guest programs (default: build/$KSERIES/userspace, make
                    userspace)
USAGE
}

default_tests="seed_min_wait_test.sh prctl_numab_test epoll_min_wait_test"
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

kernels=() unpatched="" tests=$default_tests
userspace=build/${KSERIES:-$(awk '!/^#/ && NF { print $1; exit }' "./kernel/series")}/userspace
bad_usage() {
	echo "$0: $*" >&2
	usage >&2
	exit 2
}
while (($#)); do
	case "$1" in
	-h|--help) usage; exit 0 ;;
	--kernel|--unpatched|--tests|--userspace)
		(($# >= 2)) || bad_usage "option '$1' needs an argument" ;;
	*) bad_usage "unknown option '$1'" ;;
	esac
	case "$1" in
	--kernel) kernels+=("$2") ;;
	--unpatched) unpatched=$2 ;;
	--tests) tests=$2 ;;
	--userspace) userspace=$2 ;;
	esac
	shift 2
done
((${#kernels[@]})) || bad_usage "--kernel is required"
[[ -n $unpatched ]] || bad_usage "--unpatched is required"

say() {
	printf 'dkms: %s\n' "$*"
}
die() {
	say "$*" >&2
	exit 1
}

command -v dkms >/dev/null || die "dkms missing (apt-get install dkms)"
[[ -d $userspace/bin ]] || die "$userspace/bin missing (make userspace)"

module=$(sed -n 's/^BUILT_MODULE_NAME\[0\]="\(.*\)"$/\1/p' dkms.conf)
dkmsdir=$top/build/dkms
root=$dkmsdir/root
trees=(--sourcetree "$dkmsdir/source" --dkmstree "$dkmsdir/tree"
	--installtree "$root/lib/modules")
# Should DKMS find a sign-file, the key it makes goes here, not into
# /var/lib/dkms (the guest kernels do not check signatures).
export mok_signing_key=$dkmsdir/mok.key mok_certificate=$dkmsdir/mok.pub

# kernel_obj TREE: the object folder (Module.symvers, .config, bzImage),
# as an absolute path (DKMS runs make from its own build folder).
kernel_obj() {
	local obj=$1
	[[ -d $1/obj ]] && obj=$1/obj
	[[ -f $obj/include/config/kernel.release && -f $obj/Module.symvers ]] ||
		die "no built kernel at $1 (kernel/build.sh makes one)"
	realpath "$obj"
}

# Every kernel is checked before DKMS runs at all.
objs=()
for tree in "${kernels[@]}"; do
	objs+=("$(kernel_obj "$tree")")
done
unpatched_obj=$(kernel_obj "$unpatched")

marker=$(mktemp)
trap 'rm -f "$marker"' EXIT

# The DKMS source: the numab-minwait-dkms package's payload, which its
# installation puts in /usr/src/NAME-VERSION.
rm -rf "$dkmsdir"
mkdir -p "$dkmsdir/source" "$dkmsdir/tree" "$dkmsdir/refusal-tree" "$root"
scripts/deb.sh --no-lintian --out "$dkmsdir/deb" >/dev/null
dpkg-deb -x "$dkmsdir"/deb/numab-minwait-dkms_*_all.deb "$dkmsdir/payload"
conf=$(echo "$dkmsdir"/payload/usr/src/*/dkms.conf)
name=$(sed -n 's/^PACKAGE_NAME="\(.*\)"$/\1/p' "$conf")
version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$conf")
[[ $version == "$(scripts/version.sh)" ]] ||
	die "the package's dkms.conf has version '$version'"
mv "$dkmsdir/payload/usr/src/$name-$version" "$dkmsdir/source/"
# The numab-tools package's payload, run in the guests too.
dpkg-deb -x "$dkmsdir"/deb/numab-tools_*.deb "$dkmsdir/tools"
say "source: the payload of $(echo "$dkmsdir"/deb/numab-minwait-dkms_*_all.deb)"
dkms add -m "$name" -v "$version" "${trees[@]}"

failed=0
for i in "${!kernels[@]}"; do
	tree=${kernels[i]} obj=${objs[i]}
	kver=$(cat "$obj/include/config/kernel.release")
	say "--- $kver ($obj)"
	moddir=$root/lib/modules/$kver
	mkdir -p "$moddir"
	if [[ -d $tree/modules/lib/modules/$kver ]]; then
		cp -a "$tree/modules/lib/modules/$kver/." "$moddir/"
	else
		cp "$obj"/modules.{order,builtin,builtin.modinfo} "$moddir/"
	fi
	dkms build -m "$name" -v "$version" -k "$kver" \
		--kernelsourcedir "$obj" "${trees[@]}"
	dkms install -m "$name" -v "$version" -k "$kver" \
		--kernelsourcedir "$obj" "${trees[@]}" --no-depmod
	depmod -b "$root" "$kver"
	ko=$moddir/updates/dkms/$module.ko
	vermagic=$(modinfo -F vermagic "$ko")
	say "$ko: vermagic $vermagic, version $(modinfo -F version "$ko")"
	[[ $vermagic == "$kver "* ]] || die "$ko was not built for $kver"
	[[ $(modinfo -F version "$ko") == "$version" ]] ||
		die "$ko has not the package's version $version"

	img=$dkmsdir/initramfs-$kver.img
	qemu/mkinitramfs --kver "$kver" --stage "$root" \
		--userspace "$userspace" --out "$img"
	# shellcheck disable=SC2016 # expanded in the guest
	guest_check='
		mod=$(modinfo -n numab_minwait)
		magic=$(modinfo -F vermagic numab_minwait)
		echo "guest: $(uname -r) loaded $mod (vermagic $magic)"
		[[ -d /sys/module/numab_minwait && $mod == */updates/dkms/* &&
			$magic == "$(uname -r) "* ]] || exit 1
		/numab-tools/usr/bin/numab-run --version || exit 1
		LIBMINWAIT=$(echo /numab-tools/usr/lib/*/numab-tools/libminwait.so) \
			libminwait_test.sh || exit 1
		exec run_tests.sh "$@"'
	# shellcheck disable=SC2086 # $tests is a list of names
	if qemu/run --kernel "$obj/arch/x86/boot/bzImage" --initramfs "$img" \
		--append rd.driver.pre="$module" --timeout 600 \
		--add "$dkmsdir/tools:/numab-tools" \
		-- bash -c "$guest_check" guest $tests; then
		say "$kver: the guest loaded its DKMS build and passed the tests"
	else
		say "$kver: FAILED in the guest"
		failed=$((failed + 1))
	fi
done
say "built for: $(dkms status -m "$name" "${trees[@]}" | tr '\n' ';')"

# The refusal, in a DKMS tree of its own: the unpatched kernel may have
# the same release as one of the patched ones.
obj=$unpatched_obj
kver=$(cat "$obj/include/config/kernel.release")
say "--- $kver ($obj), without the hooks: DKMS must skip it"
refusal=(--sourcetree "$dkmsdir/source" --dkmstree "$dkmsdir/refusal-tree"
	--installtree "$dkmsdir/refusal-root")
dkms add -m "$name" -v "$version" "${refusal[@]}" >/dev/null
out=$dkmsdir/refusal.out
rc=0
dkms build -m "$name" -v "$version" -k "$kver" --kernelsourcedir "$obj" \
	"${refusal[@]}" >"$out" 2>&1 || rc=$?
sed 's/^/  | /' "$out"
makelog=$dkmsdir/refusal-tree/$name/$version/build/make.log
if ((rc == 77)) && grep -q "BUILD_EXCLUSIVE" "$out" &&
	! grep -qsE '^ +(CC|LD) \[M\]' "$makelog"; then
	say "$kver: skipped (dkms exit 77), nothing compiled"
else
	say "$kver: NOT skipped as it should be (dkms exit $rc, not 77; $makelog)"
	failed=$((failed + 1))
fi
# What a kernel's install hook runs: autoinstall must leave the kernel
# out and succeed (dkms 3.0.10 makes an exit 77 there a failure).
rc=0
dkms autoinstall -k "$kver" --kernelsourcedir "$obj" "${refusal[@]}" \
	>"$out" 2>&1 || rc=$?
sed 's/^/  | /' "$out"
if ((rc == 0)) && [[ ! -d $dkmsdir/refusal-tree/$name/$version/$kver ]]; then
	say "$kver: autoinstall leaves it out and succeeds"
else
	say "$kver: autoinstall exit $rc or a build for it: a kernel install would fail"
	failed=$((failed + 1))
fi

# Nothing for the machine's own kernel: no file of DKMS's system trees
# changed during the run.
system_trees=()
for d in /lib/modules /var/lib/dkms /usr/src; do
	[[ -d $d ]] && system_trees+=("$d")
done
changed=""
if ((${#system_trees[@]})); then
	changed=$(find "${system_trees[@]}" -newer "$marker" -print -quit)
fi
if [[ -n $changed ]]; then
	say "FAILED: $changed changed during the run (outside build/)"
	failed=$((failed + 1))
fi
((failed == 0)) || die "$failed check(s) failed"
say "all checks passed"
