"""RISC-V instruction-set simulator for bare-metal Gemmini programs.

unicorn emulates an RV64GC hart in machine mode; the Gemmini functional model
(baco.sim.functional) serves the accelerator's custom instructions.

Memory map
  [0x80000000, 0x80000000 + mem_size)  RAM. The ELF's PT_LOAD segments are
      copied in, everything else reads as zero. Nothing else is mapped: a CPU
      access outside RAM ends the run, and a Gemmini DMA access outside RAM
      raises GemminiFault. The model reads and writes this same RAM.
  tohost / fromhost (ELF symbols, inside RAM)  the HTIF mailbox. A write hook
      on tohost serves it: an odd value ends the run with exit code value>>1;
      an even value is the address of a magic_mem block {syscall number, arg0,
      arg1, arg2} (SYS_write prints to the console, SYS_exit ends the run),
      answered by writing the result into magic_mem[0] and 1 into fromhost.

Custom instructions
  Unicorn cannot report an unknown opcode usefully, so at load time the
  executable sections are decoded linearly (2- and 4-byte instructions) and
  every custom-3 word (opcode 0x7B) and every `fence` is replaced in RAM by
  `ecall` (same length). The original words are kept in a table keyed by pc.
  unicorn reports the ecall through UC_HOOK_INTR with cause 8 and the pc
  already past the instruction; the hook looks up pc-4, reads the rs1/rs2
  register values named by the original word, calls
  GemminiModel.execute(funct, rs1, rs2, pc=pc), writes rd when the word's xd
  bit is set, and emulation continues. A `fence` calls model.fence(). Any
  other trap (a genuine ecall, an illegal instruction, a misaligned access)
  ends the run with a message naming the pc.

Instructions are counted per executed basic block (a block hook adds the
block's precomputed instruction count), which also enforces the instruction
and wall-time limits without a per-instruction Python hook; `trace=True` adds
one that prints every instruction.
"""
from __future__ import annotations

import signal
import struct
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, TextIO

import unicorn
import unicorn.riscv_const as rv
from elftools.elf.constants import SH_FLAGS
from elftools.elf.elffile import ELFFile

from baco.gemmini.config import DEFAULT_CONFIG, GemminiConfig
from baco.gemmini.isa import COMMANDS, OPCODE_CUSTOM3, GemminiFault, IsaError, disassemble, split_insn
from baco.sim.elfinfo import read_symbols

RAM_BASE = 0x80000000
DEFAULT_MEM_SIZE = 256 << 20
DEFAULT_MAX_INSTRUCTIONS = 2_000_000_000
DEFAULT_TIMEOUT_S = 600.0

ECALL = 0x00000073
OPCODE_MISC_MEM = 0x0F
OPCODE_SYSTEM = 0x73
OPCODE_OP, OPCODE_OP_32, FUNCT7_MULDIV = 0x33, 0x3B, 0x01     # the M extension's register forms
COUNTER_CSRS = {0xC00: "cycle", 0xC01: "time", 0xC02: "instret", 0xB00: "mcycle", 0xB02: "minstret"}
SYS_write, SYS_exit = 64, 93
ENOSYS = 38
CAUSE_ECALL_M = 8
TRAP_NAMES = {0: "instruction address misaligned", 1: "instruction access fault",
              2: "illegal instruction", 3: "breakpoint", 4: "load address misaligned",
              5: "load access fault", 6: "store address misaligned", 7: "store access fault",
              8: "ecall", 12: "instruction page fault", 13: "load page fault", 15: "store page fault"}
FENCE = "fence"
FUNCT_COUNTER = COMMANDS["counter"].funct
TIME_CHECK_BLOCKS = 1 << 14  # blocks between wall-clock checks


class IssError(RuntimeError):
    """The ELF cannot be loaded (bad file, no tohost, does not fit in RAM)."""


def _x(n: int) -> int:
    return rv.UC_RISCV_REG_X0 + n


@dataclass
class IssResult:
    exit_code: int | None          # None when the run ended on an error
    instructions: int
    gemmini_commands: int          # custom instructions the CPU issued
    console: str
    stats: dict
    model: object
    error: str | None = None       # why the run stopped, when it did not exit
    fault: GemminiFault | None = None    # the Gemmini fault that stopped it, if one did
    elapsed_s: float = 0.0
    cpu_cycles: int = 0            # the hart's cycle CSR at the end (baco.sim.iss.CpuClock)
    muldiv: tuple = (0, 0, 0, 0)   # retired multiplies and divides, by muldiv_kind
    timing: object = None          # the cycle model the run had (given, or attached for its counters)
    _uc: unicorn.Uc | None = field(default=None, repr=False)
    _symbols: dict = field(default_factory=dict, repr=False)

    @property
    def ok(self) -> bool:
        return self.error is None and self.exit_code == 0

    def read_memory(self, addr: int, n: int) -> bytes:
        return bytes(self._uc.mem_read(addr, n))

    def symbol(self, name: str) -> int:
        try:
            return self._symbols[name]
        except KeyError:
            raise KeyError(f"symbol {name!r} not in the ELF") from None


class UnicornMemory:
    """The Memory interface of the functional model, backed by the ISS RAM."""

    def __init__(self, uc: unicorn.Uc, base: int, size: int, regions=None):
        self.uc, self.base, self.end = uc, base, base + size
        self.regions = regions     # [(lo, hi)]: when given, DMA may touch only these (a kernel's arrays)

    def _check(self, addr: int, n: int, what: str):
        if addr < self.base or addr + n > self.end:
            raise GemminiFault(f"DMA {what} of {n} bytes at 0x{addr:x} outside RAM "
                               f"[0x{self.base:x}, 0x{self.end:x})", field="dram_addr")
        if self.regions is not None and not any(lo <= addr and addr + n <= hi for lo, hi in self.regions):
            raise GemminiFault(f"DRAM {what} of {n} bytes at {addr:#x} is outside the kernel's arrays",
                               field="dram_addr")

    def read(self, addr: int, n: int) -> bytes:
        self._check(addr, n, "read")
        return bytes(self.uc.mem_read(addr, n))

    def write(self, addr: int, data) -> None:
        data = bytes(data)
        self._check(addr, len(data), "write")
        self.uc.mem_write(addr, data)


def instruction_words(code: bytes, start: int = 0):
    """(offset, length, word) of each instruction by linear decoding."""
    i, n = start, len(code)
    while i + 2 <= n:
        if code[i] & 3 == 3 and i + 4 <= n:
            yield i, 4, int.from_bytes(code[i:i + 4], "little")
            i += 4
        else:
            yield i, 2, int.from_bytes(code[i:i + 2], "little")
            i += 2


def muldiv_kind(word: int) -> int | None:
    """The M-extension instruction a 4-byte word is, as an index into CpuClock.muldiv's counts:
    0 a 64-bit multiply (mul, mulh, mulhsu, mulhu), 1 a 32-bit one (mulw), 2 a 64-bit divide or
    remainder, 3 a 32-bit one; None for any other instruction."""
    opcode = word & 0x7F
    if opcode not in (OPCODE_OP, OPCODE_OP_32) or word >> 25 != FUNCT7_MULDIV:
        return None
    return 2 * ((word >> 12) & 7 >= 4) + (opcode == OPCODE_OP_32)


def _is_fence(word: int) -> bool:
    return word & 0x7F == OPCODE_MISC_MEM and (word >> 12) & 7 == 0


def _counter_csr(word: int) -> str | None:
    """The counter CSR a csrr*/csrr*i instruction accesses (cycle, time, instret, mcycle, minstret)."""
    if word & 0x7F != OPCODE_SYSTEM or (word >> 12) & 7 in (0, 4):
        return None
    return COUNTER_CSRS.get(word >> 20)


class CpuClock:
    """The hart's cycle count: `cpi` cycles per retired instruction plus the cycles it waited
    on Gemmini (at a fence until every command finished, at a command until Gemmini's queue
    took it). Without a timing model Gemmini takes no time and only instructions count.
    cycle, time and the m-mode mcycle all read this clock (time ticks once per cycle). What
    this leaves out of Rocket's timing (stalls, RoCC replays, the command queues' slack) is
    listed in baco.sim.timing's docstring."""

    def __init__(self, run, timing=None):
        from baco.sim.timing import DEFAULT_CONSTANTS
        self.run, self.timing = run, timing
        k = timing.k if timing is not None else DEFAULT_CONSTANTS
        self.cpi = k.cpu_cycles_per_instruction
        # the cycles a multiply or divide (muldiv_kind's order) takes beyond the one it is counted
        # at: the 32-bit forms' iterative units run half the steps
        full = (k.cpu_mul_cycles, k.cpu_mul_cycles / 2, k.cpu_div_cycles, k.cpu_div_cycles / 2)
        self.muldiv_extra = tuple(max(c, self.cpi) - self.cpi for c in full)
        self.muldiv = [0, 0, 0, 0]      # retired M-extension instructions by muldiv_kind
        self.muldiv_cycles = 0.0        # and their cycles beyond one instruction's
        self.stall = 0.0
        self.offset = {"cycle": 0, "instret": 0}   # csrw mcycle/minstret

    def retire_muldiv(self, counts) -> None:
        """A basic block's M-extension instructions (by muldiv_kind) retired."""
        for i, n in enumerate(counts):
            self.muldiv[i] += n
            self.muldiv_cycles += n * self.muldiv_extra[i]

    def now(self) -> float:
        return self.run.instructions * self.cpi + self.stall + self.muldiv_cycles

    def wait_until(self, t: float) -> float:
        self.stall += max(0.0, t - self.now())
        return self.now()

    def read(self, csr: str) -> int:
        kind = "instret" if csr.endswith("instret") else "cycle"
        value = self.run.instructions if kind == "instret" else int(self.now())
        return (value + self.offset[kind]) & 0xFFFFFFFFFFFFFFFF

    def write(self, csr: str, value: int) -> None:
        kind = "instret" if csr.endswith("instret") else "cycle"
        self.offset[kind] += value - self.read(csr)


class _Loaded:
    """An ELF placed in unicorn RAM, with its custom words swapped for ecall."""

    def __init__(self, path: Path, uc: unicorn.Uc, mem_size: int):
        with open(path, "rb") as f:
            try:
                elf = ELFFile(f)
            except Exception as e:  # pyelftools raises several types for junk
                raise IssError(f"{path}: not an ELF file ({e})") from None
            if elf.get_machine_arch() != "RISC-V" or elf.elfclass != 64:
                raise IssError(f"{path}: not a 64-bit RISC-V ELF ({elf.get_machine_arch()}, "
                               f"ELF{elf.elfclass})")
            self.entry = elf.header["e_entry"]
            self.symbols = read_symbols(path)
            end = RAM_BASE + mem_size
            for seg in elf.iter_segments():
                if seg["p_type"] != "PT_LOAD" or seg["p_memsz"] == 0:
                    continue
                lo, hi = seg["p_paddr"], seg["p_paddr"] + seg["p_memsz"]
                if lo < RAM_BASE or hi > end:
                    raise IssError(f"{path}: segment [0x{lo:x}, 0x{hi:x}) outside RAM "
                                   f"[0x{RAM_BASE:x}, 0x{end:x}); raise mem_size")
                if seg["p_filesz"]:
                    uc.mem_write(lo, seg.data())
            # pc -> original word, for every custom-3 instruction, fence and counter CSR access.
            self.custom: dict[int, int] = {}
            self.code_sections: list[tuple[int, bytes]] = []
            for sec in elf.iter_sections():
                if not sec["sh_flags"] & SH_FLAGS.SHF_EXECINSTR or sec["sh_type"] != "SHT_PROGBITS":
                    continue
                base, code = sec["sh_addr"], sec.data()
                self.code_sections.append((base, code))
                for off, length, word in instruction_words(code):
                    if length == 4 and (word & 0x7F == OPCODE_CUSTOM3 or _is_fence(word)
                                        or _counter_csr(word)):
                        self.custom[base + off] = word
                        uc.mem_write(base + off, struct.pack("<I", ECALL))
        self.reads_counters = any(word & 0x7F == OPCODE_CUSTOM3 and split_insn(word)["funct"] == FUNCT_COUNTER
                                  for word in self.custom.values())
        for name in ("tohost", "fromhost"):
            if name not in self.symbols:
                raise IssError(f"{path}: no `{name}` symbol; link with toolchain/test.ld and "
                               "syscalls.c (the HTIF mailbox)")
        self.tohost, self.fromhost = self.symbols["tohost"], self.symbols["fromhost"]

    def instruction_ending_at(self, addr: int) -> tuple[int, int] | None:
        """(pc, original word) of the instruction that ends at addr."""
        for base, code in self.code_sections:
            if base < addr <= base + len(code):
                for off, length, word in instruction_words(code):
                    if base + off + length == addr:
                        return base + off, word
        return None


class _Run:
    """State of one run: hooks for HTIF, custom instructions, counting."""

    def __init__(self, uc, loaded: _Loaded, model, *, mem_size, max_instructions, timeout_s,
                 stdout, trace, trace_out, timing=None):
        self.uc, self.loaded, self.model, self.mem_size = uc, loaded, model, mem_size
        self.timing = timing
        self.clock = CpuClock(self, timing)
        self.max_instructions, self.timeout_s = max_instructions, timeout_s
        self.stdout, self.trace, self.trace_out = stdout, trace, trace_out
        self.instructions = 0
        self.gemmini_commands = 0
        self.console: list[str] = []
        self.exit_code: int | None = None
        self.error: str | None = None
        self.fault: GemminiFault | None = None
        self.block_sizes: dict[tuple, tuple] = {}   # (addr, size) -> _block_counts
        self.split: dict[int, dict] = {}     # custom instruction word -> its fields
        self.blocks_until_time_check = TIME_CHECK_BLOCKS
        self.deadline = 0.0
        uc.hook_add(unicorn.UC_HOOK_INTR, self._on_trap)
        uc.hook_add(unicorn.UC_HOOK_BLOCK, self._on_block)
        uc.hook_add(unicorn.UC_HOOK_MEM_WRITE, self._on_tohost, begin=loaded.tohost,
                    end=loaded.tohost + 7)
        uc.hook_add(unicorn.UC_HOOK_MEM_UNMAPPED, self._on_unmapped)
        if trace:
            uc.hook_add(unicorn.UC_HOOK_CODE, self._on_instruction)

    def stop(self, error: str):
        if self.error is None and self.exit_code is None:
            self.error = error
        self.uc.emu_stop()

    def pc(self) -> int:
        return self.uc.reg_read(rv.UC_RISCV_REG_PC)

    # ---- counting and limits ----------------------------------------------
    def _block_counts(self, addr: int, size: int) -> tuple[int, tuple]:
        """(instructions, the M-extension ones by muldiv_kind) of the basic block at addr."""
        code = bytes(self.uc.mem_read(addr, size))
        n, muldiv = 0, [0, 0, 0, 0]
        for _, length, word in instruction_words(code):
            n += 1
            kind = muldiv_kind(word) if length == 4 else None
            if kind is not None:
                muldiv[kind] += 1
        counts = self.block_sizes[(addr, size)] = (n, tuple(muldiv) if any(muldiv) else None)
        return counts

    def _on_block(self, uc, addr, size, _):
        n, muldiv = self.block_sizes.get((addr, size)) or self._block_counts(addr, size)
        self.instructions += n
        if muldiv is not None:
            self.clock.retire_muldiv(muldiv)
        if self.instructions > self.max_instructions:
            self.stop(f"instruction limit reached: more than {self.max_instructions} instructions "
                      f"executed (pc=0x{addr:x}); raise --max-instructions if the program is "
                      "expected to run longer")
        self.blocks_until_time_check -= 1
        if self.blocks_until_time_check <= 0:
            self.blocks_until_time_check = TIME_CHECK_BLOCKS
            if time.monotonic() > self.deadline:
                self.stop(f"time limit reached: still running after {self.timeout_s:g} s "
                          f"({self.instructions} instructions, pc=0x{addr:x}); raise --timeout "
                          "if the program is expected to run longer")

    def _on_instruction(self, uc, addr, size, _):
        word = int.from_bytes(uc.mem_read(addr, size), "little")
        original = self.loaded.custom.get(addr)
        if original is not None and original & 0x7F == OPCODE_CUSTOM3:
            f = split_insn(original)
            text = disassemble(f["funct"], uc.reg_read(_x(f["rs1"])), uc.reg_read(_x(f["rs2"])))
            print(f"0x{addr:08x}: {original:08x}  gemmini {text}", file=self.trace_out)
        else:
            shown = original if original is not None else word
            print(f"0x{addr:08x}: {shown:0{size * 2}x}", file=self.trace_out)

    # ---- traps: custom instructions and fences -----------------------------
    def _on_trap(self, uc, cause, _):
        try:
            self._serve_trap(uc, cause)
        except Exception as e:  # any failure must end the run, never escape into unicorn
            self.stop(f"internal error while serving the trap at pc=0x{self.pc():x}: "
                      f"{type(e).__name__}: {e}")

    def _serve_trap(self, uc, cause):
        pc_after = self.pc()
        if cause != CAUSE_ECALL_M:
            # unicorn reports every trap with the pc past the instruction.
            name = TRAP_NAMES.get(cause, "unknown")
            found = self.loaded.instruction_ending_at(pc_after)
            where = (f"pc=0x{found[0]:x} (word 0x{found[1]:0{8 if found[1] > 0xFFFF else 4}x})"
                     if found else f"the instruction before pc=0x{pc_after:x}")
            self.stop(f"trap: {name} (cause {cause}) at {where}")
            return
        pc = pc_after - 4
        word = self.loaded.custom.get(pc)
        if word is None:
            a7 = uc.reg_read(_x(17))
            self.stop(f"unexpected ecall at pc=0x{pc:x} (a7={a7}): bare-metal programs talk to the "
                      "host through tohost/fromhost, not ecall")
            return
        if _is_fence(word):
            self.model.fence()
            if self.timing is not None:
                self.timing.fence()
                self.clock.wait_until(self.timing.finish)
            return
        csr = _counter_csr(word)
        if csr is not None:
            self._access_csr(uc, pc, word, csr)
            return
        self._execute_custom(uc, pc, word)

    def _access_csr(self, uc, pc, word, csr):
        """csrrw/csrrs/csrrc (and the immediate forms) on a counter CSR, served by the clock."""
        funct3, rd, rs1 = (word >> 12) & 7, (word >> 7) & 31, (word >> 15) & 31
        old = self.clock.read(csr)
        operand = rs1 if funct3 & 4 else uc.reg_read(_x(rs1))
        op = funct3 & 3
        writes = op == 1 or rs1 != 0
        if writes:
            if not csr.startswith("m"):
                self.stop(f"trap: illegal instruction (write to the read-only CSR {csr}) at pc=0x{pc:x}")
                return
            new = operand if op == 1 else (old | operand) if op == 2 else (old & ~operand)
            self.clock.write(csr, new & 0xFFFFFFFFFFFFFFFF)
        if rd:
            uc.reg_write(_x(rd), old)

    def _execute_custom(self, uc, pc, word):
        f = self.split.get(word)
        if f is None:
            f = self.split[word] = split_insn(word)
        rs1 = uc.reg_read(_x(f["rs1"])) if f["xs1"] else 0
        rs2 = uc.reg_read(_x(f["rs2"])) if f["xs2"] else 0
        self.gemmini_commands += 1
        if self.timing is not None:
            now = self.clock.now()
            if f["funct"] != FUNCT_COUNTER:     # the counter op is served at once by the controller
                now = self.clock.wait_until(self.timing.accept_time(f["funct"]))
            self.timing.issue_time = now
        try:
            rd_value = self.model.execute(f["funct"], rs1, rs2, pc=pc)
        except GemminiFault as e:
            self.fault = e
            self.stop(f"Gemmini fault at pc=0x{pc:x}: {_describe_fault(e, f['funct'], rs1, rs2)}")
            return
        except IsaError as e:
            self.stop(f"bad Gemmini command at pc=0x{pc:x} (word 0x{word:08x}): {e}")
            return
        if f["xd"] and f["rd"]:
            uc.reg_write(_x(f["rd"]), (rd_value or 0) & 0xFFFFFFFFFFFFFFFF)

    # ---- HTIF ------------------------------------------------------------------
    def _on_tohost(self, uc, access, addr, size, value, _):
        try:
            self._serve_htif(uc, value & 0xFFFFFFFFFFFFFFFF)
        except Exception as e:
            self.stop(f"internal error while serving tohost=0x{value:x}: {type(e).__name__}: {e}")

    def _serve_htif(self, uc, value):
        if value == 0:
            return
        device, command, payload = value >> 56, (value >> 48) & 0xFF, value & ((1 << 48) - 1)
        if device == 1 and command == 1:  # the console device: one character
            self._write_console(bytes([payload & 0xFF]))
            self._answer(uc, None, (1 << 56) | (1 << 48))
            return
        if device != 0:
            self.stop(f"unsupported HTIF device {device} command {command} (tohost=0x{value:x})")
            return
        if payload & 1:
            self.exit_code = payload >> 1
            uc.emu_stop()
            return
        which, a0, a1, a2 = struct.unpack("<4Q", uc.mem_read(payload, 32))
        if which == SYS_write:
            data = bytes(uc.mem_read(a1, a2)) if a2 else b""
            if a0 in (1, 2):
                self._write_console(data)
            ret = len(data)
        elif which == SYS_exit:
            self.exit_code = a0 & 0xFFFFFFFF
            uc.emu_stop()
            return
        else:
            ret = -ENOSYS & 0xFFFFFFFFFFFFFFFF
        self._answer(uc, payload, 1, ret)

    def _answer(self, uc, magic_mem, fromhost, ret=None):
        if magic_mem is not None:
            uc.mem_write(magic_mem, struct.pack("<Q", ret))
        uc.mem_write(self.loaded.fromhost, struct.pack("<Q", fromhost))

    def _write_console(self, data: bytes):
        text = data.decode("utf-8", errors="replace")
        self.console.append(text)
        if self.stdout is not None:
            self.stdout.write(text)
            self.stdout.flush()

    def _on_unmapped(self, uc, access, addr, size, value, _):
        kind = {unicorn.UC_MEM_READ_UNMAPPED: "load from", unicorn.UC_MEM_WRITE_UNMAPPED: "store to",
                unicorn.UC_MEM_FETCH_UNMAPPED: "fetch from"}.get(access, "access to")
        self.stop(f"{kind} unmapped address 0x{addr:x} ({size} bytes) at pc=0x{self.pc():x}; RAM is "
                  f"[0x{RAM_BASE:x}, 0x{RAM_BASE + self.mem_size:x})")
        return False

    # ---- the run -----------------------------------------------------------------
    def run(self, entry: int) -> None:
        self.deadline = time.monotonic() + self.timeout_s
        pc = entry
        # Ctrl-C inside a unicorn hook would be swallowed by the callback: stop the
        # emulation instead and raise KeyboardInterrupt once it has returned.
        interrupted = []

        def on_sigint(signum, frame):
            interrupted.append(signum)
            self.uc.emu_stop()
        main_thread = threading.current_thread() is threading.main_thread()
        previous = signal.signal(signal.SIGINT, on_sigint) if main_thread else None
        try:
            self.uc.emu_start(pc, 0xFFFFFFFFFFFFFFFF)
        except unicorn.UcError as e:
            if self.error is None and self.exit_code is None:
                self.error = f"emulation stopped: {e} at pc=0x{self.pc():x}"
        finally:
            if main_thread:
                signal.signal(signal.SIGINT, previous)
        if interrupted:
            raise KeyboardInterrupt
        if self.error is None and self.exit_code is None:
            self.error = f"emulation stopped without an exit at pc=0x{self.pc():x}"


def _describe_fault(fault, funct, rs1, rs2) -> str:
    try:
        command = disassemble(funct, rs1, rs2)
    except Exception:
        command = f"funct={funct} rs1=0x{rs1:x} rs2=0x{rs2:x}"
    text = str(fault)
    return text if command in text else f"{text} [{command}]"


def attach_timing(model, timing) -> None:
    """Connect a cycle model to the functional model's command stream."""
    attach = getattr(timing, "attach", None)
    if attach is not None:
        attach(model)
    else:
        model.observers.append(getattr(timing, "observe", timing))


def run_elf(path, *, config: GemminiConfig = DEFAULT_CONFIG,
            max_instructions: int = DEFAULT_MAX_INSTRUCTIONS, timeout_s: float = DEFAULT_TIMEOUT_S,
            trace: bool = False, stdout: TextIO | None = ..., mem_size: int = DEFAULT_MEM_SIZE,
            timing=None, observers: tuple[Callable, ...] = (), trace_out: TextIO | None = None,
            inputs: dict[int, bytes] | None = None,
            dma_regions: list[tuple[int, int]] | None = None, counters_timed: bool = False) -> IssResult:
    """Run a bare-metal RISC-V ELF with a Gemmini functional model attached.

    Console output goes to `stdout` as it is produced (default: sys.stdout at
    call time; None: only collected in the result). `timing` is an object attached to the model's observers (a
    baco.sim.timing.TimingModel); `observers` are extra callables(name, fields,
    pc). `inputs` ({address: bytes}) are written into RAM after the ELF is loaded (a launch's
    table and arrays, baco.codegen.riscv). `dma_regions` ([(lo, hi)]) limits Gemmini's DMA to
    those address ranges, as the host JIT limits it to a kernel's arrays. `counters_timed`: a
    program that reads Gemmini's performance counters gets a cycle model (TimingModel(config))
    when `timing` is None, so its counters count (result.timing). A fault, a limit or a trap does
    not raise: the result has exit_code None and `error` says what happened (`fault` holds a GemminiFault)."""
    from baco.sim.functional import GemminiModel
    if stdout is ...:
        stdout = sys.stdout
    path = Path(path)
    uc = unicorn.Uc(unicorn.UC_ARCH_RISCV, unicorn.UC_MODE_RISCV64)
    uc.mem_map(RAM_BASE, mem_size)
    loaded = _Loaded(path, uc, mem_size)
    for addr, data in (inputs or {}).items():
        if addr < RAM_BASE or addr + len(data) > RAM_BASE + mem_size:
            raise IssError(f"input of {len(data)} bytes at 0x{addr:x} outside RAM "
                           f"[0x{RAM_BASE:x}, 0x{RAM_BASE + mem_size:x})")
        uc.mem_write(addr, data)
    model = GemminiModel(config, UnicornMemory(uc, RAM_BASE, mem_size, dma_regions))
    if timing is None and counters_timed and loaded.reads_counters:
        from baco.sim.timing import TimingModel
        timing = TimingModel(config)
    if timing is not None:
        attach_timing(model, timing)
    model.observers.extend(observers)
    run = _Run(uc, loaded, model, mem_size=mem_size, max_instructions=max_instructions, timeout_s=timeout_s,
               stdout=stdout, trace=trace, trace_out=trace_out or sys.stderr, timing=timing)
    start = time.perf_counter()
    run.run(loaded.entry)
    elapsed = time.perf_counter() - start
    stats = dict(getattr(model, "stats", {}) or {})
    return IssResult(exit_code=run.exit_code, instructions=run.instructions,
                     gemmini_commands=run.gemmini_commands, console="".join(run.console),
                     stats=stats, model=model, error=run.error, fault=run.fault, elapsed_s=elapsed, _uc=uc,
                     cpu_cycles=int(run.clock.now()), muldiv=tuple(run.clock.muldiv), timing=timing,
                     _symbols=loaded.symbols)
