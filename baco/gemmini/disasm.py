"""Gemmini commands in human form, from the one command table (pure: no ELF, no ISS;
the `baco disasm` tool that reads ELFs and runs them is baco.sim.disasm)."""
from __future__ import annotations

from baco.gemmini.isa import BY_FUNCT, disassemble, split_insn


def command_family(funct: int) -> str:
    """The command a funct selects; config's sub-command is in rs1, so all are listed."""
    cands = BY_FUNCT.get(funct)
    return "|".join(c.name for c in cands) if cands else f"<unknown funct {funct}>"


def decode_triples(values: list[str]) -> list[str]:
    if len(values) % 3:
        raise ValueError(f"expected (funct, rs1, rs2) triples, got {len(values)} values")
    nums = [int(v, 0) for v in values]
    return [disassemble(nums[i], nums[i + 1], nums[i + 2]) for i in range(0, len(nums), 3)]


def describe_word(word: int) -> str:
    """A custom-3 word statically: its command family and the registers it reads/writes."""
    w = split_insn(word)
    regs = [f"rs1=x{w['rs1']}" if w["xs1"] else "rs1=-", f"rs2=x{w['rs2']}" if w["xs2"] else "rs2=-"]
    if w["xd"]:
        regs.append(f"rd=x{w['rd']}")
    return f"{command_family(w['funct']):<24} " + " ".join(regs)
