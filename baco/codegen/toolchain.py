"""Bare-metal RISC-V builds with the clang + lld that the `ziglang` package ships.

Programs target the riscv-tests benchmark environment in toolchain/: entry at
0x80000000 (crt.S), HTIF exit and console through `tohost`/`fromhost`
(syscalls.c), and the linker script test.ld. The gemmini_params.h for the
target GemminiConfig is generated into a private include directory for each
build; only the start-up code's objects are kept, once a process per set of
compile flags (every ELF links them).

rv64gc is spelled `-mcpu=baseline_rv64` (rv64imafdc + zicsr): zig's driver
reads `-march` as a CPU name.
"""
from __future__ import annotations

import atexit
import functools
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Iterable, Mapping

from baco.gemmini.config import DEFAULT_CONFIG, GemminiConfig
from baco.gemmini.params_header import generate_params_header
from baco.sim.elfinfo import config_note_asm

TOOLCHAIN_DIR = Path(__file__).resolve().parents[2] / "toolchain"
START_FILES = ("crt.S", "syscalls.c")
LINKER_SCRIPT = "test.ld"

TARGET_FLAGS = (
    "-target", "riscv64-freestanding-none", "-mcpu=baseline_rv64", "-mabi=lp64d",
    "-mcmodel=medany", "-static", "-nostdlib", "-ffreestanding",
    "-fno-common", "-fno-asynchronous-unwind-tables", "-fno-unwind-tables",
    "-Wno-unused-command-line-argument",
)


class ToolchainError(RuntimeError):
    """A compile or link step failed; the message carries the compiler output."""


@functools.lru_cache(maxsize=None)
def _zig() -> list[str]:
    """The command that runs zig: the `ziglang` package's binary itself, as `python -m ziglang`
    execs it, without starting a Python first (~0.06 CPU s a build); that command where the binary
    is not found."""
    spec = importlib.util.find_spec("ziglang")
    for d in (spec.submodule_search_locations or []) if spec else []:
        zig = Path(d) / ("zig.exe" if os.name == "nt" else "zig")
        if os.access(zig, os.X_OK):
            return [str(zig)]
    return [sys.executable, "-m", "ziglang"]


def _cc(args: list[str]) -> None:
    cmd = [*_zig(), "cc", *args]
    # zig keeps a compile cache; point it at a throwaway directory so builds
    # do not depend on (or fill) a global cache.
    with tempfile.TemporaryDirectory(prefix="baco-zig-") as cache:
        env = dict(os.environ, ZIG_LOCAL_CACHE_DIR=cache, ZIG_GLOBAL_CACHE_DIR=cache)
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise ToolchainError(f"command failed ({proc.returncode}): {' '.join(map(str, cmd))}\n"
                             f"{proc.stdout}{proc.stderr}")


def _define_flags(defines: Mapping[str, object] | None) -> list[str]:
    flags = []
    for name, value in (defines or {}).items():
        flags.append(f"-D{name}" if value is None or value is True else f"-D{name}={value}")
    return flags


def _include_flags(params_dir: Path, include_dirs: Iterable) -> list[str]:
    dirs = [*include_dirs, params_dir, TOOLCHAIN_DIR / "include", TOOLCHAIN_DIR]
    # The generated header lives in a fresh temporary directory; naming it by
    # a fixed path in debug info keeps repeated builds byte-identical.
    return [f"-I{d}" for d in dirs] + [f"-ffile-prefix-map={params_dir}=gemmini-params"]


def _write_params(directory: Path, config: GemminiConfig | None) -> Path:
    (directory / "gemmini_params.h").write_text(generate_params_header(config or DEFAULT_CONFIG))
    return directory


def compile_object(source, out_obj, *, include_dirs=(), defines=None, opt="-O2",
                   config: GemminiConfig | None = None) -> Path:
    """Compile one .c, .S or .ll file to a RISC-V object file."""
    source, out_obj = Path(source), Path(out_obj)
    out_obj.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="baco-params-") as tmp:
        params_dir = _write_params(Path(tmp), config)
        _cc([*TARGET_FLAGS, opt, *_include_flags(params_dir, include_dirs), *_define_flags(defines),
             "-c", str(source), "-o", str(out_obj)])
    return out_obj


def compile_and_link(sources, out_elf, *, include_dirs=(), defines=None, opt="-O2",
                     config: GemminiConfig | None = None, extra_objects=()) -> Path:
    """Build a bare-metal ELF from C/assembly sources (plus objects), with the
    start-up code, runtime and linker script of toolchain/."""
    if isinstance(sources, (str, os.PathLike)):
        sources = [sources]
    out_elf = Path(out_elf)
    out_elf.parent.mkdir(parents=True, exist_ok=True)
    start = _start_objects(opt, tuple(map(str, include_dirs)), tuple((defines or {}).items()), config)
    with tempfile.TemporaryDirectory(prefix="baco-params-") as tmp:
        params_dir = _write_params(Path(tmp), config)
        note = Path(tmp) / "gemmini_config_note.S"      # the config the ELF is built for (baco sim reads it)
        note.write_text(config_note_asm(config or DEFAULT_CONFIG))
        _cc([*TARGET_FLAGS, opt, *_include_flags(params_dir, include_dirs), *_define_flags(defines),
             "-T", str(TOOLCHAIN_DIR / LINKER_SCRIPT), *start, *map(str, sources), str(note),
             *map(str, extra_objects), "-o", str(out_elf)])
    return out_elf


@functools.lru_cache(maxsize=None)
def _start_objects(opt: str, include_dirs: tuple, defines: tuple, config: GemminiConfig | None) -> tuple:
    """crt.S and syscalls.c compiled (compile_object) with a link's flags (`defines`: its items), once
    a process per set of flags (compiling them cost ~0.5 CPU s a link); the objects live in a
    directory removed when the process exits."""
    out = Path(tempfile.mkdtemp(prefix="baco-start-"))
    atexit.register(shutil.rmtree, out, True)
    return tuple(str(compile_object(TOOLCHAIN_DIR / name, out / f"{name}.o", include_dirs=include_dirs,
                                    defines=dict(defines), opt=opt, config=config)) for name in START_FILES)
