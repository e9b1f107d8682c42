"""record.py - writes a host build's .ops record (version 2) for the tests,
with the ids of the libraries as they are when it runs.

  python3 record.py BUILD_DIR/NAME CORES [OP_LINE...]
      CORES is 1 (NAME.so) or 8 (NAME_cpu0.so .. NAME_cpu7.so); each
      OP_LINE is "NAME<TAB>KINDS<TAB>(SIGNATURE)" (see run/opsfile.h).

The id is the one src/library_id.c computes: 64-bit FNV-1a over the file's
little-endian 8-byte words, then over its last bytes one at a time.
"""
import os
import struct
import sys

FNV_OFFSET = 14695981039346656037
FNV_PRIME = 1099511628211
MASK = 2 ** 64 - 1


def library_id(path):
    with open(path, 'rb') as stream:
        data = stream.read()
    words = len(data) // 8
    value = FNV_OFFSET
    for word in struct.unpack_from('<%dQ' % words, data):
        value = ((value ^ word) * FNV_PRIME) & MASK
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
    write(sys.argv[1], int(sys.argv[2]), sys.argv[3:])
