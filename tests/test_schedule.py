"""The one capacity rule (baco.gemmini.schedule) against what the compiler's
placement really allocates for examples/matmul.py's kernel, and the
`schedule=` launch option."""
import importlib.util
import random
import re
from pathlib import Path

import numpy as np
import pytest

from baco.errors import CompilationError
from baco.gemmini.config import GemminiConfig
from baco.gemmini.schedule import (Footprint, GemmSchedule, block_rows, gemm_footprint,
                                   schedule_problems)
from baco.passes.pipeline import run_pipeline

ROOT = Path(__file__).resolve().parents[1]


def load_matmul():
    spec = importlib.util.spec_from_file_location("matmul_example", ROOT / "examples" / "matmul.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


mm = load_matmul()


def kernel_args(M, N, K, out_int8):
    a = np.zeros((M, K), np.int8)
    b = np.zeros((K, N), np.int8)
    c = np.zeros((M, N), np.int8 if out_int8 else np.int32)
    return [a, b, c, M, N, K, K, 1, N, 1, N, 1, 0.5 if out_int8 else 1.0]


def placed_rows(s: GemmSchedule, cfg, out_int8, M=100, N=70, K=300):
    """Footprint placement records for the kernel, or the CompilationError it raises."""
    k = mm.matmul_kernel
    values, options = k.bind(kernel_args(M, N, K, out_int8),
                             dict(RELU=out_int8, OUT_INT8=out_int8, schedule=s, config=cfg))
    params, _, _ = k.specialize(values)
    res = run_pipeline(k.baco_ir(params), options, until="gemmini-placement")
    text = res.stage_ir["gemmini-placement"]
    used = {name: int(re.search(rf"gemmini.{name}_rows_used = (\d+)", text).group(1)) for name in ("sp", "acc")}
    return Footprint(used["sp"], used["acc"])


def random_config(rng):
    dim = rng.choice([4, 8, 16, 32])
    sp_bank_rows = rng.choice([r for r in (16, 32, 64, 128, 256, 1024) if r % dim == 0 and r >= dim])
    acc_rows = 2 * dim * rng.choice([1, 2, 4, 8, 32])
    return GemminiConfig(dim=dim, sp_banks=rng.choice([1, 2, 4]), sp_bank_rows=sp_bank_rows,
                         acc_rows=acc_rows).validate()


def test_block_rows():
    assert block_rows(32, 64, 16) == 4 * 32
    assert block_rows(17, 1, 16) == 32
    assert block_rows(1, 17, 16) == 2 * 16
    assert block_rows(16, 16, 16) == 16


def test_schedule_dict_round_trip():
    s = GemmSchedule(48, 126, 80, "OS", True)
    assert GemmSchedule.from_dict(s.to_dict()) == s
    assert s.launch_options() == {"BLOCK_M": 48, "BLOCK_N": 126, "BLOCK_K": 80, "dataflow": "OS",
                                  "double_buffer": True}
    with pytest.raises(ValueError, match="unknown GemmSchedule fields"):
        GemmSchedule.from_dict({"block_m": 1, "block_n": 1, "block_k": 1, "order": "mnk"})


def test_problems_name_blocks_and_limits():
    cfg = GemminiConfig.from_capacity(64, 16, 64)   # issue E's tuned 33x1000x77 design
    probs = schedule_problems(GemmSchedule(48, 126, 80), cfg, out_int8=True)
    assert len(probs) == 1
    assert "A 48x80" in probs[0] and "B 80x126" in probs[0] and "need 384 rows" in probs[0]
    assert f"{cfg.sp_rows} rows" in probs[0]
    assert schedule_problems(GemmSchedule(0, 16, 16), cfg, False) == ["block_m=0 must be a positive integer"]
    assert "dataflow" in schedule_problems(GemmSchedule(16, 16, 16, "XS"), cfg, False)[0]


def test_placement_matches_footprint():
    """Random schedules on random small configs: placement uses exactly gemm_footprint's
    rows, and compiles iff schedule_problems is empty (a capacity error otherwise)."""
    rng = random.Random(0)
    fits = fails = 0
    for _ in range(40):
        cfg = random_config(rng)
        s = GemmSchedule(rng.randint(1, 80), rng.randint(1, 80), rng.randint(1, 130),
                         rng.choice(["WS", "OS"]), rng.random() < 0.5)
        out_int8 = rng.random() < 0.5
        problems = schedule_problems(s, cfg, out_int8)
        if problems:
            fails += 1
            with pytest.raises(CompilationError, match="do not fit the Gemmini"):
                placed_rows(s, cfg, out_int8)
        else:
            fits += 1
            assert placed_rows(s, cfg, out_int8) == gemm_footprint(s, cfg, out_int8), (s, cfg)
    assert fits and fails


def test_int8_output_needs_no_scratchpad_staging():
    cfg = GemminiConfig()
    s = GemmSchedule(64, 64, 64)
    assert placed_rows(s, cfg, True) == placed_rows(s, cfg, False) == gemm_footprint(s, cfg, True)


@pytest.mark.parametrize("target", ["sim", "iss"])
def test_schedule_launch_bit_exact(target):
    rng = np.random.default_rng(1)
    for (M, N, K), s, out in [((33, 17, 65), GemmSchedule(16, 32, 32, "WS", True), "int8"),
                              ((65, 40, 33), GemmSchedule(32, 16, 16, "OS", True), "int32"),
                              ((17, 65, 100), {"block_m": 32, "block_n": 48, "block_k": 64}, "int32")]:
        a = rng.integers(-128, 128, (M, K), dtype=np.int8)
        b = rng.integers(-128, 128, (K, N), dtype=np.int8)
        args = kernel_args(M, N, K, out == "int8")
        args[0], args[1] = a, b
        sched = s if isinstance(s, GemmSchedule) else GemmSchedule.from_dict(s)
        grid = (-(-M // sched.block_m), -(-N // sched.block_n))
        mm.matmul_kernel[grid](*args, RELU=False, OUT_INT8=out == "int8", schedule=s, target=target)
        ref = mm.reference(a, b, out=out, scale=args[-1], block=(sched.block_m, sched.block_n, sched.block_k),
                           dataflow=sched.dataflow)
        assert np.array_equal(args[2], ref), (M, N, K, s)


def test_schedule_contradiction_is_an_error():
    args = kernel_args(16, 16, 16, False)
    with pytest.raises(ValueError, match="contradicts"):
        mm.matmul_kernel[(1, 1)](*args, BLOCK_M=32, RELU=False, OUT_INT8=False,
                                 schedule=GemmSchedule(16, 16, 16))


def test_pipelined_schedules_bit_exact_on_ragged_shapes():
    """Double-buffered (prefetched loads, stores in the last K step, first K step
    overwriting the accumulator) and plain schedules agree with the reference on
    ragged shapes, including K smaller than one block and more columns than B has."""
    rng = random.Random(7)
    nrng = np.random.default_rng(7)
    for _ in range(8):
        M, N, K = (rng.choice([1, 5, 17, 33, 64, 65, 100]) for _ in range(3))
        s = GemmSchedule(rng.choice([16, 32, 48]), rng.choice([16, 32, 40]), rng.choice([16, 32, 64]),
                         rng.choice(["WS", "WS", "OS"]), rng.random() < 0.75)
        out = rng.choice(["int8", "int32"])
        relu = out == "int8" and rng.random() < 0.5
        a = nrng.integers(-128, 128, (M, K), dtype=np.int8)
        b = nrng.integers(-128, 128, (K, N), dtype=np.int8)
        c, _ = mm.matmul(a, b, out=out, scale=1 / 32, relu=relu, schedule=s)
        ref = mm.reference(a, b, out=out, scale=1 / 32, relu=relu, schedule=s)
        assert np.array_equal(c, ref), (M, N, K, s, out, relu)


@pytest.mark.parametrize("out", ["int32", "int8"])
def test_unstored_accumulator_tiles_are_not_zeroed(out):
    """A fused-store WS matmul whose accumulator only its store reads zeroes (by mvins from
    address 0) none of the column tiles past the stored columns, though B's extent leaves them
    unreached: those mvins would queue ahead of the next program's loads. Still bit-exact."""
    from baco.sim.timing import CommandStream
    rng = np.random.default_rng(3)
    M, N, K = 40, 37, 6                     # one ragged column block of 3 tiles in a 128-wide block
    a = rng.integers(-128, 128, (M, K), dtype=np.int8)
    b = rng.integers(-128, 128, (K, N), dtype=np.int8)
    s = GemmSchedule(48, 128, 32, "WS", True)
    c, _ = mm.matmul(a, b, out=out, scale=1 / 16, schedule=s)
    assert np.array_equal(c, mm.reference(a, b, out=out, scale=1 / 16, schedule=s))
    args = kernel_args(M, N, K, out == "int8")
    ck = mm.matmul_kernel.compile(*args, RELU=False, OUT_INT8=out == "int8", schedule=s, config=GemminiConfig())
    zero_mvins = []
    ck.run((1, 1), args, model=CommandStream(),
           observers=[lambda n, f, pc=None: zero_mvins.append(f) if n.startswith("mvin") and not f["dram_addr"]
                      else None])
    assert zero_mvins == []


def test_loop_unit_half_is_the_loop_capacity():
    """LOOP_WS's capacity rule and the loop units' halves are one definition: blocks filling a
    half fit, one more DIM row of C or of A does not."""
    from baco.gemmini.schedule import loop_unit_half, loop_ws_fits
    cfg = GemminiConfig.from_capacity(16, 256, 64)
    half = loop_unit_half(cfg)
    assert (half.sp_rows, half.acc_rows) == (cfg.sp_rows // 2, cfg.acc_rows // 2) == (8192, 512)
    assert loop_ws_fits(128, 64, 512, cfg)                 # C 8x4 tiles = 512 rows
    assert not loop_ws_fits(144, 64, 16, cfg)              # C 9x4 tiles = 576 rows
    assert loop_ws_fits(16, 16, 16 * 256, cfg) and not loop_ws_fits(16, 16, 16 * 257, cfg)   # A + B: 2 x 256 x 16 rows


def test_estimate_uses_the_cycle_models_constants():
    """The schedule estimate and the cycle model read one definition of the constants (baco.gemmini)."""
    from baco.gemmini import schedule, timing_constants
    from baco.sim import timing
    assert timing.TimingConstants is timing_constants.TimingConstants
    assert timing.DEFAULT_CONSTANTS is timing_constants.DEFAULT_CONSTANTS is schedule.DEFAULT_CONSTANTS


@pytest.mark.parametrize("M,N,K,dim", [(512, 512, 512, 16), (128, 256, 256, 16), (93, 116, 258, 16),
                                       (666, 340, 19, 16), (512, 512, 512, 32), (20, 1, 179, 32),
                                       (1523, 883, 12, 16)])
def test_default_schedule_emits_loop_ws_when_its_estimate_says(M, N, K, dim):
    """gemm_program_cycles' `loop_ws` is what the compiler does with the default schedule (the
    loop-ws pass fires exactly when the blocks fit the halves), and at DIM 16, where the explicit
    stream's ~12+ instructions per command outrun the array's 17-cycle computes, the default
    schedule is a LOOP_WS program."""
    from baco.gemmini.schedule import default_gemm_schedule, gemm_program_cycles
    cfg = GemminiConfig.from_capacity(dim, 256, 64)
    s = default_gemm_schedule(M, N, K, cfg)
    est = gemm_program_cycles(M, N, K, s, cfg)
    ck = mm.matmul_kernel.compile(*kernel_args(M, N, K, False), RELU=False, OUT_INT8=False, schedule=s, config=cfg)
    assert ("@baco.rocc.loop_ws(" in ck.llvm_ir) == est["loop_ws"]
    if dim == 16:
        assert est["loop_ws"]
    assert est["cycles"] >= max(est["gemmini"], est["cpu"]) > 0


def test_explicit_estimate_of_a_store_bound_program_covers_its_stores():
    """A small-K explicit program is store-bound: its Gemmini estimate is at least the cycle
    model's store unit busy time (each C tile's mvout pays the DMA and the accumulator read path)."""
    from baco.gemmini.schedule import gemm_program_cycles
    from baco.sim.timing import CommandStream, TimingModel
    M, N, K, cfg = 512, 128, 3, GemminiConfig.from_capacity(16, 256, 64)
    s = GemmSchedule(512, 32, 16, "WS", True)
    est = gemm_program_cycles(M, N, K, s, cfg)
    assert not est["loop_ws"]
    args = kernel_args(M, N, K, False)
    ck = mm.matmul_kernel.compile(*args, RELU=False, OUT_INT8=False, schedule=s, config=cfg)
    tm = TimingModel(cfg)
    ck.run((1, 4), args, model=CommandStream(), observers=[tm.observe])
    tm.fence()
    report = tm.report()
    assert report["store_busy"] <= est["gemmini"] <= report["cycles"]


@pytest.mark.parametrize("M,N,K,dim,blocks,bias,out_int8", [
    (512, 128, 3, 16, (256, 64, 16), True, True), (512, 128, 3, 16, (256, 64, 16), False, False),
    (300, 200, 12, 16, (128, 128, 16), False, False), (300, 200, 12, 32, (128, 128, 32), True, True),
    (200, 100, 300, 16, (128, 64, 96), True, True), (65, 65, 65, 16, (80, 80, 80), True, True)])
def test_explicit_estimate_tracks_the_cycle_model(M, N, K, dim, blocks, bias, out_int8):
    """The explicit stream's Gemmini estimate against the cycle model on store-bound, ragged and
    biased programs (benchmarks/explicit_gemm_iss.py's 44 programs: within 0.69-1.08x, median error
    4.0%; these within 0.97-1.06x): the edge programs priced as the blocks they hold, a bias's
    accumulator fill in series with the previous program's stores."""
    from baco.gemmini.schedule import explicit_gemm_program_cycles
    from baco.sim.timing import CommandStream, TimingModel
    cfg = GemminiConfig.from_capacity(dim, 256, 64)
    s = GemmSchedule(*blocks, "WS", True)
    args = kernel_args(M, N, K, out_int8)
    options = dict(RELU=False, OUT_INT8=out_int8, schedule=s, config=cfg, loop_ws=False)
    runtime = list(args)
    if bias:
        options["bias_ptr"] = np.zeros(N, np.int32)
        runtime.append(options["bias_ptr"])
    tm = TimingModel(cfg)
    mm.matmul_kernel.compile(*args, **options).run((-(-M // s.block_m), -(-N // s.block_n)), runtime,
                                                   model=CommandStream(), observers=[tm.observe])
    tm.fence()
    est = explicit_gemm_program_cycles(M, N, K, s, cfg, out_int8, bias=bias)
    assert est["gemmini"] / tm.report()["cycles"] == pytest.approx(1.0, abs=0.08)
    # the configs aside, and a ragged edge's extra moves (its programs issue up to 12% more)
    assert est["commands"] == pytest.approx(tm.stats["commands"], rel=0.15)


def test_loop_conv_fits_is_the_simulators_capacity_check():
    """schedule.loop_conv_fits (what the default conv schedule shrinks to) accepts exactly the
    programs whose LOOP_CONV_WS the simulator's LoopConv (sim.loops.conv_params) accepts."""
    from baco.gemmini.isa import GemminiFault
    from baco.gemmini.schedule import loop_conv_downsamples, loop_conv_fits
    from baco.sim.loops import LoopConvState, conv_params
    rng = random.Random(4)
    flags = dict(max_pixels_per_row=1, downsample=0, input_dilated=0, dw=0, trans_input_3120=0,
                 trans_weight_0132=0, trans_weight_1203=0, trans_output_1203=0, wrot180=0, no_pool=1)
    agree = {True: 0, False: 0}
    for _ in range(300):
        cfg = GemminiConfig.from_capacity(rng.choice([4, 16, 32]), rng.choice([16, 64, 256]), rng.choice([8, 64]))
        R, stride, dil = rng.choice([1, 3, 5, 7]), rng.choice([1, 2]), rng.choice([1, 2])
        P = Q = rng.randint(1, 40)
        C, K = rng.randint(1, 300), rng.randint(1, 300)
        rows = rng.randint(1, P)
        s = GemmSchedule(Q if rows > 1 else rng.randint(1, Q), rng.randint(1, 128), 16, rows=rows)
        st = LoopConvState()
        st.latch(dict(stride=stride, kernel_dim=R, batches=1, porows=rows, pocols=min(s.block_m, Q),
                      pochs=min(s.block_n, K), krows=R, kcols=R, kchs=C, orows=rows, ocols=min(s.block_m, Q),
                      kernel_dilation=dil, in_channels=C, out_channels=K))
        try:
            conv_params(cfg, st, dict(flags, downsample=int(loop_conv_downsamples(R, R, stride))))
            sim_fits = True
        except GemminiFault:
            sim_fits = False
        assert loop_conv_fits(s, P, Q, K, C, R, R, stride, dil, cfg) == sim_fits, (cfg, s, C, K, R, stride, dil)
        agree[sim_fits] += 1
    assert min(agree.values()) > 30
