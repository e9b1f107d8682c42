"""test_archive.py - the ar format of bundles, written and read in Python
(build_custom_op._archive): what `ar` writes and reads, and clear errors
for damaged archives.  Needs no PyTorch."""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fixture  # noqa: E402,F401  (puts python/ on sys.path)
import tap  # noqa: E402
from build_custom_op import _archive  # noqa: E402

MEMBERS = [
    ('librelushapefcn.so', b'\x7fELF shape library\n'),   # a long name: 18 bytes
    ('librelucustomop.packed.so', b'odd'),                # odd size: padded
    ('short.so', b''),                                    # empty
    ('metadata.json', b'{"versions": {}}'),
]


class ArchiveTest(unittest.TestCase):
    def setUp(self):
        self.work = tempfile.mkdtemp(prefix='bco-archive-test.')
        self.addCleanup(shutil.rmtree, self.work, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.work, name)

    def write_members(self, directory, members):
        os.makedirs(directory, exist_ok=True)
        for name, data in members:
            with open(os.path.join(directory, name), 'wb') as stream:
                stream.write(data)

    def ar(self, *argv, cwd=None):
        tool = shutil.which('ar')
        if tool is None:
            self.skipTest('ar is not installed: apt-get install binutils')
        return subprocess.run([tool, *argv], cwd=cwd or self.work, check=True,
                              capture_output=True)

    def test_same_bytes_as_ar_without_an_index(self):
        self.write_members(self.path('in'), MEMBERS)
        names = [name for name, _ in MEMBERS]
        self.ar('rcS', self.path('by-ar.a'), *names, cwd=self.path('in'))
        with open(self.path('by-ar.a'), 'rb') as stream:
            self.assertEqual(_archive.build(MEMBERS), stream.read())

    def test_ar_lists_and_extracts_the_members(self):
        with open(self.path('ours.a'), 'wb') as stream:
            stream.write(_archive.build(MEMBERS))
        listed = self.ar('t', self.path('ours.a')).stdout.decode().splitlines()
        self.assertEqual(listed, [name for name, _ in MEMBERS])
        os.mkdir(self.path('out'))
        self.ar('x', self.path('ours.a'), cwd=self.path('out'))
        for name, data in MEMBERS:
            with open(os.path.join(self.path('out'), name), 'rb') as stream:
                self.assertEqual(stream.read(), data, name)

    def test_reads_what_ar_writes_with_a_symbol_index(self):
        with open(self.path('f.c'), 'w') as stream:
            stream.write('int exported_function(void) { return 42; }\n')
        compiler = shutil.which('cc') or shutil.which('gcc')
        if compiler is None:
            self.skipTest('no C compiler: apt-get install gcc')
        subprocess.run([compiler, '-c', '-o', self.path('object_with_symbols.o'),
                        self.path('f.c')], check=True)
        with open(self.path('object_with_symbols.o'), 'rb') as stream:
            object_bytes = stream.read()
        self.write_members(self.path('in'), MEMBERS)
        shutil.copy(self.path('object_with_symbols.o'), self.path('in'))
        self.ar('r', self.path('indexed.a'), 'object_with_symbols.o', *[n for n, _ in MEMBERS],
                cwd=self.path('in'))
        with open(self.path('indexed.a'), 'rb') as stream:
            data = stream.read()
        self.assertIn(b'exported_function', data[:200])  # the index ar wrote
        self.assertEqual(_archive.read(data),
                         [('object_with_symbols.o', object_bytes)] + MEMBERS)

    def test_reads_bsd_long_names(self):
        name = b'a_bsd_member_name.so'
        body = name + b'data'
        header = (b'#1/%d' % len(name)).ljust(16) + b'0'.ljust(12) + b'0'.ljust(6) + \
            b'0'.ljust(6) + b'644'.ljust(8) + str(len(body)).encode().ljust(10) + b'`\n'
        self.assertEqual(_archive.read(b'!<arch>\n' + header + body),
                         [('a_bsd_member_name.so', b'data')])

    def test_round_trip(self):
        self.assertEqual(_archive.read(_archive.build(MEMBERS)), MEMBERS)
        self.assertEqual(_archive.read(_archive.build([])), [])

    def test_refuses_names_that_are_not_plain_file_names(self):
        for name in ('', '.', '..', 'a/b', '../up', 'new\nline'):
            with self.subTest(name=name):
                with self.assertRaises(ValueError) as caught:
                    _archive.build([(name, b'x')])
                self.assertEqual(str(caught.exception),
                                 f'{name!r} cannot be the name of an archive member')
        with self.assertRaises(ValueError) as caught:
            _archive.build([('same.so', b'1'), ('same.so', b'2')])
        self.assertEqual(str(caught.exception), 'two archive members are named same.so')

    def test_damaged_archives(self):
        good = _archive.build(MEMBERS)
        cases = [
            ('not an archive', b'\x7fELF', 'it does not start with the ar magic "!<arch>"'),
            ('cut in a header', good[:30], 'it ends inside the member header at byte 8'),
            ('cut in a member', good[:-5],
             'the member at byte 320 needs 16 bytes, but the file ends 5 bytes early'),
            ('a damaged header', good[:66] + b'XX' + good[68:],
             'the member header at byte 8 is damaged'),
            ('a bad size', good[:56] + b'zz' + good[58:],
             "the member header at byte 8 has a bad size field 'zz        '"),
            ('a long name without a table',
             b'!<arch>\n' + b'/0'.ljust(16) + b'0'.ljust(32) + b'1'.ljust(10) + b'`\nx\n',
             'the member at byte 8 refers to a long name, but the archive has no "//" '
             'name table'),
            ('a path as a name',
             b'!<arch>\n' + b'../evil.so/'.ljust(16) + b'0'.ljust(32) + b'1'.ljust(10) +
             b'`\nx\n',
             "the member at byte 8 has the name b'../evil.so', which is not a plain file name"),
        ]
        for what, data, message in cases:
            with self.subTest(what):
                with self.assertRaises(_archive.ArchiveError) as caught:
                    _archive.read(data)
                self.assertEqual(str(caught.exception), message)


if __name__ == '__main__':
    tap.main()
