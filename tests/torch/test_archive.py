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


# Each kind of symbol the index lists or leaves out: common, defined,
# local, weak defined, undefined and weak undefined.
SYMBOL_KINDS_C = """\
int common_one;
int defined_one = 3;
static int local_one = 4;
__attribute__((weak)) int weak_one(void) { return local_one; }
extern int undefined_one(void);
__attribute__((weak)) extern int weak_undefined(void);
int odd(void) { return undefined_one() + (weak_undefined ? weak_undefined() : 0); }
"""
# g++ makes the static of an inline function a unique global (STB_GNU_UNIQUE).
UNIQUE_CPP = """\
inline int &counter() { static int count; return count; }
int use() { return ++counter(); }
"""


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

    def test_same_bytes_as_ar_without_objects(self):
        self.write_members(self.path('in'), MEMBERS)
        names = [name for name, _ in MEMBERS]
        self.ar('rc', self.path('by-ar.a'), *names, cwd=self.path('in'))
        with open(self.path('by-ar.a'), 'rb') as stream:
            self.assertEqual(_archive.build(MEMBERS), stream.read())

    def compile(self, tool, source, output, *flags, install):
        compiler = shutil.which(tool)
        if compiler is None:
            self.skipTest(f'{tool} is not installed: apt-get install {install}')
        subprocess.run([compiler, *flags, '-o', self.path(output), self.path(source)],
                       check=True, cwd=self.work)
        return output

    def assert_same_bytes_as_ar(self, names):
        """The original bundles with `ar r`: its symbol index, member by member."""
        members = []
        for name in names:
            with open(self.path(name), 'rb') as stream:
                members.append((name, stream.read()))
        self.ar('rc', self.path('by-ar.a'), *names)
        with open(self.path('by-ar.a'), 'rb') as stream:
            expected = stream.read()
        os.unlink(self.path('by-ar.a'))
        self.assertEqual(expected[8:9], b'/', 'ar wrote a symbol index')
        self.assertEqual(_archive.build(members), expected)
        self.assertEqual(_archive.read(expected), members)

    def write_sources(self):
        with open(self.path('kinds.c'), 'w') as stream:
            stream.write(SYMBOL_KINDS_C)
        with open(self.path('unique.cpp'), 'w') as stream:
            stream.write(UNIQUE_CPP)
        with open(self.path('metadata.json'), 'w') as stream:
            stream.write('{"odd": 1}')

    def test_same_bytes_as_ar_with_elf_members(self):
        self.write_sources()
        cc = ('cc', 'kinds.c')
        built = [
            self.compile(*cc, 'kinds.o', '-c', '-fcommon', install='gcc'),
            self.compile(*cc, 'libkinds_shared_library.so', '-shared', '-fPIC', install='gcc'),
            self.compile('c++', 'unique.cpp', 'unique.o', '-c', install='g++'),
        ]
        subprocess.run(['strip', '-o', self.path('stripped.so'),
                        self.path('libkinds_shared_library.so')], check=True)
        self.assert_same_bytes_as_ar(['metadata.json', 'stripped.so'])
        self.assert_same_bytes_as_ar(['libkinds_shared_library.so', 'metadata.json'])
        self.assert_same_bytes_as_ar(built + ['stripped.so', 'metadata.json'])

    def test_same_bytes_as_ar_with_32_bit_and_big_endian_objects(self):
        # The device's libraries are 32-bit ELF files.
        self.write_sources()
        built = [self.compile('clang', 'kinds.c', f'{target}.o', f'--target={target}', '-c',
                              '-fcommon', install='clang')
                 for target in ('i386-linux-gnu', 'powerpc-linux-gnu')]
        for name in built:
            self.assert_same_bytes_as_ar([name, 'metadata.json'])
        self.assert_same_bytes_as_ar(built)

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
