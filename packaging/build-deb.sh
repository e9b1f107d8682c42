#!/bin/sh
# build-deb.sh - make deb: build-custom-op_VERSION_ARCH.deb in the repository.
#
# Whatever `make install` installs is packaged: the tree is installed with
# PREFIX=/usr into a staging root (obj/deb/debian/build-custom-op), then
# only what Debian policy asks is added or changed there: programs and
# shared libraries stripped, man pages and the changelog compressed, the
# copyright file, and the control files (shlibs, the ldconfig trigger, the
# scripts that compile and remove the Python package's bytecode).  Depends
# comes from dpkg-shlibdeps over the ELF programs and libraries staged.
#
# Usage: sh packaging/build-deb.sh [MAKE]   (from the repository root,
# after make; needs dpkg-dev and binutils)
set -eu
make=${1:-make}
top=$(pwd)
work=$top/obj/deb
stage=$work/debian/build-custom-op
templates=$top/packaging/deb

for tool in dpkg-deb dpkg-shlibdeps dpkg-gencontrol; do
	command -v "$tool" >/dev/null 2>&1 || {
		echo "build-deb.sh: $tool is missing: apt-get install dpkg-dev" >&2
		exit 1
	}
done

# The version is the program's; the maintainer is $DEBFULLNAME <$DEBEMAIL>,
# else the author of the last commit, as Debian's tools take them.
version=$(./build-custom-op --version | sed -n '1s/^build-custom-op //p')
if [ -n "${DEBFULLNAME:-}" ] && [ -n "${DEBEMAIL:-}" ]; then
	maintainer="$DEBFULLNAME <$DEBEMAIL>"
else
	maintainer=$(git log -1 --format='%an <%ae>' 2>/dev/null || true)
fi
[ -n "$maintainer" ] || {
	echo "build-deb.sh: set DEBFULLNAME and DEBEMAIL to name the package's maintainer" >&2
	exit 1
}
# The date of the last commit (or SOURCE_DATE_EPOCH), so that a rebuild
# of the same tree gives the same package.
if [ -z "${SOURCE_DATE_EPOCH:-}" ]; then
	SOURCE_DATE_EPOCH=$(git log -1 --format=%ct 2>/dev/null || date +%s)
fi
export SOURCE_DATE_EPOCH
date=$(date -u -R -d "@$SOURCE_DATE_EPOCH")
arch=$(dpkg --print-architecture)
deb=build-custom-op_${version}_$arch.deb

rm -rf "$work"
mkdir -p "$stage/DEBIAN"
umask 022
# pkg-config files where a cross-compiling pkg-config finds them too.  No
# torch kit (sdk/torchneuron/torchneuron.mk): its precompiled header is some
# 650 to 800 MB, made for one PyTorch and compiler; load() builds as it goes.
"$make" --no-print-directory install PREFIX=/usr DESTDIR="$stage" TORCH_KIT=no \
	PKGCONFIGDIR="/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)/pkgconfig" >/dev/null

# Debian's own files: the changelog and the copyright, the control file.
doc=$stage/usr/share/doc/build-custom-op
mkdir -p "$doc"
# The years of the commits, for the copyright notice.
first=$(git log --reverse --format=%cd --date=format:%Y 2>/dev/null | head -n 1)
last=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y)
years=${first:-$last}
[ "$years" = "$last" ] || years="$years-$last"
subst() {
	sed -e "s|@VERSION@|$version|g" -e "s|@MAINTAINER@|$maintainer|g" -e "s|@DATE@|$date|g" \
		-e "s|@YEARS@|$years|g" "$1"
}
subst "$templates/changelog.in" >"$work/debian/changelog"
subst "$templates/control" >"$work/debian/control"
gzip -9n <"$work/debian/changelog" >"$doc/changelog.gz"
subst "$templates/copyright" >"$doc/copyright"
mkdir -p "$stage/usr/share/lintian/overrides"
cp "$templates/lintian-overrides" "$stage/usr/share/lintian/overrides/build-custom-op"

# Stripped programs and shared libraries, and static libraries without
# their debugging information, as dh_strip leaves them.  The host SDK's
# runtime keeps its own: a kernel's backtrace in gdb goes through it.
# linked FILE: whether FILE is an ELF program or shared library (not an
# object file or an archive).
linked() {
	case $(readelf -h "$1" 2>/dev/null | sed -n 's/^ *Type: *\([A-Z]*\).*/\1/p') in
	EXEC | DYN) return 0 ;;
	*) return 1 ;;
	esac
}
elves=
for file in $(find "$stage" -type f ! -path "$stage/DEBIAN/*" | LC_ALL=C sort); do
	if linked "$file"; then
		strip --remove-section=.comment --remove-section=.note --strip-unneeded "$file"
		# A shared library is not run: not executable, as policy asks.
		case $file in *.so | *.so.*) chmod 644 "$file" ;; esac
		elves="$elves ${file#"$work"/}"
	fi
done
for archive in "$stage"/usr/lib/*.a; do
	strip --strip-debug --remove-section=.comment --remove-section=.note \
		--enable-deterministic-archives "$archive"
done
# Man pages compressed, as policy asks.
find "$stage/usr/share/man" -type f ! -name '*.gz' -exec gzip -9n {} +

# The shared libraries: shlibs for dependent packages, ldconfig after install.
: >"$stage/DEBIAN/shlibs"
for library in "$stage"/usr/lib/lib*.so.*; do
	soname=$(objdump -p "$library" | sed -n 's/^ *SONAME *//p')
	name=${soname%.so.*}
	echo "$name ${soname##*.so.} build-custom-op (>= $version)" >>"$stage/DEBIAN/shlibs"
done
cp "$templates/triggers" "$stage/DEBIAN/triggers"
install -m 755 "$templates/postinst" "$templates/prerm" "$stage/DEBIAN/"

# Depends from the ELF files' needs; then the control file and md5sums.
cd "$work"
# shellcheck disable=SC2086 # one word per file (the staged names hold no blanks)
dpkg-shlibdeps -Tdebian/substvars $elves
dpkg-gencontrol -pbuild-custom-op -cdebian/control -ldebian/changelog -Tdebian/substvars \
	-Pdebian/build-custom-op
(cd debian/build-custom-op && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' |
	LC_ALL=C sort -z | xargs -0 md5sum >DEBIAN/md5sums)
find debian/build-custom-op -type d -exec chmod 755 {} +
dpkg-deb --root-owner-group -Zxz --build debian/build-custom-op "$top/$deb" >/dev/null
echo "$deb"
