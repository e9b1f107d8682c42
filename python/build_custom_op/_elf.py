"""_elf.py - what the PyTorch level reads of ELF files: the symbol table
(.symtab) of a file of 32 or 64 bits, either byte order, and whether a
shared library is whole.

The symbols are what the bundle's ar symbol index (_archive.py) and the
check of compute functions (_compute_functions.py) need: each symbol's
name, binding and section index, in table order.  Dynamic symbols
(.dynsym) are not read: neither needs them.

incomplete() is run/elf_check.c's check, for the libraries Python loads
(shape libraries) and the members of bundles: a file cut short maps
without complaint, and the first touch of a missing page kills the
process with SIGBUS.
"""

import os
import struct

ET_REL, ET_EXEC, ET_DYN = 1, 2, 3
SHT_SYMTAB = 2
SHN_UNDEF = 0
SHN_COMMON = 0xFFF2
STB_LOCAL = 0
STB_GLOBAL = 1
STB_WEAK = 2
STB_GNU_UNIQUE = 10


class Symbol:
    __slots__ = ('name', 'binding', 'section')

    def __init__(self, name, binding, section):
        self.name = name            # bytes
        self.binding = binding      # STB_*
        self.section = section      # st_shndx: SHN_UNDEF, SHN_COMMON, ...


def is_elf(data):
    """Whether data starts like an ELF file of a class and byte order this
    module reads."""
    return len(data) >= 52 and data[:4] == b'\x7fELF' and data[4] in (1, 2) \
        and data[5] in (1, 2)


def is_object(data):
    """Whether data is an ELF file that ar treats as an object: relocatable,
    executable or shared, not a core dump."""
    if not is_elf(data):
        return False
    kind, = struct.unpack_from('<H' if data[5] == 1 else '>H', data, 16)
    return kind in (ET_REL, ET_EXEC, ET_DYN)


def symbols(data):
    """The symbols of .symtab after the null one, in order: [] when there is
    no .symtab (a stripped library), None when data is not an ELF file or
    its tables do not fit in it."""
    if not is_elf(data):
        return None
    wide = data[4] == 2
    order = '<' if data[5] == 1 else '>'
    try:
        if wide:
            shoff, = struct.unpack_from(order + 'Q', data, 0x28)
            shentsize, shnum = struct.unpack_from(order + 'HH', data, 0x3A)
            section_format, symbol_size = order + 'IIQQQQIIQQ', 24
        else:
            shoff, = struct.unpack_from(order + 'I', data, 0x20)
            shentsize, shnum = struct.unpack_from(order + 'HH', data, 0x2E)
            section_format, symbol_size = order + 'IIIIIIIIII', 16
        if shoff and shnum == 0:  # more than 0xff00 sections: the count is in section 0
            shnum = struct.unpack_from(section_format, data, shoff)[5]
        sections = []
        for i in range(shnum):
            _, kind, _, _, offset, size, link, _, _, _ = struct.unpack_from(
                section_format, data, shoff + i * shentsize)
            sections.append((kind, offset, size, link))
        for kind, offset, size, link in sections:
            if kind != SHT_SYMTAB:
                continue
            _, names_offset, names_size, _ = sections[link]
            names = data[names_offset:names_offset + names_size]
            if offset + size > len(data) or names_offset + names_size > len(data):
                return None
            # Each entry whole, with the fields that are not read as padding.
            entry = order + ('IBxH16x' if wide else 'I8xBxH')
            first = offset + symbol_size
            count = (size - symbol_size) // symbol_size if size >= symbol_size else 0
            table = memoryview(data)[first:first + count * symbol_size]
            found = []
            for name_at, info, section in struct.iter_unpack(entry, table):
                end = names.find(b'\0', name_at)
                found.append(Symbol(names[name_at:end if end >= 0 else len(names)],
                                    info >> 4, section))
            return found  # an ELF file has one .symtab
        return []
    except (struct.error, IndexError):
        return None


def incomplete(data):
    """What is missing from data, a whole shared library, as run-custom-op
    says it ("it has 1000 bytes, but its ELF headers describe 4096"); None
    when it holds every part its ELF header, program headers and section
    headers describe.  As run/elf_check.c, only this machine's kind of
    library (64 bits, little-endian) is measured; the loader refuses the
    others itself."""
    return _incomplete(lambda offset, size: data[offset:offset + size], len(data))


def incomplete_file(descriptor):
    """incomplete() of the open file descriptor's bytes, reading only its
    headers (the check needs no more than them and the file's size)."""
    length = os.fstat(descriptor).st_size
    try:
        return _incomplete(lambda offset, size: os.pread(descriptor, size, offset), length)
    except struct.error:
        return f'it has {length} bytes, but fewer could be read (it was cut while being read)'



def _incomplete(read, length):
    """incomplete() of a file of length bytes; read(offset, size) gives
    its bytes there (fewer at its end)."""
    header = read(0, 64)
    if length < 4 or header[:4] != b'\x7fELF':
        return (f'it is not an ELF shared library ({length} bytes, without the ELF magic '
                'number)')
    if length < 64:
        return f'it has {length} bytes, too few for its ELF header'
    if header[4] != 2 or header[5] != 1:
        return None
    phoff, shoff = struct.unpack_from('<QQ', header, 0x20)
    phentsize, phnum, shentsize, shnum = struct.unpack_from('<HHHH', header, 0x36)
    if phentsize != 56:
        return None
    limit = 2 ** 64 - 1

    def table_end(offset, count, size):
        return limit if size and count > (limit - offset) // size else offset + count * size

    needed = table_end(phoff, phnum, phentsize)
    if shoff:
        needed = max(needed, table_end(shoff, shnum, shentsize))
    if needed <= length:
        table = read(phoff, phnum * 56)
        for i in range(phnum):
            kind, _, offset, _, _, filesz = struct.unpack_from('<IIQQQQ', table, i * 56)
            end = limit if offset > limit - filesz else offset + filesz
            if kind == 1 and end > needed:  # PT_LOAD
                needed = end
    if needed <= length:
        return None
    if needed == limit:
        return 'its ELF headers are damaged (they describe parts beyond any file)'
    return f'it has {length} bytes, but its ELF headers describe {needed}'
