"""_elf.py - the symbol table (.symtab) of an ELF file, 32 or 64 bits,
either byte order.

It reads what the bundle's ar symbol index (_archive.py) and the check of
compute functions (_compute_functions.py) need: each symbol's name,
binding and section index, in table order.  Dynamic symbols (.dynsym) are
not read: neither needs them.
"""

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
            found = []
            for at in range(offset + symbol_size, offset + size - symbol_size + 1, symbol_size):
                if wide:
                    name_at, info, _, section = struct.unpack_from(order + 'IBBH', data, at)
                else:
                    name_at, _, _, info, _, section = struct.unpack_from(order + 'IIIBBH', data, at)
                end = names.find(b'\0', name_at)
                found.append(Symbol(names[name_at:end if end >= 0 else len(names)],
                                    info >> 4, section))
            return found  # an ELF file has one .symtab
        return []
    except (struct.error, IndexError):
        return None
