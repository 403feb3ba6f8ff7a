"""What a bare-metal ELF says about itself before anything runs it: that it is a
RISC-V executable (not an object file, not garbage), and the GemminiConfig it was
built for, kept in an ELF note so that running it on another configuration is an
error up front instead of a wrong result or a failed self-check.

The note (section `.note.baco.gemmini`, not loaded): name "baco", type
NOTE_TYPE, descriptor the config's JSON (GemminiConfig.to_json)."""
from __future__ import annotations

import json
import struct

from baco.gemmini.config import GemminiConfig

NOTE_SECTION = ".note.baco.gemmini"
NOTE_NAME = b"baco\0"
NOTE_TYPE = 0x47454D31          # "GEM1"
EM_RISCV = 243
SHT_SYMTAB, SHN_UNDEF = 2, 0


def _pad4(n: int) -> int:
    return (n + 3) & ~3


def config_note_asm(config: GemminiConfig) -> str:
    """Assembly for the note section recording `config` (linked into every ELF baco builds)."""
    desc = json.dumps(config.to_dict(), sort_keys=True).encode()
    body = NOTE_NAME + b"\0" * (_pad4(len(NOTE_NAME)) - len(NOTE_NAME)) + desc
    words = struct.pack("<III", len(NOTE_NAME), len(desc), NOTE_TYPE) + body
    words += b"\0" * (_pad4(len(words)) - len(words))
    lines = [f'.section {NOTE_SECTION},"",@note', ".balign 4"]
    lines += [".byte " + ", ".join(str(b) for b in words[i:i + 16]) for i in range(0, len(words), 16)]
    return "\n".join(lines) + "\n"


def check_executable(path) -> None:
    """A one-line ValueError unless `path` is a 64-bit RISC-V executable ELF (OSError if unreadable)."""
    with open(path, "rb") as f:
        head = f.read(64)
    if head[:4] != b"\x7fELF":
        raise ValueError(f"{path}: not an ELF file")
    if head[4] != 2 or head[5] != 1:
        raise ValueError(f"{path}: not a 64-bit little-endian ELF")
    e_type, e_machine = struct.unpack_from("<HH", head, 16)
    if e_machine != EM_RISCV:
        raise ValueError(f"{path}: not a RISC-V ELF (machine {e_machine})")
    if e_type == 1:
        raise ValueError(f"{path}: a relocatable object file, not an executable; link it into an ELF "
                         "(baco llc IN.ll -o OUT.elf --main main.c)")
    if e_type != 2:
        raise ValueError(f"{path}: not an executable ELF (type {e_type})")


def read_symbols(path) -> dict[str, int]:
    """{name: value} of the defined symbols of an ELF64 little-endian file's .symtab (the first
    of each name), read with struct: pyelftools takes ~0.2 s for a few hundred symbols."""
    with open(path, "rb") as f:
        data = f.read()
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    symbols = {}
    for _, sh_type, _, _, offset, size, link, _, _, entsize in sections:
        if sh_type != SHT_SYMTAB:
            continue
        str_off = sections[link][4]
        for name_off, _, _, shndx, value, _ in struct.iter_unpack("<IBBHQQ", data[offset:offset + size]):
            if name_off and shndx != SHN_UNDEF:
                start = str_off + name_off
                symbols.setdefault(data[start:data.index(b"\0", start)].decode(), value)
    return symbols


def read_config_note(path) -> GemminiConfig | None:
    """The GemminiConfig recorded in the ELF, or None when it has no note."""
    from elftools.elf.elffile import ELFFile
    with open(path, "rb") as f:
        sec = ELFFile(f).get_section_by_name(NOTE_SECTION)
        data = sec.data() if sec is not None else None
    if not data or len(data) < 12:
        return None
    namesz, descsz, kind = struct.unpack_from("<III", data)
    start = 12 + _pad4(namesz)
    if kind != NOTE_TYPE or data[12:12 + namesz] != NOTE_NAME:
        return None
    return GemminiConfig.from_dict(json.loads(data[start:start + descsz]))
