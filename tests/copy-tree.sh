#!/bin/sh
# copy-tree.sh DIR - makes DIR a copy of the source tree (the files git
# tracks, and the untracked ones it does not ignore), for a build of its
# own: make check-asan and make check-valgrind build and test there, so
# the tree's own build is neither cleaned nor mixed with theirs.  A file
# whose copy is already the same is left alone, so make rebuilds in DIR only
# what changed since the last copy; a file gone from the tree goes from DIR.
set -eu
dir=$1
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
if ! files=$(git ls-files --cached --others --exclude-standard 2>/dev/null); then
	echo "copy-tree.sh: $top is not a git checkout; check-asan and check-valgrind copy the files git knows" >&2
	exit 1
fi
mkdir -p "$dir"
list=$dir/.copied-files
printf '%s\n' "$files" | sort >"$list.new"
printf '%s\n' "$files" | while IFS= read -r file; do
	[ -f "$file" ] || continue
	if ! cmp -s "$file" "$dir/$file"; then
		mkdir -p "$dir/$(dirname "$file")"
		cp -p "$file" "$dir/$file"
	fi
done
if [ -f "$list" ]; then
	comm -23 "$list" "$list.new" | while IFS= read -r gone; do
		rm -f "$dir/$gone"
	done
fi
mv "$list.new" "$list"
