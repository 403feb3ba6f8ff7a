"""What the core executes per RoCC command: the GEMM kernel's explicit stream (or its LOOP_WS
program), an explicit conv's or the fused MLP chain's (--kernel) as a self-checking ELF on the ISS, every instruction of the kernel function counted by
address (the ISS's trace) and classed from the ELF's disassembly.

    python benchmarks/instruction_mix.py [--kernel gemm|conv|depthwise|chain|resadd] [--M 128 --N 256 --K 256] [--blocks 64/128/64]
                                         [--loop-ws] [--dim 16] [--conv SIZE,C,K,R,STRIDE,PADDING] [--smoke] [--listing N]

Printed: the kernel's instructions and RoCC commands, the program's end-to-end cycles, per class
(RoCC command, reload from the stack: spilled and loop-invariant values; store to the stack; field
packing and constants: or, shifts, li/lui; address and index arithmetic: add/sub/mv; compare and
select: bounds and guards; branch; mul; div/rem: delinearised flat loops and ceil-divisions) the
count, per command and share; then the code by how often it ran (a loop level: instructions run that
many times and the commands among them). The ISS runs with Gemmini's cycle model attached, so the
end-to-end cycles include the CPU's waits on Gemmini. The kernel runs under the default schedule for the shape
(--blocks: those blocks, double-buffered); the ELF checks its result bit for bit against numpy's
reference of Gemmini's arithmetic (exit 0 iff it matches). --kernel conv: a 3x3 conv of an 8x8
output, 32 -> 32 channels (or --conv's: e.g. 14,64,64,3,1,1 or a 7x7 stride-2 stem 16,3,64,7,2,3),
LOOP_CONV_WS off; depthwise: the depthwise conv of --conv's image, C channels, filter, stride and
padding; chain: the fused MLP chain 256x64 -> 128 -> 64 on a
Gemmini without mvout_spad (their default schedules; the GEMM options do not apply); resadd: the
fused GEMM + residual add of --M, --N, --K (--blocks BLOCK_M/BLOCK_N/BLOCK_K, else its default). Needs llvm-objdump or riscv64-unknown-elf-objdump. --smoke: 40x40x40. --listing N: the
kernel's code run at least N times, instruction by instruction with its count.
"""
import argparse
import collections
import io
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from baco.gemmini.config import GemminiConfig
from baco.gemmini.schedule import GemmSchedule, default_gemm_schedule
from baco.kernels.conv import conv2d_launch, reference_conv2d
from baco.kernels.depthwise import depthwise_launch, reference_depthwise_conv2d
from baco.kernels.fused import gemm_chain_launch
from baco.kernels.matmul import matmul_kernel, reference
from baco.sim.iss import run_elf
from baco.sim.timing import TimingModel

ROCC = "RoCC command"        # told by the ISS's trace (the disassembler does not know custom-3)
CLASSES = [  # (class, predicate on (mnemonic, operands)), first match wins
    ("reload from the stack", lambda op, args: op in ("ld", "lw", "c.ldsp") and "(sp)" in args),
    ("store to the stack", lambda op, args: op in ("sd", "sw", "c.sdsp") and "(sp)" in args),
    ("div/rem", lambda op, args: op.startswith(("div", "rem"))),
    ("mul", lambda op, args: op.startswith("mul")),
    ("branch", lambda op, args: op.startswith(("b", "j")) or op == "ret"),
    ("compare and select", lambda op, args: op.startswith(("slt", "seqz", "snez", "sgtz", "sltz", "xor", "neg",
                                                           "not", "and", "min", "max"))),
    ("field packing and constants", lambda op, args: op.startswith(("or", "sll", "srl", "sra", "li", "lui"))),
    ("address and index arithmetic", lambda op, args: op.startswith(("add", "sub", "mv", "auipc"))),
]


def disassembly(elf: Path, kernel: str) -> tuple[dict, range]:
    """{address: (mnemonic, operands)} of the ELF's code and the kernel function's address range."""
    tool = shutil.which("llvm-objdump") or shutil.which("riscv64-unknown-elf-objdump")
    if tool is None:
        raise SystemExit("instruction_mix: needs llvm-objdump or riscv64-unknown-elf-objdump on PATH")
    text = subprocess.run([tool, "-d", "--no-show-raw-insn", str(elf)], capture_output=True, text=True,
                          check=True).stdout
    symbols = sorted((int(a, 16), name) for a, name in re.findall(r"^([0-9a-f]+) <([^>]+)>:", text, re.M))
    starts = [a for a, name in symbols if not name.startswith(".L")]
    lo = next(a for a, name in symbols if name == kernel)
    hi = min((a for a in starts if a > lo), default=1 << 64)
    code = {}
    for addr, ins in re.findall(r"^\s*([0-9a-f]+):\s+(.*)$", text, re.M):
        op, *args = ins.split(None, 1)
        code[int(addr, 16)] = (op, args[0] if args else "")
    return code, range(lo, hi)


def classify(op: str, args: str) -> str:
    return next((name for name, match in CLASSES if match(op, args)), f"other ({op})")


def gemm(a, cfg):
    """(title, compiled kernel, grid, arguments, expected C) of the GEMM kernel under --blocks or the
    shape's default schedule, C from numpy's reference of Gemmini's arithmetic."""
    M, N, K = (40, 40, 40) if a.smoke else (a.M, a.N, a.K)
    s = default_gemm_schedule(M, N, K, cfg, False) if a.blocks is None else \
        GemmSchedule(*(int(b) for b in a.blocks.split("/")), double_buffer=True)
    rng = np.random.default_rng(M * 7 + N * 5 + K)
    x = rng.integers(-128, 128, (M, K), dtype=np.int8)
    w = rng.integers(-128, 128, (K, N), dtype=np.int8)
    args = [x, w, np.zeros((M, N), np.int32), M, N, K, K, 1, N, 1, N, 1, 1.0]
    grid = (-(-M // s.block_m), -(-N // s.block_n))
    ck = matmul_kernel.compile(*args, target="iss", config=cfg, RELU=False, OUT_INT8=False, schedule=s,
                               loop_ws=a.loop_ws, grid=grid)
    title = (f"GEMM {M}x{N}x{K} DIM {cfg.dim}, {'LOOP_WS' if a.loop_ws else 'explicit'}, schedule "
             f"{s.block_m}/{s.block_n}/{s.block_k} (double-buffered {s.double_buffer})")
    return title, ck, grid, args, reference(x, w, schedule=s)


def conv(a, cfg, depthwise=False):
    """The conv of --conv (default: a 3x3 conv of an 8x8 output, 32 -> 32 channels) or the
    depthwise conv of --conv's image, channels, filter, stride and padding, its default schedule,
    as an explicit stream (LOOP_CONV_WS off), the output from numpy's reference."""
    size, C, K, R, stride, pad = (int(v) for v in a.conv.split(","))
    rng = np.random.default_rng(3)
    x = rng.integers(-128, 128, (1, size, size, C), dtype=np.int8)
    w = rng.integers(-128, 128, (R, R, C) if depthwise else (R, R, C, K), dtype=np.int8)
    launch, reference_of = (depthwise_launch, reference_depthwise_conv2d) if depthwise else \
        (conv2d_launch, reference_conv2d)
    shape = dict(stride=stride, padding=pad, config=cfg, scale=1 / 256)
    launch = launch(x, w, **shape)
    ck = launch.compiled("iss", loop_ws=a.loop_ws)
    s = launch.schedule
    P = launch.y.shape[1]
    title = (f"{'depthwise ' if depthwise else ''}conv {R}x{R}/{stride} {P}x{P} {C}>{C if depthwise else K} DIM "
             f"{cfg.dim}, {'LOOP_CONV_WS where it fits' if a.loop_ws else 'explicit'}, schedule {s.rows}x{s.block_m}/{s.block_n}/{s.block_k}")
    return title, ck, launch.grid, launch.runtime_args(), reference_of(x, w, **shape)


def chain(a, cfg):
    """The fused MLP chain Y = (X·W1)·W2 (baco.kernels.fused), X 256x64, W1 64x128, W2 128x64,
    64-row programs, as its explicit stream (a Gemmini without mvout_spad), the output from numpy:
    each GEMM by the GEMM kernel's reference of Gemmini's arithmetic (int8 scaled outputs)."""
    rng = np.random.default_rng(4)
    x, w1, w2 = (rng.integers(-128, 128, shape, dtype=np.int8) for shape in ((256, 64), (64, 128), (128, 64)))
    launch = gemm_chain_launch(x, w1, None, w2, None, scale1=0.01, scale2=0.01, block_m=64, block_k=64, config=cfg)
    ck = launch.compiled("iss")
    hidden = reference(x, w1, out="int8", scale=0.01, config=cfg)
    expected = reference(hidden, w2, out="int8", scale=0.01, config=cfg)
    o = launch.options
    title = f"MLP chain 256x64x128x64 DIM {cfg.dim}, explicit, blocks {o['BLOCK_M']}/{o['BLOCK_K']}"
    return title, ck, launch.grid, launch.args, expected


def resadd(a, cfg):
    """The fused GEMM + residual add Y = g(f(X·W + b)·sa + R·sr) (baco.kernels.fused) of --M x --K ->
    --N under --blocks (BLOCK_M/BLOCK_N/BLOCK_K) or its default blocks, compiled for its shapes and
    grid as whole programs run it; the output from numpy: the GEMM kernel's reference of Gemmini's
    arithmetic, then the residual add's."""
    from baco.kernels.fused import gemm_resadd_launch
    from baco.kernels.resadd import reference as resadd_reference
    M, N, K = (40, 40, 40) if a.smoke else (a.M, a.N, a.K)
    rng = np.random.default_rng(M * 7 + N * 5 + K)
    x, w, r = (rng.integers(-128, 128, s, dtype=np.int8) for s in ((M, K), (K, N), (M, N)))
    b = rng.integers(-3000, 3000, N).astype(np.int32)
    s = None if a.blocks is None else GemmSchedule(*(int(v) for v in a.blocks.split("/")))
    kw = dict(scale=0.004, relu=True, a_scale=0.8, r_scale=1.3, out_scale=0.7, relu_out=False)
    launch = gemm_resadd_launch(x, w, b, r, schedule=s, config=cfg, **kw)
    hidden = reference(x, w, bias=b, out="int8", scale=kw["scale"], relu=True, config=cfg)
    o = launch.options
    title = (f"GEMM {M}x{K}->{N} + residual add DIM {cfg.dim}, explicit, blocks {o['BLOCK_M']}/{o['BLOCK_N']}/"
             f"{o['BLOCK_K']} (double-buffered {o['double_buffer']})")
    return title, launch.compiled("iss"), launch.grid, launch.args, resadd_reference(hidden, r, 0.8, 1.3, 0.7, relu=False)


BUILDERS = {"gemm": gemm, "conv": conv, "depthwise": lambda a, cfg: conv(a, cfg, depthwise=True), "chain": chain,
            "resadd": resadd}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kernel", choices=BUILDERS, default="gemm")
    p.add_argument("--M", type=int, default=128)
    p.add_argument("--N", type=int, default=256)
    p.add_argument("--K", type=int, default=256)
    p.add_argument("--dim", type=int, default=16)
    p.add_argument("--conv", default="10,32,32,3,1,0", metavar="SIZE,C,K,R,STRIDE,PADDING",
                   help="--kernel conv/depthwise: a SIZE x SIZE image of C channels, K output channels (conv), "
                        "an R x R filter (default 10,32,32,3,1,0)")
    p.add_argument("--loop-ws", action="store_true", help="the LOOP_WS (conv, depthwise: LOOP_CONV_WS) program "
                                                         "(default: the explicit stream)")
    p.add_argument("--blocks", help="BLOCK_M/BLOCK_N/BLOCK_K, double-buffered (default: the shape's default schedule)")
    p.add_argument("--smoke", action="store_true")
    p.add_argument("--listing", type=int, metavar="N", default=0,
                   help="also print the kernel's code run at least N times, each instruction with its count")
    a = p.parse_args(argv)
    cfg = GemminiConfig(dim=a.dim)
    title, ck, grid, args, expected = BUILDERS[a.kernel](a, cfg)
    with tempfile.TemporaryDirectory(prefix="baco-mix-") as tmp:
        elf = ck.build_elf(grid, args, Path(tmp) / "kernel.elf", expected={2: expected})
        trace = io.StringIO()
        res = run_elf(elf, config=cfg, trace=True, trace_out=trace, stdout=None, timing=TimingModel(cfg))
        code, kernel = disassembly(elf, ck.name)
    if res.exit_code != 0:
        print(f"{title}: the ELF's result differs from the reference (exit {res.exit_code})\n{res.console}")
        return 1
    runs, rocc = collections.Counter(), set()
    for line in trace.getvalue().splitlines():
        pc = int(line.split(":", 1)[0], 16)
        if pc in kernel:
            runs[pc] += 1
            if " gemmini " in line:
                rocc.add(pc)
    kind = {pc: ROCC if pc in rocc else classify(*code[pc]) for pc in runs}
    commands = res.gemmini_commands
    total = sum(runs.values())
    print(f"{title}: {total} kernel instructions, {commands} RoCC commands, {total / commands:.2f} a command "
          f"(bit-exact); end to end {res.cpu_cycles} cycles (the hart's cycle CSR, with the cycle model)")
    by_class = collections.Counter()
    for pc, n in runs.items():
        by_class[kind[pc]] += n
    print(f"{'class':32s} {'instructions':>12s} {'/command':>9s} {'share':>6s}")
    for name, n in by_class.most_common():
        print(f"{name:32s} {n:12d} {n / commands:9.2f} {100 * n / total:5.1f}%")
    levels = collections.defaultdict(lambda: [0, 0])     # times run -> [instructions, commands]
    for pc, n in runs.items():
        levels[n][0] += 1
        levels[n][1] += kind[pc] == ROCC
    print(f"\n{'times run':>9s} {'instructions':>12s} {'commands':>8s} {'executed':>9s}")
    for n, (ins, cmds) in sorted(levels.items(), key=lambda kv: -kv[0] * kv[1][0])[:12]:
        print(f"{n:9d} {ins:12d} {cmds:8d} {n * ins:9d}")
    if a.listing:
        print(f"\n{'address':>8s} {'runs':>6s}  code (run at least {a.listing} times)")
        for pc in sorted(pc for pc, n in runs.items() if n >= a.listing):
            print(f"{pc:8x} {runs[pc]:6d}  {'<RoCC>' if kind[pc] == ROCC else ''} {' '.join(code[pc])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
