"""`make demo`: the whole product in one run.

1. Co-explore: a small torch MLP's layers (torch.fx) → one Gemmini and one kernel schedule per
   layer, by gradient descent on the cost model (fixed steps and seed: the same design every run).
2. Compile: each layer's GEMM kernel (baco/kernels/matmul.py) for that Gemmini with its schedule,
   run on the host-JIT Gemmini model (`sim`) bit for bit against Gemmini's arithmetic; one layer
   also as a RISC-V ELF on the built-in ISS (`iss`).
3. Measure: the cycle model times every compiled kernel (predicted beside simulated cycles), and
   Gemmini-default (16×16, 256 KB, 64 KB) running the C library's tiling; the network EDP gain
   over the default, predicted and simulated. Every compiler stage's IR goes to ./ir_dump.
4. The whole model: the same torch MLP quantised (baco.compile_model, with the design's Gemmini
   and schedules) and linked into one self-checking bare-metal ELF (weights, input and the
   independent reference's output inside), run on the ISS with the cycle model: bit-exact, cycles
   per layer.
"""
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DUMP = ROOT / "ir_dump"


BATCH, SIZES = 64, (256, 512, 256, 64)


def mlp_layers():
    import torch
    from baco.model.zoo import mlp
    from baco.tuner.workloads import layers_from_torch
    return layers_from_torch(mlp(SIZES), torch.zeros(BATCH, SIZES[0]))


def whole_model(design) -> bool:
    """Step 4: the MLP as one quantised ELF on the ISS, with the design's Gemmini and schedules."""
    import tempfile
    import baco
    from baco.codegen.program import run_program
    from baco.model.zoo import mlp, seeded_inputs
    x = seeded_inputs((BATCH, SIZES[0]), 1)[0]
    compiled = baco.compile_model(mlp(SIZES), x, design=design)
    with tempfile.TemporaryDirectory(prefix="baco-demo-") as d:
        build = compiled.build_elf(Path(d) / "mlp.elf", x)
        run = run_program(build, timing=True)
    print(f"4. the whole MLP quantised (int8, scales from torch observers) as one ELF: {build.report()}")
    for name, cycles in run.step_cycles.items():
        print(f"     {name}: {cycles:,} cycles")
    print(f"   on the ISS with the cycle model: {'bit-exact' if run.passed else 'MISMATCH'} against the independent "
          f"reference, {run.total_cycles:,} cycles end to end, {run.gemmini_commands:,} RoCC commands")
    return run.passed


def main() -> int:
    from baco.design import check_design, format_report, run_gemm, summary
    from baco.tuner.emit import result_dict
    from baco.tuner.explore import coexplore
    t0 = time.perf_counter()
    layers = mlp_layers()
    print(f"1. co-explore a 3-layer MLP (batch {BATCH}, {'-'.join(map(str, SIZES))}) from torch.fx: "
          + ", ".join(f"{l.name} {l.P}x{l.K}x{l.C}" for l in layers))
    result = coexplore(layers, seed=0, steps=100, starts=4, progress=False, kicks=1)
    design = result_dict(layers, result)
    hw = design["hardware"]
    print(f"   chosen Gemmini: {hw['pe_dim']}x{hw['pe_dim']} array, scratchpad {hw['sp_kb']:g} KB, accumulator "
          f"{hw['acc_kb']:g} KB ({hw['area_mm2']:.2f} mm2); schedules (block_m, block_n, block_k):")
    for entry in design["layers"]:
        s = entry["schedule"]
        print(f"     {entry['name']}: {s['block_m']}, {s['block_n']}, {s['block_k']} {s['dataflow']}")
    print(f"   ({time.perf_counter() - t0:.0f} s)\n2./3. compile each kernel for this Gemmini, run on sim bit-exact, "
          "time on the cycle model; Gemmini-default runs the C library")
    os.environ["BACO_DUMP_IR"] = str(DUMP)      # set before the first compile: later launches reuse its kernels
    checks = check_design(design, progress=None)
    print("   " + format_report(design, checks).replace("\n", "\n   "))
    from baco.gemmini.config import GemminiConfig
    from baco.gemmini.schedule import GemmSchedule
    smallest = min(checks, key=lambda c: c.layer.macs)
    ok_iss, _, _ = run_gemm(smallest.layer.P, smallest.layer.K, smallest.layer.C,
                         GemminiConfig.from_dict(design["gemmini_config"]),
                         GemmSchedule.from_dict(design["layers"][checks.index(smallest)]["schedule"]), target="iss")
    print(f"   {smallest.name} as a RISC-V ELF on the ISS: {'bit-exact' if ok_iss else 'MISMATCH'} "
          f"(IR of every compiler stage: {DUMP}/, {len(list(DUMP.glob('*')))} files)")
    ok = summary(checks)["bit_exact"] and ok_iss and whole_model(design)
    print(f"demo {'passed' if ok else 'FAILED'} in {time.perf_counter() - t0:.0f} s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
