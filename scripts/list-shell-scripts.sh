#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The tracked shell scripts: *.sh and files with a bash shebang.
set -euo pipefail
cd "$(dirname "$0")/.."
git ls-files | while IFS= read -r f; do
	[[ -f "$f" ]] || continue
	if [[ "$f" == *.sh ]] || head -n 1 "$f" | grep -qE '^#!.*\b(ba)?sh\b'; then
		echo "$f"
	fi
done
