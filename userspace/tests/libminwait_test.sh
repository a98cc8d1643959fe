#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# libminwait_test under the shim it tests, with a min-wait to apply.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

# The guest image has shared objects in ../lib; a build folder beside us.
# LIBMINWAIT: another copy to test, such as the numab-tools package's.
lib=${LIBMINWAIT:-../lib/libminwait.so}
[[ -e $lib ]] || lib=./libminwait.so
MINWAIT_US=1234 LD_PRELOAD=$lib exec ./libminwait_test
