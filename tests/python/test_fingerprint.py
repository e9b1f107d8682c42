"""test_fingerprint.py - the digests a _fingerprint.Store remembers by a
file's stat fingerprint: used while the file is unchanged (not read
again), never for a file changed in any way (contents changed with the
size and mtime put back by os.utime, replaced by a rename, cut), never
remembered for a file changed less than SETTLED_NS before it was read,
and kept across processes only in a file of this user that no one else
can write, on whatever file system it is."""

import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tap  # noqa: E402

from build_custom_op import _fingerprint  # noqa: E402


def sha256(data):
    return hashlib.sha256(data).hexdigest()


class Counting(_fingerprint.Store):
    """A Store that counts the files it reads."""

    def __init__(self, path):
        super().__init__(path)
        self.reads = []

    def read(self, path, md5=False):
        self.reads.append(path)
        return super().read(path, md5)


class StoreTest(unittest.TestCase):
    def setUp(self):
        self.work = tempfile.mkdtemp(prefix='bco-fingerprint-test.')
        self.addCleanup(shutil.rmtree, self.work, ignore_errors=True)
        # A file counts as settled once its ctime is older than the read:
        # these tests wait a few ticks of the clock instead of 2 s.
        self.settled = _fingerprint.SETTLED_NS
        _fingerprint.SETTLED_NS = 0
        self.addCleanup(setattr, _fingerprint, 'SETTLED_NS', self.settled)
        self.path = os.path.join(self.work, 'library.so')

    def write(self, data, path=None):
        with open(path or self.path, 'wb') as stream:
            stream.write(data)

    def settle(self):
        """Lets the clock pass the last change's tick."""
        time.sleep(0.05)

    def store(self, directory=None):
        return Counting(os.path.join(directory or self.work, 'fingerprints.json'))

    def test_an_unchanged_file_is_not_read_again(self):
        self.write(b'first contents')
        self.settle()
        store = self.store()
        self.assertEqual(store.digests(self.path), (14, sha256(b'first contents'), None))
        self.assertEqual(store.digests(self.path), (14, sha256(b'first contents'), None))
        self.assertEqual(store.reads, [self.path])
        store.save()
        again = self.store()
        self.assertEqual(again.digests(self.path, md5=False)[1], sha256(b'first contents'))
        self.assertEqual(again.reads, [])
        # An md5 not remembered yet is computed (once), then remembered too.
        md5 = hashlib.md5(b'first contents').hexdigest()
        self.assertEqual(again.digests(self.path, md5=True)[2], md5)
        self.assertEqual(again.digests(self.path, md5=True)[2], md5)
        self.assertEqual(again.reads, [self.path])

    def test_contents_changed_with_size_and_mtime_put_back(self):
        self.write(b'first contents')
        self.settle()
        store = self.store()
        self.assertEqual(store.sha256(self.path), sha256(b'first contents'))
        before = os.stat(self.path)
        self.settle()
        self.write(b'other contents')
        os.utime(self.path, ns=(before.st_atime_ns, before.st_mtime_ns))
        after = os.stat(self.path)
        self.assertEqual((after.st_size, after.st_mtime_ns, after.st_ino),
                         (before.st_size, before.st_mtime_ns, before.st_ino))
        self.assertEqual(store.sha256(self.path), sha256(b'other contents'))
        store.save()
        self.assertEqual(self.store().sha256(self.path), sha256(b'other contents'))

    def test_a_file_replaced_by_a_rename(self):
        self.write(b'first contents')
        self.settle()
        store = self.store()
        self.assertEqual(store.sha256(self.path), sha256(b'first contents'))
        before = os.stat(self.path)
        replacement = os.path.join(self.work, 'replacement')
        self.write(b'other contents', replacement)
        os.utime(replacement, ns=(before.st_atime_ns, before.st_mtime_ns))
        os.rename(replacement, self.path)
        self.assertEqual(store.sha256(self.path), sha256(b'other contents'))

    def test_a_file_cut_short(self):
        self.write(b'first contents')
        self.settle()
        store = self.store()
        store.sha256(self.path)
        before = os.stat(self.path)
        os.truncate(self.path, 5)
        os.utime(self.path, ns=(before.st_atime_ns, before.st_mtime_ns))
        self.assertEqual(store.digests(self.path)[:2], (5, sha256(b'first')))

    def test_a_file_changed_within_the_margin_is_not_remembered(self):
        _fingerprint.SETTLED_NS = self.settled
        self.write(b'just written')
        store = self.store()
        self.assertEqual(store.sha256(self.path), sha256(b'just written'))
        self.assertEqual(store.sha256(self.path), sha256(b'just written'))
        self.assertEqual(store.reads, [self.path, self.path])
        self.assertFalse(store.changed)
        store.save()
        self.assertFalse(os.path.exists(os.path.join(self.work, 'fingerprints.json')))

    def test_a_file_changed_while_it_was_read_is_not_remembered(self):
        self.write(b'first contents')
        self.settle()
        store = self.store()
        with open(self.path, 'rb') as stream:
            before = os.fstat(stream.fileno())
        self.settle()
        self.write(b'other')
        with open(self.path, 'rb') as stream:
            after = os.fstat(stream.fileno())
        store.note(self.path, before, after, time.time_ns(), b'first contents')
        self.assertFalse(store.changed)
        self.assertIsNone(store.known(self.path, after))

    def test_a_store_others_can_write_or_not_json_is_not_used(self):
        self.write(b'first contents')
        self.settle()
        store = self.store()
        store.sha256(self.path)
        store.save()
        planted = os.path.join(self.work, 'fingerprints.json')
        with open(planted) as stream:
            header, line = stream.read().splitlines()
        value = json.loads(line)
        self.assertEqual((json.loads(header), value[0], value[6]),
                         ({'format': 2}, self.path, sha256(b'first contents')))
        # Another user's claim that the file holds other bytes.
        value[6] = sha256(b'planted')
        with open(planted, 'w') as stream:
            stream.write(f'{header}\n{json.dumps(value)}\n')
        os.chmod(planted, 0o666)
        self.assertEqual(self.store().sha256(self.path), sha256(b'first contents'))
        os.chmod(planted, 0o644)
        self.assertEqual(self.store().sha256(self.path), sha256(b'planted'))  # trusted: used
        for damage in (b'{"format": 1, "files": [', b'[]', b'{"format": 99}\n' + line.encode(),
                       b'{"format": 2}\n' + line.encode()[:-5]):
            with self.subTest(damage=damage):
                with open(planted, 'wb') as stream:
                    stream.write(damage)
                store = self.store()
                self.assertEqual(store.sha256(self.path), sha256(b'first contents'))
                self.assertEqual(store.reads, [self.path])

    def test_each_path_finds_its_own_line(self):
        """The file is read a line at a time: each path finds the line of
        its own, whatever characters it holds, and a path that is only the
        start of another one, or a suffix, finds nothing."""
        names = ['a', 'a"', 'a,b', 'a\n["x",', 'b\u00e9\\', 'a"\n[']
        paths = [os.path.join(self.work, name) for name in names]
        for index, path in enumerate(paths):
            self.write(f'contents {index}'.encode(), path)
        self.settle()
        store = self.store()
        for path in paths:
            store.sha256(path)
        store.save()
        again = self.store()
        for index, path in enumerate(paths):
            self.assertEqual(again.sha256(path), sha256(f'contents {index}'.encode()))
        self.assertEqual(again.reads, [])
        others = [os.path.join(self.work, 'a\n'), os.path.join(self.work, 'x'), self.work + '/',
                  self.work[:-1]]
        for other in others:
            self.assertIsNone(self.store()._entry(other), other)

    def test_a_store_on_another_file_system(self):
        if not os.path.isdir('/dev/shm') or \
                os.stat('/dev/shm').st_dev == os.stat(self.work).st_dev:
            self.skipTest('no /dev/shm on a file system of its own')
        directory = tempfile.mkdtemp(prefix='bco-fingerprint-test.', dir='/dev/shm')
        self.addCleanup(shutil.rmtree, directory, ignore_errors=True)
        self.write(b'first contents')
        self.settle()
        store = self.store(directory)
        store.sha256(self.path)
        store.save()
        before = os.stat(self.path)
        self.settle()
        self.write(b'other contents')
        os.utime(self.path, ns=(before.st_atime_ns, before.st_mtime_ns))
        again = self.store(directory)
        self.assertEqual(again.sha256(self.path), sha256(b'other contents'))
        self.assertEqual(again.reads, [self.path])
        # And a file on that other file system, in a store on this one.
        there = os.path.join(directory, 'library.so')
        self.write(b'first contents', there)
        self.settle()
        store = self.store()
        store.sha256(there)
        before = os.stat(there)
        self.settle()
        self.write(b'other contents', there)
        os.utime(there, ns=(before.st_atime_ns, before.st_mtime_ns))
        self.assertEqual(store.sha256(there), sha256(b'other contents'))

    def test_the_process_store_of_no_directory_is_not_written(self):
        store = _fingerprint.store(None)
        self.assertIs(store, _fingerprint.store(None))
        self.write(b'first contents')
        self.settle()
        store.sha256(self.path)
        store.save()
        self.assertEqual(os.listdir(self.work), ['library.so'])


if __name__ == '__main__':
    tap.main()
