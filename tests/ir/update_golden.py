"""Regenerate the golden IR tests: tests/ir/<pass>/<case>.mlir for every pass of the
pipeline. Each file is the pass's input IR (produced from a kernel by the stages before
it: this file's `gemm`, the two-accumulator `two_dots` of benchmarks/spike_check.py, the
chained-dot `fused_mlp_kernel` of examples/fused_mlp.py, the residual add of baco/kernels/resadd.py,
baco.kernels' `matmul_kernel` with a bias, `conv2d_kernel`, `depthwise_kernel` and the max-pooling `conv_pool_kernel`) with a RUN line and the CHECK lines of what the pass makes of it today:

    python tests/ir/update_golden.py        # then review `git diff tests/ir`

(or BACO_UPDATE_GOLDEN=1 pytest tests/test_golden_ir.py). Error paths are fixed inputs with
their expected message."""
from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parents[1]))

import numpy as np  # noqa: E402

import baco  # noqa: E402
import baco.language as bl  # noqa: E402
from baco.errors import CompilationError  # noqa: E402
from baco.gemmini.config import GemminiConfig  # noqa: E402
from baco.options import CompileOptions, full_grid  # noqa: E402
from baco.passes.pipeline import STAGES, run_pipeline  # noqa: E402


@baco.jit
def gemm(a_ptr, b_ptr, c_ptr, M, N, K, scale, BM: bl.constexpr, BN: bl.constexpr, BK: bl.constexpr,
         RAGGED: bl.constexpr, EPILOGUE: bl.constexpr):
    pm = bl.program_id(0)
    pn = bl.program_id(1)
    a = bl.make_block_ptr(a_ptr, shape=(M, K), strides=(K, 1), offsets=(pm * BM, 0), block_shape=(BM, BK))
    b = bl.make_block_ptr(b_ptr, shape=(K, N), strides=(N, 1), offsets=(0, pn * BN), block_shape=(BK, BN))
    acc = bl.zeros((BM, BN), dtype=bl.int32)
    for _ in range(bl.cdiv(K, BK)):
        if RAGGED:
            acc += bl.dot(bl.load(a, boundary_check=(0, 1)), bl.load(b, boundary_check=(0, 1)))
        else:
            acc += bl.dot(bl.load(a), bl.load(b))
        a = bl.advance(a, (0, BK))
        b = bl.advance(b, (BK, 0))
    c = bl.make_block_ptr(c_ptr, shape=(M, N), strides=(N, 1), offsets=(pm * BM, pn * BN), block_shape=(BM, BN))
    if EPILOGUE == "int32":
        bl.store(c, acc, boundary_check=(0, 1))
    elif EPILOGUE == "int8":
        bl.store(c, (acc * scale).to(bl.int8), boundary_check=(0, 1))
    else:
        bl.store(c, bl.relu(acc * scale).to(bl.int8), boundary_check=(0, 1))


def _load(relative: str, name: str):
    """A module of the repository by path (examples/ and benchmarks/ are not packages)."""
    spec = importlib.util.spec_from_file_location(name, ROOT.parents[1] / relative)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# the two-accumulator kernel benchmarks/spike_check.py runs on Spike, and the chained-dot MLP
two_dots = _load("benchmarks/spike_check.py", "spike_check").two_dots
fused_mlp_kernel = _load("examples/fused_mlp.py", "fused_mlp_example").fused_mlp_kernel
from baco.kernels.resadd import resadd_kernel  # noqa: E402  (block sums in the accumulator)
from baco.kernels.conv import conv2d_kernel  # noqa: E402  (bias, pointer arithmetic, min/max tap loops)
from baco.kernels.depthwise import depthwise_kernel  # noqa: E402  (channel blocks at constant offset 0)
from baco.kernels.matmul import matmul_kernel  # noqa: E402  (optional bias pointer)
from baco.kernels.pool import conv_pool_kernel  # noqa: E402  (bl.max_pool2d: pooled mvouts)

i8, i32 = (lambda *shape: np.zeros(shape, np.int8)), (lambda *shape: np.zeros(shape, np.int32))
GEMM = dict(a_ptr=i8(40, 70), b_ptr=i8(70, 50), M=40, N=50, K=70, scale=0.5)
TWO_DOTS = dict(a_ptr=i8(40, 70), b_ptr=i8(70, 50), d_ptr=i8(70, 50), c_ptr=i32(40, 50), e_ptr=i32(40, 50),
                M=40, N=50, K=70, BM=32, BN=16, BK=32)
MLP = dict(x_ptr=i8(40, 70), w1_ptr=i8(70, 30), w2_ptr=i8(30, 20), y_ptr=i8(40, 20), M=40, K=70, H=30, N=20,
           scale1=0.25, scale2=0.5, BLOCK_M=32, BLOCK_K=32, BLOCK_H=32, BLOCK_N=32)
MATMUL_BIAS = dict(a_ptr=i8(40, 70), b_ptr=i8(70, 50), c_ptr=i8(40, 50), M=40, N=50, K=70, stride_am=70,
                   stride_ak=1, stride_bk=50, stride_bn=1, stride_cm=50, stride_cn=1, scale=0.05, BLOCK_M=32,
                   BLOCK_N=16, BLOCK_K=32, RELU=True, OUT_INT8=True, bias_ptr=i32(50))
# 3x3 'same' convolution of a 9x9x20 image to 24 channels with bias (one image row per program)
CONV = dict(x_ptr=i8(9, 9, 20), w_ptr=i8(3, 3, 20, 24), y_ptr=i8(9, 9, 24), H=9, W=9, C=20, P=9, Q=9, K=24, R=3, S=3,
            stride_h=1, stride_w=1, pad_h=1, pad_w=1, dil_h=1, dil_w=1, scale=0.05, BLOCK_M=16, BLOCK_N=32,
            BLOCK_K=32, RELU=True, OUT_INT8=True, ROWS=1, WHOLE_C=False, WHOLE_K=False, bias_ptr=i32(24))
RESADD = dict(a_ptr=i8(40, 50), b_ptr=i8(40, 50), c_ptr=i8(40, 50), M=40, N=50, sa=0.5, sb=0.75, out_scale=1.0,
              BLOCK_M=32, BLOCK_N=32, RELU=True)
# 1x1 conv of a 6x5x8 image to 20 channels with bias, ReLU, 3x3/2 max-pool padded by 1 (2 pooled rows per program)
CONV_POOL = dict(x_ptr=i8(6, 5, 8), w_ptr=i8(8, 20), y_ptr=i8(3, 3, 20), H=6, W=5, C=8, K=20, PH=3, scale=0.05, PR=2,
                 ROWS=5, IMAGE_W=5, PW=3, BLOCK_N=16, BLOCK_K=16, POOL=3, POOL_STRIDE=2, POOL_PAD=1, RELU=True,
                 bias_ptr=i32(20))
# case -> (kernel, launch values, dataflow, double_buffer)
CASES = {
    "ws_ragged_int32": (gemm, dict(GEMM, c_ptr=i32(40, 50), BM=32, BN=16, BK=32, RAGGED=True, EPILOGUE="int32"),
                        "WS", False),
    "ws_exact_int8": (gemm, dict(GEMM, c_ptr=i8(40, 50), BM=16, BN=16, BK=64, RAGGED=False, EPILOGUE="int8"),
                      "WS", False),
    "os_ragged_relu_int8": (gemm, dict(GEMM, c_ptr=i8(40, 50), BM=16, BN=32, BK=16, RAGGED=True, EPILOGUE="relu8"),
                            "OS", False),
    "os_exact_int32": (gemm, dict(GEMM, c_ptr=i32(40, 50), BM=32, BN=32, BK=32, RAGGED=False, EPILOGUE="int32"),
                       "OS", False),
    "ws_ragged_int32_double_buffered": (gemm, dict(GEMM, c_ptr=i32(40, 50), BM=32, BN=16, BK=32, RAGGED=True,
                                                   EPILOGUE="int32"), "WS", True),
    "ws_two_accumulators": (two_dots, TWO_DOTS, "WS", False),
    "ws_two_accumulators_double_buffered": (two_dots, TWO_DOTS, "WS", True),
    "os_two_accumulators": (two_dots, TWO_DOTS, "OS", False),
    "ws_chained_dot": (fused_mlp_kernel, MLP, "WS", False),
    "ws_chained_dot_double_buffered": (fused_mlp_kernel, MLP, "WS", True),
    "ws_bias_relu_int8": (matmul_kernel, MATMUL_BIAS, "WS", False),
    "os_bias_int32": (matmul_kernel, dict(MATMUL_BIAS, c_ptr=i32(40, 50), RELU=False, OUT_INT8=False), "OS", False),
    "ws_conv2d_3x3_bias": (conv2d_kernel, CONV, "WS", False),
    # depthwise 3x3 stride 2 of 20 channels (two 16-channel blocks), three output rows a program
    "ws_depthwise_strided": (depthwise_kernel, dict(x_ptr=i8(9, 9, 20), w_ptr=i8(6, 3, 16, 16), y_ptr=i8(5, 5, 20),
                                                    H=9, W=9, C=20, P=5, Q=5, R=3, S=3, stride_h=2, stride_w=2,
                                                    pad_h=1, pad_w=1, dil_h=1, dil_w=1, scale=0.05, BLOCK_M=5,
                                                    BLOCK_N=16, BLOCK_K=16, RELU=True, OUT_INT8=True, ROWS=3, WHOLE_C=False,
                                                    bias_ptr=None),
                             "WS", False),
    # stride 2, three output rows a program (a 3-D input block pointer), no bias
    "ws_conv2d_strided_rows": (conv2d_kernel, dict(CONV, y_ptr=i8(5, 5, 24), P=5, Q=5, stride_h=2, stride_w=2,
                                                   BLOCK_M=5, ROWS=3, bias_ptr=None), "WS", False),
    # whole channel blocks (32 of 32 input and output channels): the channel dimensions unchecked, three rows
    "ws_conv2d_whole_channels": (conv2d_kernel, dict(CONV, x_ptr=i8(9, 9, 32), w_ptr=i8(3, 3, 32, 32),
                                                     y_ptr=i8(9, 9, 32), C=32, K=32, BLOCK_M=9, ROWS=3, WHOLE_C=True,
                                                     WHOLE_K=True, bias_ptr=i32(32)), "WS", False),
    "ws_resadd_relu_int8": (resadd_kernel, RESADD, "WS", False),
    "ws_conv_max_pool": (conv_pool_kernel, CONV_POOL, "WS", False),
}

# what each pass produces: the output lines kept as CHECK lines (in order)
PRODUCTS = {
    "baco-to-linalg": r"linalg\.|tensor\.pad|tensor\.extract_slice|bufferization\.|memref\.subview|func\.call",
    "bufferize": r"memref\.alloc|memref\.copy|linalg\.|memref\.subview",
    "gemmini-placement": r"gemmini\.",
    "chain-loop-ws": r"instgem\.|scf\.if|gemmini\.space",
    "loop-ws": r"instgem\.|scf\.if|gemmini\.space",
    "loop-conv-ws": r"instgem\.|scf\.if|gemmini\.space",
    "linalg-to-instgem": r"instgem\.",
    "config-elimination": r"instgem\.|call @baco_program_id",
    "instgem-to-llvm": r"llvm\.call|llvm\.func @",
}

# loop-ws's resident B (_Resident): a GEMV whose programs are one (split, ragged) K step keep B in
# fixed halves (and A, in a one-row grid); the CHECK lines follow the grid calls that decide it and
# every LOOP_WS and move
RESIDENT = ("ws_gemv_resident_b", dict(GEMM, b_ptr=i8(70, 1), N=1, c_ptr=i32(40, 1), BM=16, BN=16, BK=80,
                                              RAGGED=True, EPILOGUE="int32"))
RESIDENT_CHECKS = r'call @baco_(program_id|num_programs)|instgem\.(loop_ws"|loop_ws_config_addrs_ab|mvin)|scf\.(if|for)'


def write_resident() -> None:
    """tests/ir/loop-ws/<RESIDENT>.mlir: the pass's input and CHECK lines of its output."""
    name, values = RESIDENT
    placed = run_pipeline(case_ir(gemm, values), CompileOptions.of(loop_ws=False),
                          until="gemmini-placement").stage_ir["gemmini-placement"]
    out = run_pipeline(placed, CompileOptions.of(loop_ws=True), start="loop-ws", until="loop-ws").stage_ir["loop-ws"]
    header = ["// RUN: baco opt --pass loop-ws %s | FileCheck %s",
              f"// Generated by tests/ir/update_golden.py (write_resident) from the `gemm` kernel, case {name}."]
    write(ROOT / "loop-ws" / f"{name}.mlir", header + check_lines(out, "gemm", RESIDENT_CHECKS), placed)


def check_lines(out: str, kernel: str, checks: str) -> list[str]:
    """The CHECK-LABEL of `kernel`'s function and a CHECK of each line of `out` matching `checks`."""
    lines = []
    for ln in out.splitlines():
        if re.match(rf"\s*func\.func @{kernel}\(", ln):
            lines.append(f"// CHECK-LABEL: {check_line(ln)}")
        elif re.search(checks, ln):
            lines.append(f"// CHECK: {check_line(ln)}")
    return lines


# chain-loop-ws on a Gemmini with the ext-spad commands: gemm_chain_launch's program (ragged, and with
# specialized unit widths) as its layers' LOOP_WSs (scf.for over their tiles) under the run-time check, the original ops in the else
CHAIN_CONFIG = "mvout_spad.json"
CHAIN_CHECKS = r'call @baco_program_id|instgem\.|scf\.if|scf\.for|} else {'


def write_chain() -> None:
    """tests/ir/chain-loop-ws/ws_chain_*.mlir: the pass's input and CHECK lines of its output."""
    import json
    from dataclasses import replace

    from baco.kernels.fused import gemm_chain_kernel, gemm_chain_launch
    cfg = replace(GemminiConfig(dim=8), mvout_spad=True)
    (ROOT / "chain-loop-ws" / CHAIN_CONFIG).write_text(json.dumps(cfg.to_dict(), indent=1) + "\n")
    names = ["x_ptr", "w1_ptr", "y_ptr", "w2_ptr", "b1_ptr", "b2_ptr", "M", "K", "H", "N", "scale1", "scale2"]
    # ws_chain_specialized: the ISS's compile (specialize_shapes="iss"), its widths and grid constants
    for case, (M, K, H, N), shapes in (("ws_chain_ragged", (40, 70, 30, 20), False),
                                       ("ws_chain_unit_widths", (17, 1, 33, 1), False),
                                       ("ws_chain_specialized", (40, 70, 30, 20), True)):
        launch = gemm_chain_launch(i8(M, K), i8(K, H), None, i8(H, N), None, scale1=0.25, scale2=0.5, relu1=True,
                                   config=cfg)
        values = dict(zip(names, launch.args), **{k: v for k, v in launch.options.items() if k.isupper()})
        text = case_ir(gemm_chain_kernel, values, shapes, full_grid(launch.grid) if shapes else None)
        placed = run_pipeline(text, CompileOptions.of(config=cfg),
                              until="gemmini-placement").stage_ir["gemmini-placement"]
        out = run_pipeline(placed, CompileOptions.of(config=cfg), start="chain-loop-ws",
                           until="chain-loop-ws").stage_ir["chain-loop-ws"]
        header = [f"// RUN: baco opt --pass chain-loop-ws --config %S/{CHAIN_CONFIG} %s | FileCheck %s",
                  f"// Generated by tests/ir/update_golden.py (write_chain) from `gemm_chain_kernel`, case {case}."]
        write(ROOT / "chain-loop-ws" / f"{case}.mlir", header + check_lines(out, "gemm_chain_kernel", CHAIN_CHECKS),
              placed)


# error paths: (pass, file stem, input IR, options, expected message)
WRONG_STAGE = {
    "baco-to-linalg": "bufferize", "bufferize": "gemmini-placement", "gemmini-placement": "loop-ws",
    "chain-loop-ws": "config-elimination",
    "loop-ws": "config-elimination", "loop-conv-ws": "config-elimination", "linalg-to-instgem": "config-elimination", "config-elimination": "gemmini-placement",
    "instgem-to-llvm": "baco-to-linalg"}


def check_line(line: str) -> str:
    """An output line as a FileCheck pattern: SSA names and symbols-with-numbers are wildcards."""
    text = line.strip()
    text = text.replace("[[", "{{\\[\\[}}").replace("{{", "{{\\{\\{}}") if ("[[" in text or "{{" in text) else text
    return re.sub(r"%[A-Za-z0-9_.$#-]+", "%{{[A-Za-z0-9_.$#-]+}}", text)


def case_ir(kernel, values, shapes=False, grid=None):
    params, _, _ = kernel.specialize(values, shapes)
    return kernel.baco_ir(params, grid)


def options(dataflow, double_buffer=False):
    return (" --dataflow OS" if dataflow == "OS" else "") + (" --double-buffer" if double_buffer else "")


def write(path: Path, header: list[str], body: str):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(header) + "\n\n" + body.strip() + "\n")


def main() -> int:
    names = list(STAGES)
    stage_inputs = {}
    for case, (kernel, values, dataflow, double_buffer) in CASES.items():
        text = case_ir(kernel, values)
        # the stages after the hardware-loop passes (loop-ws, loop-conv-ws) take their input unchanged
        # (the explicit command stream they lower); their own expectations are what they make of it
        outputs = run_pipeline(text, CompileOptions.of(dataflow=dataflow, double_buffer=double_buffer,
                                                       loop_ws=False)).stage_ir
        rewritten = {loop: run_pipeline(outputs["gemmini-placement"], CompileOptions.of(
                         dataflow=dataflow, double_buffer=double_buffer, loop_ws=True), start=loop, until=loop).stage_ir[loop]
                     for loop in ("loop-ws", "loop-conv-ws")}
        for i, stage in enumerate(names):
            given = text if i == 0 else outputs[names[i - 1]]
            stage_inputs.setdefault(stage, given)
            header = [f"// RUN: baco opt --pass {stage}{options(dataflow, double_buffer)} %s | FileCheck %s",
                      f"// Generated by tests/ir/update_golden.py from the `{kernel.__name__}` kernel, case {case}."]
            for ln in rewritten.get(stage, outputs[stage]).splitlines():
                if re.match(rf"\s*(func\.func|llvm\.func) @{kernel.__name__}\(", ln):
                    header.append(f"// CHECK-LABEL: {check_line(ln)}")
                elif re.search(PRODUCTS[stage], ln):
                    header.append(f"// CHECK: {check_line(ln)}")
            write(ROOT / stage / f"{case}.mlir", header, given)
    for stage, wrong in WRONG_STAGE.items():
        header = [f"// RUN: not baco opt --pass {stage} %s 2>&1 | FileCheck %s",
                  f"// Input of stage {wrong}: the pass refuses it before running.",
                  f"// CHECK: baco opt: this IR is the input of stage '{wrong}', not the input of stage '{stage}'"]
        write(ROOT / stage / "error_wrong_stage.mlir", header, stage_inputs[wrong])
    # pass-specific errors
    big = case_ir(gemm, dict(GEMM, c_ptr=i32(40, 50), BM=128, BN=16, BK=32, RAGGED=True, EPILOGUE="int32"))
    placed_input = run_pipeline(big, until="bufferize").stage_ir["bufferize"]
    small = GemminiConfig.from_capacity(16, 8, 4)
    try:
        run_pipeline(placed_input, CompileOptions.of(config=small), start="gemmini-placement")
        raise SystemExit("error_capacity: the 128-row blocks unexpectedly fit")
    except CompilationError as e:
        message = e.message
    header = ["// RUN: not baco opt --pass gemmini-placement --dim 16 --sp-kb 8 --acc-kb 4 %s 2>&1 | FileCheck %s",
              "// 128x16 blocks on an 8 KiB scratchpad / 4 KiB accumulator: a located capacity error.",
              f"// CHECK: error: {message}"]
    write(ROOT / "gemmini-placement" / "error_capacity.mlir", header, placed_input)
    write_resident()
    write_chain()
    return 0


if __name__ == "__main__":
    sys.exit(main())
