#!/bin/sh
# test_version.sh - the version has one owner, BCO_VERSION in
# include/buildcustomop.h; every other place that states it agrees.
. "$(dirname "$0")/lib.sh"
version=$(sed -n 's/^#define BCO_VERSION "\(.*\)"$/\1/p' "$TOP/include/buildcustomop.h")
check_eq "buildcustomop.h defines a version" "$(printf '%s\n' "$version" | grep -c '^[0-9][0-9.]*$')" 1
check_eq "runcustomop.h's RCO_VERSION is it" \
	"$(sed -n 's/^#define RCO_VERSION "\(.*\)"$/\1/p' "$TOP/include/runcustomop.h")" "$version"
for page in build-custom-op.1 run-custom-op.1 runcustomop.3; do
	[ -f "$TOP/man/$page" ] || continue
	check_eq "man/$page names it" \
		"$(sed -n '1s/^\.TH .* "build-custom-op \([^"]*\)".*/\1/p' "$TOP/man/$page")" "$version"
done
check_eq "man/runcustomop.3's Version section states it" \
	"$(sed -n '/^\.SS Version$/,/^\.S[HS]/s/^"\([^"]*\)"\.$/\1/p' "$TOP/man/runcustomop.3")" "$version"
check_eq "build-custom-op --version says it" "$("$BCO" --version | head -n 1)" "build-custom-op $version"
check_eq "run-custom-op --version says it" "$("$TOP/run-custom-op" --version)" "run-custom-op $version"
check_eq "make's VERSION is it" "$(printf 'include Makefile\nversion-of-make:\n\t@echo $(VERSION)\n' |
	make -s --no-print-directory -C "$TOP" -f - version-of-make 2>/dev/null)" "$version"
finish
