"""_fingerprint.py - the one way this package knows the digests of a file
it read before without reading it again: its stat fingerprint.

A file's fingerprint is (st_dev, st_ino, st_size, st_mtime_ns,
st_ctime_ns) of the file a path names (a symbolic link followed).  A
Store remembers, per path, the fingerprint a file had when it was read and
the digests of the bytes read (sha256, and md5 when asked for); while the
path's fingerprint stays the same, the file is taken to hold those bytes.

Every change of a file's contents sets its ctime to the file system's time
of the change, and nothing can set it back (os.utime sets the mtime and
the atime, and changes the ctime to now); a file replaced by a rename has
another inode, or, when the inode number is reused, a new ctime.  What is
left is a change within the same tick of the file system's clock as the
one the ctime shows: so a fingerprint is remembered only when the file's
ctime was already older than the start of the read by more than
SETTLED_NS (more than the timestamp granularity of the file systems
Linux has, FAT's 2 s being the coarsest), and it stayed the same while
the bytes were read.  A file read sooner after its last change is read
and hashed each time, until it has settled.  (A writer that changes a
file through a shared writable mapping it dirtied before the read, or a
file server whose clock is behind this machine's by more than
SETTLED_NS, can change a file without a new ctime that far from the
read: the same limit as make's and git's.)

The Store's file is written in one rename, with the entries of the file as
it is then and those this process added (the most recent _MAXIMUM): an
entry lost to another process's save at the same time is only read and
hashed again.  It is used only when it is a regular file of this user
that no one else may write (_ownership.py): its digests decide what is
loaded into the process.  It is text: a first line {"format": N}, then a
line per file, the JSON list [path, fingerprint..., sha256, md5 or null];
a lookup parses only the line of its path (a load() asks for a few of the
hundreds of files kept).
"""

import contextlib
import hashlib
import json
import os
import tempfile
import time

from build_custom_op import _ownership

# A file's ctime must be older than the start of the read by more than
# this for its fingerprint to be remembered.
SETTLED_NS = 2_000_000_000
# Bumped when the file's layout changes.
_FORMAT = 2
_HEADER = json.dumps({'format': _FORMAT})
# Entries kept at most (the oldest are dropped first): the file is read by
# every load().
_MAXIMUM = 512


def of(info):
    """The fingerprint of an os.stat_result."""
    return [info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns]


def _md5(data):
    try:
        return hashlib.md5(data, usedforsecurity=False).hexdigest()
    except TypeError:  # Python before 3.9
        return hashlib.md5(data).hexdigest()


class Store:
    """The digests of files by their fingerprints, kept in the file at path
    (None: remembered for this process only)."""

    def __init__(self, path):
        self.path = path
        self.text = None        # the file's lines after the first ('' when none)
        self.entries = {}       # path -> [fingerprint..., sha256, md5 or None], or None:
                                # the entries looked up in text, and those noted since
        self.added = {}         # the entries this process added since it saved

    @property
    def changed(self):
        return bool(self.added)

    def _load(self):
        if self.text is None:
            self.text = self._stored_text()

    def _stored_text(self):
        """The file's text from its second line on ('\n' first), or '' when
        it cannot be used."""
        if self.path is None:
            return ''
        try:
            descriptor = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW |
                                 getattr(os, 'O_CLOEXEC', 0))
        except OSError:
            return ''
        with os.fdopen(descriptor, 'rb') as stream:
            if _ownership.file_problem(self.path, os.fstat(descriptor)) is not None:
                return ''
            try:
                text = stream.read().decode('utf-8')
            except (OSError, UnicodeDecodeError):
                return ''
        header, newline, rest = text.partition('\n')
        if header != _HEADER or not newline:
            return ''
        return '\n' + rest

    @staticmethod
    def _parsed(line):
        """(path, entry) of a line of the file, or None when it is not one."""
        try:
            value = json.loads(line)
        except ValueError:
            return None
        if not isinstance(value, list) or len(value) != 8 or not isinstance(value[0], str):
            return None
        return value[0], value[1:]

    def _entry(self, path):
        """The entry of path: noted or looked up before, else the one of its
        line in the file (a raw newline is never inside a JSON string, so a
        line starts at each one), else None."""
        if path in self.entries:
            return self.entries[path]
        self._load()
        found = None
        start = self.text.find('\n[' + json.dumps(path) + ',')
        if start >= 0:
            end = self.text.find('\n', start + 1)
            parsed = self._parsed(self.text[start + 1:end if end >= 0 else len(self.text)])
            if parsed is not None and parsed[0] == path:
                found = parsed[1]
        self.entries[path] = found
        return found

    def _stored(self):
        """Every entry of the file ({} when it cannot be used)."""
        entries = {}
        for line in self._stored_text().split('\n'):
            parsed = self._parsed(line) if line else None
            if parsed is not None:
                entries[parsed[0]] = parsed[1]
        return entries

    def known(self, path, info):
        """(sha256, md5 or None) remembered for the file at path whose
        os.stat is info, when its fingerprint is the remembered one; else
        None."""
        entry = self._entry(path)
        if entry is None or entry[:5] != of(info):
            return None
        return entry[5], entry[6]

    def note(self, path, before, after, started_ns, data, md5=None):
        """Remembers the digests of data, the bytes of the file at path read
        between the os.fstat results before and after, from started_ns
        (time.time_ns() before the read), when the file had settled (see
        the module's text); returns its sha256."""
        sha256 = hashlib.sha256(data).hexdigest()
        if of(before) == of(after) and before.st_size == len(data) and \
                before.st_ctime_ns < started_ns - SETTLED_NS:
            entry = of(before) + [sha256, md5]
            if self._entry(path) != entry:
                self.entries[path] = self.added[path] = entry
        return sha256

    def read(self, path, md5=False):
        """(bytes, sha256, md5 or None) of the file at path, read now;
        remembered as note() does."""
        started = time.time_ns()
        with open(path, 'rb') as stream:
            before = os.fstat(stream.fileno())
            data = stream.read()
            after = os.fstat(stream.fileno())
        md5_hex = _md5(data) if md5 else None
        return data, self.note(path, before, after, started, data, md5_hex), md5_hex

    def digests(self, path, md5=False):
        """(size, sha256, md5 or None) of the file at path: the remembered
        digests when its fingerprint is unchanged (and the md5 is known, if
        asked for), else those of its bytes, read now.  Raises OSError."""
        info = os.stat(path)
        known = self.known(path, info)
        if known is not None and (known[1] is not None or not md5):
            return (info.st_size,) + known
        data, sha256, md5_hex = self.read(path, md5)
        return len(data), sha256, md5_hex

    def sha256(self, path):
        """The sha256 of the file at path (see digests)."""
        return self.digests(path)[1]

    def save(self):
        """Writes the entries back when this process remembered new ones
        (an error only loses them)."""
        if not self.added or self.path is None:
            self.added = {}
            return
        entries = self._stored()
        for path, entry in self.added.items():
            entries.pop(path, None)
            entries[path] = entry
        if len(entries) > _MAXIMUM:
            entries = dict(list(entries.items())[-_MAXIMUM:])
        directory = os.path.dirname(self.path)
        try:
            descriptor, temporary = tempfile.mkstemp(
                prefix='.' + os.path.basename(self.path) + '.', dir=directory)
        except OSError:
            return
        try:
            with os.fdopen(descriptor, 'w') as stream:
                stream.write(''.join([_HEADER + '\n'] + [
                    json.dumps([path] + entry, separators=(',', ':')) + '\n'
                    for path, entry in entries.items()]))
            os.chmod(temporary, 0o644)
            os.replace(temporary, self.path)
            self.added = {}
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(temporary)


# The process's stores, by the directory that holds each.
_stores = {}
STORE_FILE = 'fingerprints.json'


def store(directory):
    """The process's Store kept in directory/fingerprints.json, or, with
    directory None, remembered by this process only.  The caller has
    checked that no one else can write directory."""
    path = None if directory is None else os.path.join(directory, STORE_FILE)
    found = _stores.get(path)
    if found is None:
        found = _stores[path] = Store(path)
    return found
