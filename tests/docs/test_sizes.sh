#!/bin/sh
# test_sizes.sh - the entry documents stay short: README.md says what the
# project is, how to install it, its two commands and where to go next (at
# most 150 lines); HACKING.md is the map of the code (at most 200 lines).
# What does not fit belongs in docs/ or the man pages.
. "$(dirname "$0")/../cli/lib.sh"
lines() { wc -l < "$TOP/$1" | tr -d ' '; }
check_eq "README.md has at most 150 lines" "$([ "$(lines README.md)" -le 150 ] && echo yes || echo "no: $(lines README.md)")" yes
check_eq "HACKING.md has at most 200 lines" "$([ "$(lines HACKING.md)" -le 200 ] && echo yes || echo "no: $(lines HACKING.md)")" yes
for link in $(sed -n 's/.*](\(docs\/[^)#]*\)).*/\1/p' "$TOP/README.md" "$TOP/HACKING.md" | sort -u); do
	check_eq "$link, named by README.md or HACKING.md, exists" "$([ -e "$TOP/$link" ] && echo yes || echo no)" yes
done
finish
