#!/bin/sh
# lint.sh DEB - lintian over the package of make deb, every tag shown
# (pedantic and informational ones too); an error or a warning fails.
set -u
if ! command -v lintian >/dev/null 2>&1; then
	echo "lint.sh: lintian is not installed (Debian: apt-get install lintian)" >&2
	exit 1
fi
report=$(lintian --pedantic --display-info "$@" 2>&1)
status=$?
printf '%s\n' "$report"
if printf '%s\n' "$report" | grep -q '^[EW]: '; then
	echo "lint.sh: lintian reports errors or warnings" >&2
	exit 1
fi
[ "$status" = 0 ] || { echo "lint.sh: lintian failed ($status)" >&2; exit 1; }
echo "lint.sh: no errors and no warnings"
