"""npy.py - makes and shows .npy files for the tests, without numpy.

  python3 npy.py make OUT DESCR SHAPE [VALUE...] [--version N] [--fortran]
      SHAPE is "2,3", "5" or "" for a 0-dimensional array; DESCR is a NumPy
      descr such as '<f4', '>i2', '|u1', or 'bfloat16'.  Writes the header as
      run-custom-op does: {'descr': .., 'fortran_order': .., 'shape': .., }
      padded with spaces to a multiple of 64 bytes, ending in a newline.
  python3 npy.py show FILE
      Prints "DESCR SHAPE: V V ..." (floats with repr) from its own reading.
"""
import ast
import struct
import sys

FORMATS = {"f4": "f", "f2": "e", "i4": "i", "i1": "b", "i8": "q", "i2": "h", "u1": "B"}


def split_descr(descr):
    if descr.lstrip("<>") == "bfloat16":
        return (">" if descr.startswith(">") else "<"), "bfloat16"
    return descr[0], descr[1:]


def pack(descr, values):
    order, kind = split_descr(descr)
    endian = ">" if order == ">" else "<"
    if kind == "bfloat16":
        words = [struct.unpack("<I", struct.pack("<f", float(v)))[0] >> 16 for v in values]
        return struct.pack(endian + "%dH" % len(words), *words)
    code = FORMATS[kind]
    cast = float if code in "fe" else int
    return struct.pack(endian + "%d%s" % (len(values), code), *[cast(v) for v in values])


def make(out, descr, shape_text, values, version=1, fortran=False):
    shape = tuple(int(d) for d in shape_text.split(",")) if shape_text else ()
    header = "{'descr': '%s', 'fortran_order': %s, 'shape': %r, }" % (
        descr, "True" if fortran else "False", shape)
    length_size = 2 if version == 1 else 4
    fixed = 8 + length_size
    padding = (64 - (fixed + len(header) + 1) % 64) % 64
    header = header + " " * padding + "\n"
    preamble = b"\x93NUMPY" + bytes([version, 0])
    preamble += struct.pack("<H" if version == 1 else "<I", len(header))
    with open(out, "wb") as f:
        f.write(preamble + header.encode("latin1") + pack(descr, values))


def show(path):
    data = open(path, "rb").read()
    assert data[:6] == b"\x93NUMPY", "not a .npy file"
    version = data[6]
    length_size = 2 if version == 1 else 4
    (length,) = struct.unpack("<H" if version == 1 else "<I", data[8:8 + length_size])
    start = 8 + length_size
    header = ast.literal_eval(data[start:start + length].decode("latin1"))
    body = data[start + length:]
    descr = header["descr"]
    order, kind = split_descr(descr)
    endian = ">" if order == ">" else "<"
    count = 1
    for d in header["shape"]:
        count *= d
    if kind == "bfloat16":
        words = struct.unpack(endian + "%dH" % count, body)
        values = [struct.unpack("<f", struct.pack("<I", w << 16))[0] for w in words]
    else:
        values = list(struct.unpack(endian + "%d%s" % (count, FORMATS[kind]), body))
    print("%s %r: %s" % (descr, header["shape"], " ".join(repr(v) for v in values)))


def main(argv):
    if argv[:1] == ["show"] and len(argv) == 2:
        show(argv[1])
        return 0
    if argv[:1] == ["make"] and len(argv) >= 4:
        version, fortran, rest = 1, False, []
        args = argv[1:]
        i = 0
        while i < len(args):
            if args[i] == "--version":
                version = int(args[i + 1])
                i += 2
            elif args[i] == "--fortran":
                fortran = True
                i += 1
            else:
                rest.append(args[i])
                i += 1
        make(rest[0], rest[1], rest[2], rest[3:], version, fortran)
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
