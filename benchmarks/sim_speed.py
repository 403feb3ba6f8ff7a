"""Simulator speed, measured in one run:

  * Gemmini commands per second of the functional model alone (a WS matmul
    command stream: mvin A/B, preload, compute, mvout), and with the cycle
    model (baco.sim.timing) attached;
  * RISC-V instructions per second of the ISS on a compute-bound C program
    (no Gemmini commands), and the ISS running a LOOP_WS program;
  * the Gemmini commands per second of a large GEMM (matmul_kernel, default schedule, int8
    out: LOOP_WS programs) and of a 3x3 convolution (conv2d_kernel: LOOP_CONV_WS programs), each
    linked as a one-step program ELF (baco.codegen.program) and run on the ISS, as
    `baco sim OUT.elf [--timing]` runs a whole model: without and with the cycle model.
    Rates are per wall second and per CPU second of this process (the machine is shared);
  * with --network MODULE:CALLABLE, the Gemmini commands a whole network's convolution and linear
    layers issue with baco's conv/matmul kernels at their default schedules (each distinct layer's
    launch streamed through the cycle model without data: baco.kernels.conv.ConvLaunch.cycles),
    and what the program GEMM's rate with the cycle model makes of them: whether `baco sim
    --timing` runs the network in minutes. Residual adds, pooling and CPU operators are not
    counted.

    python benchmarks/sim_speed.py [--blocks 2000] [--n 64] [--gemm 512] [--conv 56 --conv-channels 64] [--smoke]
                                   [--network torchvision.models:resnet50 --input-shape 1,3,224,224]
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np

from baco.gemmini.config import DEFAULT_CONFIG
from baco.gemmini.isa import GARBAGE_ADDR, encode, local_addr, COMMANDS

ROOT = Path(__file__).resolve().parents[1]
DRAM_BASE = 0x80000000


def command_stream(blocks: int, dim: int):
    """(funct, rs1, rs2) of a weight-stationary matmul over `blocks` DIM×DIM blocks."""
    a_addr, b_addr, c_addr = DRAM_BASE, DRAM_BASE + 0x10000, DRAM_BASE + 0x20000

    def cmd(name, **fields):
        return (COMMANDS[name].funct, *encode(name, **fields))

    yield cmd("config_ex", dataflow=1, a_stride=1, c_stride=1, acc_scale=0x3F800000)
    yield cmd("config_ld", state_id=0, stride=dim, scale=0x3F800000, block_stride=dim)
    yield cmd("config_ld", state_id=1, stride=dim, scale=0x3F800000, block_stride=dim)
    yield cmd("config_st", stride=dim, acc_scale=0x3F800000)
    for i in range(blocks):
        yield cmd("mvin", dram_addr=a_addr, local_addr=0, cols=dim, rows=dim)
        yield cmd("mvin2", dram_addr=b_addr, local_addr=dim, cols=dim, rows=dim)
        yield cmd("preload", bd_addr=dim, bd_cols=dim, bd_rows=dim,
                  c_addr=local_addr(0, acc=True), c_cols=dim, c_rows=dim)
        yield cmd("compute_preloaded", a_addr=0, a_cols=dim, a_rows=dim,
                  bd_addr=GARBAGE_ADDR, bd_cols=dim, bd_rows=dim)
        yield cmd("mvout", dram_addr=c_addr, local_addr=local_addr(0, acc=True), cols=dim, rows=dim)


def model_speed(blocks: int, with_timing: bool):
    from baco.sim.functional import ArrayMemory, GemminiModel
    config = DEFAULT_CONFIG
    memory = ArrayMemory(DRAM_BASE, 1 << 20)
    rng = np.random.default_rng(0)
    memory.write(DRAM_BASE, rng.integers(-128, 128, 0x20000, dtype=np.int8).tobytes())
    model = GemminiModel(config, memory)
    timing = None
    if with_timing:
        from baco.sim.timing import TimingModel
        timing = TimingModel(config)
        timing.attach(model)
    stream = list(command_stream(blocks, config.dim))
    start = time.perf_counter()
    for funct, rs1, rs2 in stream:
        model.execute(funct, rs1, rs2)
    model.fence()
    elapsed = time.perf_counter() - start
    cycles = int(timing.cycles) if timing is not None else None
    return len(stream), elapsed, cycles


COMPUTE_BOUND = r"""
#include <stdint.h>
#include <stdio.h>
#define N NSIZE
static int32_t a[N][N], b[N][N], c[N][N];
int main(void) {
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) { a[i][j] = i - j; b[i][j] = i + 2 * j; }
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      int32_t s = 0;
      for (int k = 0; k < N; k++) s += a[i][k] * b[k][j];
      c[i][j] = s;
    }
  printf("c[1][2]=%d\n", c[1][2]);
  return 0;
}
"""


def iss_speed(n: int, workdir: Path):
    from baco.codegen.toolchain import compile_and_link
    from baco.sim.iss import run_elf
    src = workdir / "compute.c"
    src.write_text(textwrap.dedent(COMPUTE_BOUND).replace("NSIZE", str(n)))
    elf = compile_and_link([src], workdir / "compute.elf")
    res = run_elf(elf, stdout=None)
    if res.exit_code != 0:
        raise RuntimeError(f"compute-bound program failed: {res.error or res.console}")
    return res.instructions, res.elapsed_s


def iss_gemmini_speed(workdir: Path):
    from baco.codegen.toolchain import compile_and_link
    from baco.sim.iss import run_elf
    elf = compile_and_link([ROOT / "tests" / "c" / "loop_ws.c"], workdir / "loop_ws.elf",
                           include_dirs=[ROOT / "tests" / "c"])
    res = run_elf(elf, stdout=None)
    if res.exit_code != 0:
        raise RuntimeError(f"loop_ws program failed: {res.error or res.console}")
    return res


def gemm_program(n: int, workdir: Path):
    """A one-step program: C = A·B (n×n×n, int8 out) with matmul_kernel's default schedule."""
    import baco.language as bl
    from baco.codegen.program import Program, build_program_elf
    from baco.kernels.matmul import matmul_kernel, resolve_schedule
    s = resolve_schedule(shape=(n, n, n), config=DEFAULT_CONFIG, out_int8=True)
    rng = np.random.default_rng(0)
    p = Program(DEFAULT_CONFIG)
    a, c = p.input("a", np.int8, (n, n)), p.output("c", np.int8, (n, n))
    b = p.weights("b", rng.integers(-128, 128, (n, n), dtype=np.int8))
    p.launch("gemm", matmul_kernel, (bl.cdiv(n, s.block_m), bl.cdiv(n, s.block_n)),
             [a, b, c, n, n, n, n, 1, n, 1, n, 1, 0.001], outputs=[c], RELU=False, OUT_INT8=True, schedule=s)
    return build_program_elf(p, workdir / "gemm.elf", input=rng.integers(-128, 128, (n, n), dtype=np.int8))


def conv_program(hw: int, channels: int, workdir: Path):
    """A one-step program: a 3x3 stride-1 padded convolution (1 x hw x hw x channels -> channels,
    int8 out, ReLU) with conv2d_kernel's default schedule, i.e. LOOP_CONV_WS programs."""
    from baco.codegen.program import Program, build_program_elf
    from baco.kernels.conv import conv2d_launch
    rng = np.random.default_rng(0)
    x = rng.integers(-128, 128, (1, hw, hw, channels), dtype=np.int8)
    w = rng.integers(-128, 128, (3, 3, channels, channels), dtype=np.int8)
    launch = conv2d_launch(x, w, rng.integers(-1000, 1000, channels, dtype=np.int32), stride=1, padding=1,
                           scale=0.001, relu=True, out="int8")
    p = Program(DEFAULT_CONFIG)
    bufs = {id(x): p.input("x", np.int8, x.shape), id(launch.y): p.output("y", np.int8, launch.y.shape)}

    def buffer(v):
        """The program buffer of a launch's array (the weights and bias: read-only data)."""
        if not isinstance(v, np.ndarray):
            return v
        if id(v) not in bufs:
            bufs[id(v)] = p.weights(f"w{len(bufs)}", v)
        return bufs[id(v)]
    p.launch("conv", launch.kernel, launch.grid, [buffer(a) for a in launch.args], [bufs[id(launch.y)]],
             **{k: buffer(v) for k, v in launch.options.items()})
    return build_program_elf(p, workdir / "conv.elf", input=x)


def program_speed(build, with_timing: bool):
    """(commands Gemmini executed, wall s, CPU s) of one run of a program ELF on the ISS."""
    from baco.codegen.program import run_program
    wall, cpu = time.perf_counter(), time.process_time()
    run = run_program(build, timing=with_timing)
    return run.model_commands, time.perf_counter() - wall, time.process_time() - cpu


def network_commands(spec: str, input_shape):
    """(commands, MACs, Gemmini cycles, layers) of the network's conv and linear layers (a linear
    layer is a 1x1 convolution of a 1x1 image), each distinct layer launched once, times its count."""
    from baco.kernels.conv import conv2d_launch
    from baco.tuner.workloads import layers_from_model_spec
    commands = macs = cycles = layers = 0
    for layer in layers_from_model_spec(spec, input_shape):
        stride, pad = (layer.Hstride, layer.Wstride), ((layer.R - 1) // 2, (layer.S - 1) // 2)
        x = np.zeros((layer.N, layer.P * stride[0], layer.Q * stride[1], layer.C), np.int8)
        launch = conv2d_launch(x, np.zeros((layer.R, layer.S, layer.C, layer.K), np.int8), np.zeros(layer.K, np.int32),
                               stride=stride, padding=pad, dilation=(layer.Hdilation, layer.Wdilation), relu=True)
        if launch.y.shape[1:3] != (layer.P, layer.Q):
            raise ValueError(f"{layer.name}: the launch's output is {launch.y.shape[1:3]}, not {(layer.P, layer.Q)}")
        report = launch.cycles()
        commands += report["commands"] * layer.count
        cycles += report["cycles"] * layer.count
        macs += layer.macs * layer.count
        layers += layer.count
    return commands, macs, cycles, layers


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--blocks", type=int, default=2000, help="matmul blocks in the model-only stream")
    p.add_argument("--n", type=int, default=64, help="size of the ISS's compute-bound int32 matmul")
    p.add_argument("--gemm", type=int, default=512, help="M = N = K of the program-ELF GEMM")
    p.add_argument("--conv", type=int, default=56, help="image height and width of the program-ELF 3x3 conv")
    p.add_argument("--conv-channels", type=int, default=64, help="its input and output channels")
    p.add_argument("--network", metavar="MODULE:CALLABLE",
                   help="count a network's Gemmini commands, e.g. torchvision.models:resnet50")
    p.add_argument("--input-shape", default="1,3,224,224", help="the network's input shape")
    p.add_argument("--smoke", action="store_true", help="tiny sizes (for the test suite)")
    args = p.parse_args(argv)
    if args.smoke:
        args.blocks, args.n, args.gemm, args.conv, args.conv_channels = 20, 8, 32, 8, 16

    commands, elapsed, _ = model_speed(args.blocks, with_timing=False)
    base_rate = commands / elapsed
    print(f"functional model:           {commands} commands in {elapsed:.3f} s = {base_rate:,.0f} commands/s")
    commands, elapsed, cycles = model_speed(args.blocks, with_timing=True)
    print(f"functional + timing model:  {commands} commands in {elapsed:.3f} s = "
          f"{commands / elapsed:,.0f} commands/s ({base_rate / (commands / elapsed):.2f}x slower), "
          f"{cycles} cycles")

    with tempfile.TemporaryDirectory(prefix="baco-simspeed-") as tmp:
        instructions, elapsed = iss_speed(args.n, Path(tmp))
        print(f"ISS, compute-bound C:       {instructions} instructions in {elapsed:.3f} s = "
              f"{instructions / elapsed / 1e6:.2f} M instructions/s")
        res = iss_gemmini_speed(Path(tmp))
        print(f"ISS, LOOP_WS program:       {res.instructions} instructions, {res.gemmini_commands} Gemmini "
              f"commands in {res.elapsed_s:.3f} s")
        build = gemm_program(args.gemm, Path(tmp))
        for with_timing in (False, True):
            commands, wall, cpu = program_speed(build, with_timing)
            print(f"ISS, {args.gemm}^3 GEMM program{' + timing' if with_timing else ''}: {commands} commands in "
                  f"{wall:.2f} s = {commands / wall:,.0f} commands/s ({cpu:.2f} CPU s = {commands / cpu:,.0f}/s)")
        timed_rate = commands / cpu      # the last run: with the cycle model
        build = conv_program(args.conv, args.conv_channels, Path(tmp))
        for with_timing in (False, True):
            commands, wall, cpu = program_speed(build, with_timing)
            print(f"ISS, 3x3 conv {args.conv}x{args.conv}x{args.conv_channels} program (LOOP_CONV_WS)"
                  f"{' + timing' if with_timing else ''}: {commands} commands in {wall:.2f} s = "
                  f"{commands / wall:,.0f} commands/s ({cpu:.2f} CPU s = {commands / cpu:,.0f}/s)")
    if args.network:
        total, macs, cycles, layers = network_commands(args.network, [int(d) for d in args.input_shape.split(",")])
        print(f"{args.network} {args.input_shape}: {layers} conv/linear layers, {total:,} Gemmini commands "
              f"({macs / total:,.0f} MACs each), {cycles:,.0f} Gemmini cycles; at the timed program's "
              f"{timed_rate:,.0f} commands per CPU second: {total / timed_rate / 60:.1f} CPU minutes "
              f"on `baco sim --timing`")
    return 0


if __name__ == "__main__":
    sys.exit(main())
