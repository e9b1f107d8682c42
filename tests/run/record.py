"""record.py - writes a host build's .ops record (version 2) for the tests,
with the ids of the libraries as they are when it runs.

  python3 record.py BUILD_DIR/NAME CORES [OP_LINE...]
      CORES is 1 (NAME.so) or 8 (NAME_cpu0.so .. NAME_cpu7.so); each
      OP_LINE is "NAME<TAB>KINDS<TAB>(SIGNATURE)" (see run/opsfile.h).
      Without OP_LINE, the ops of the fake core library (tests/run/fake_core.c).

The id is the one src/library_id.c computes: 64-bit FNV-1a over the file's
little-endian 8-byte words in four interleaved lanes, then the lanes and
the last bytes into one more FNV-1a.
"""
import os
import struct
import sys

# The ops tests/run/fake_core.c registers, in its order.
FAKE_OPS = ['scale2\tT\t(Tensor x)',
            'axpby\tTTSfi\t(Tensor x, Tensor y, Scalar a, float b, int n)',
            'scalar_dtype\tS\t(Scalar s)', 'fill\tl\t(long long v)'] + \
    ['%s\tT\t(Tensor x)' % op for op in ('chatter', 'copies', 'violation', 'overflow',
                                       'far_overflow', 'wild', 'unguarded')]

FNV_OFFSET = 14695981039346656037
FNV_PRIME = 1099511628211
MASK = 2 ** 64 - 1


def library_id(path):
    with open(path, 'rb') as stream:
        data = stream.read()
    words = len(data) // 8
    lanes = [FNV_OFFSET] * 4
    for index, word in enumerate(struct.unpack_from('<%dQ' % words, data)):
        lanes[index % 4] = ((lanes[index % 4] ^ word) * FNV_PRIME) & MASK
    value = FNV_OFFSET
    for lane in lanes:
        value = ((value ^ lane) * FNV_PRIME) & MASK
    for byte in data[words * 8:]:
        value = ((value ^ byte) * FNV_PRIME) & MASK
    return '%016x' % value


def libraries(base, cores):
    if cores == 1:
        return [base + '.so']
    return ['%s_cpu%d.so' % (base, core) for core in range(8)]


def write(base, cores, op_lines):
    lines = ['# build-custom-op ops 2', 'cores %d' % cores]
    for path in libraries(base, cores):
        lines.append('library %s %s' % (os.path.basename(path), library_id(path)))
    with open(base + '.ops', 'w') as stream:
        stream.write('\n'.join(lines + list(op_lines)) + '\n')


if __name__ == '__main__':
    write(sys.argv[1], int(sys.argv[2]), sys.argv[3:] or FAKE_OPS)
