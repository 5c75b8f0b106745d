"""One versioned reference moved to an older version of the same function.

Debian 12's libgloo, built by GCC 12, binds std::condition_variable::wait
at GLIBCXX_3.4.30, the version GCC 12 gave the function when it stopped
being noexcept (only a thread cancelled inside the wait tells the two
apart; Gloo's threads are never cancelled). That one reference would hold
the wheel to manylinux_2_35. Its copy here binds the same function's
GLIBCXX_3.4.11 version, which every libstdc++ since GCC 4.4 exports, and
auditwheel grafts the copy (python/build_backend/reshard_wheel.py). Only
references to the functions in MOVABLE are moved; anything else at a too
new version is left for auditwheel to refuse."""

from __future__ import annotations

import shutil
import struct
import subprocess
from collections.abc import Iterable
from pathlib import Path

from elftools.elf.elffile import ELFFile

NEW, OLD = b"GLIBCXX_3.4.30", b"GLIBCXX_3.4.11"
MOVABLE = {b"_ZNSt18condition_variable4waitERSt11unique_lockISt5mutexE"}
_VERNEED = struct.Struct("<HHIII")  # version, count, file, aux, next
_VERNAUX = struct.Struct("<IHHII")  # hash, flags, other, name, next


def elf_hash(name: bytes) -> int:
    """The System V ELF hash of a version name (vna_hash)."""
    h = 0
    for c in name:
        h = ((h << 4) + c) & 0xFFFFFFFF
        g = h & 0xF0000000
        h = (h ^ (g >> 24)) & ~g & 0xFFFFFFFF
    return h


def libraries_needing(binaries: Iterable[Path]) -> set[Path]:
    """The shared libraries the binaries load whose references name NEW."""
    found: set[Path] = set()
    for binary in binaries:
        ldd = subprocess.run(["ldd", str(binary)], capture_output=True, text=True)
        for line in ldd.stdout.splitlines():
            parts = line.split()
            if len(parts) >= 3 and parts[1] == "=>" and parts[2].startswith("/"):
                library = Path(parts[2]).resolve()
                if "libstdc++" not in library.name and NEW in library.read_bytes():
                    found.add(library)
    return found


def retarget_copy(library: Path, folder: Path) -> Path:
    """A copy of `library` in `folder`, under the name the loader asks for,
    whose MOVABLE references bind OLD instead of NEW."""
    data = bytearray(library.read_bytes())
    with library.open("rb") as f:
        elf = ELFFile(f)
        soname = next(
            t.soname
            for t in elf.get_section_by_name(".dynamic").iter_tags()
            if t.entry.d_tag == "DT_SONAME"
        )
        strings = elf.get_section_by_name(".dynstr")
        old_at = strings.data().find(b"\0" + OLD + b"\0") + 1
        if old_at == 0:
            raise RuntimeError(f"{library}: no {OLD!r} string to refer to")
        for at, other in _vernaux_named(elf, NEW):
            names = _symbols_at_version(elf, other)
            if not names <= MOVABLE:
                raise RuntimeError(f"{library}: {sorted(names - MOVABLE)} need {NEW!r}")
            _, flags, _, _, following = _VERNAUX.unpack_from(data, at)
            _VERNAUX.pack_into(data, at, elf_hash(OLD), flags, other, old_at, following)
    copy = folder / soname
    copy.write_bytes(data)
    shutil.copymode(library, copy)
    return copy


def _vernaux_named(elf: ELFFile, version: bytes) -> list[tuple[int, int]]:
    """(file offset, version index) of each needed-version entry naming
    `version`, walking .gnu.version_r's records."""
    section = elf.get_section_by_name(".gnu.version_r")
    strings = elf.get_section_by_name(".dynstr").data()
    raw, base, found = section.data(), section["sh_offset"], []
    need = 0
    for _ in range(section["sh_info"]):
        _, count, _, aux, following = _VERNEED.unpack_from(raw, need)
        at = need + aux
        for _ in range(count):
            _, _, other, name, next_aux = _VERNAUX.unpack_from(raw, at)
            if strings[name : strings.index(b"\0", name)] == version:
                found.append((base + at, other))
            at += next_aux
        need += following
    return found


def _symbols_at_version(elf: ELFFile, index: int) -> set[bytes]:
    """The dynamic symbols bound at version `index` (.gnu.version)."""
    versions = elf.get_section_by_name(".gnu.version").data()
    symbols = list(elf.get_section_by_name(".dynsym").iter_symbols())
    return {
        symbols[i].name.encode()
        for i, (v,) in enumerate(struct.iter_unpack("<H", versions))
        if v & 0x7FFF == index
    }
