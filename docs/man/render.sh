#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The man pages of docs/man/ are the source; docs/PAGE.md is each one
# rendered by mandoc, for reading on the web.  With --check, only tell
# (exit 1) whether a rendered view differs from its page: make lint-quick.
#
#   docs/man/render.sh [--check]
set -euo pipefail

check=0
case "${1:-}" in
"") ;;
--check) check=1 ;;
*) echo "$0: unknown option '$1'" >&2; exit 2 ;;
esac

man=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# The footer's version, as make install writes it.
version=$("$man/../../scripts/version.sh")
stale=0
for page in "$man"/*.[0-9]*; do
	name=${page##*/}
	view=$man/../$name.md
	rendered=$({
		echo "<!-- SPDX-License-Identifier: GPL-2.0 -->"
		echo "<!-- docs/man/render.sh renders docs/man/$name: edit that. -->"
		echo "# $name"
		echo
		echo '```text'
		sed "s/@VERSION@/$version/" "$page" |
			mandoc -Tutf8 -Owidth=78 | sed 's/.\x08//g'
		echo '```'
	})
	if ((check)); then
		if [[ $rendered != "$(cat "$view" 2>/dev/null)" ]]; then
			echo "docs/$name.md is not docs/man/$name rendered (run $0)"
			stale=1
		fi
	else
		printf '%s\n' "$rendered" > "$view"
	fi
done
((stale == 0))
