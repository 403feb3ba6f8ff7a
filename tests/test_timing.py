"""The cycle model on small hand-made streams: DMA cost per row, load/compute
overlap, hazards through local rows, the 4-row floor, fences, utilization,
counters read through the counter command, mapping-driven programs."""
import pytest

from baco.gemmini.config import GemminiConfig
from baco.gemmini.isa import COMMANDS, GARBAGE_ADDR, encode, local_addr
from baco.sim.functional import ArrayMemory, GemminiModel
from baco.sim.programs import simulate_mapping
from baco.sim.timing import DEFAULT_CONSTANTS, EVENT_CODES, EVENTS, EXTERNAL_BASE, TimingModel

CONFIGS = [GemminiConfig.from_capacity(4, 16, 8), GemminiConfig(), GemminiConfig.from_capacity(32, 256, 64)]
K = DEFAULT_CONSTANTS


def mvin(row, rows, cols, dram=1):
    return "mvin", dict(dram_addr=dram, local_addr=row, rows=rows, cols=cols)


def pair(a_row, d, acc_row=0, weights=True, a_rows=None):
    a_rows = d if a_rows is None else a_rows
    return [("preload", dict(bd_addr=a_row if weights else GARBAGE_ADDR, bd_rows=d, bd_cols=d,
                             c_addr=local_addr(acc_row, acc=True), c_rows=a_rows, c_cols=d)),
            ("compute_preloaded" if weights else "compute_accumulated",
             dict(a_addr=a_row, a_rows=a_rows, a_cols=d, bd_addr=GARBAGE_ADDR, bd_rows=d, bd_cols=d))]


def run(cfg, stream):
    tm = TimingModel(cfg)
    for name, f in stream:
        tm.observe(name, f)
    tm.fence()
    return tm


@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: f"dim{c.dim}")
def test_mvin_cost_is_rows_times_beats_plus_latency(cfg):
    d = cfg.dim
    beats = max(1, -(-d // 16))
    tm = run(cfg, [mvin(0, d, d)])
    per_rows = K.dma_cmd_overhead + max(d * beats, -(-d // cfg.max_in_flight) * K.dram_latency)
    assert tm.cycles == 1 + per_rows + K.dram_latency
    assert tm.report()["dram_bytes_in"] == d * d


@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: f"dim{c.dim}")
def test_compute_waits_for_its_operands_but_overlaps_independent_loads(cfg):
    d = cfg.dim
    dependent = run(cfg, [mvin(0, d, d)] + pair(0, d))
    independent = run(cfg, [mvin(4 * d, d, d)] + pair(0, d))
    load_only = run(cfg, [mvin(0, d, d)])
    assert dependent.cycles > load_only.cycles           # RAW: compute after the load's data arrived
    assert independent.cycles < dependent.cycles         # no hazard: the array runs during the DMA
    assert independent.cycles <= load_only.cycles + 1 + d + K.compute_overhead + K.array_depth_factor * d


@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: f"dim{c.dim}")
def test_four_row_floor_and_weight_reuse(cfg):
    d = cfg.dim
    one_row = run(cfg, pair(0, d) + pair(0, d, weights=False, a_rows=1) * 20)
    four_rows = run(cfg, pair(0, d) + pair(0, d, weights=False, a_rows=4) * 20)
    assert one_row.report()["execute_busy"] == four_rows.report()["execute_busy"]   # floor of 4 rows
    reloading = run(cfg, pair(0, d) * 21)
    assert reloading.cycles >= one_row.cycles


@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: f"dim{c.dim}")
def test_utilization_bounds(cfg):
    d = cfg.dim
    stream = [mvin(i * d, d, d) for i in range(4)] + [x for i in range(64) for x in pair((i % 4) * d, d, i % 8 * d)]
    r = run(cfg, stream).report()
    assert 0 < r["utilization"] <= 1
    assert r["cycles"] >= r["macs"] / d ** 2
    assert r["macs"] == 64 * d ** 3


def test_reservation_station_limits_dispatch():
    cfg = GemminiConfig()
    many = run(cfg, [mvin(i * 16, 16, 16) for i in range(40)])
    assert many.report()["load_busy"] >= 40 * 16
    assert many.cycles >= many.report()["load_busy"]


def test_counter_command_reads_the_cycle_model():
    cfg = GemminiConfig()
    mem = ArrayMemory(0x80000000, 1 << 16)
    model = GemminiModel(cfg, mem)
    tm = TimingModel(cfg)
    tm.attach(model)

    def ex(name, **f):
        return model.execute(COMMANDS[name].funct, *encode(name, **f))

    rdma_bytes = EVENT_CODES["RDMA_BYTES_REC"] - EXTERNAL_BASE
    ex("counter", reset_counters=1, change_config=1, counter_index=0, event_id=rdma_bytes, external=1)
    ex("config_ld", stride=16, scale=0x3F800000, block_stride=16)
    ex("mvin", dram_addr=0x80000000, local_addr=0, rows=16, cols=16)
    ex("mvin", dram_addr=0x80000100, local_addr=16, rows=16, cols=16)
    assert ex("counter", counter_index=0) == 512
    tm.fence()          # (else the cycles the two mvins are still active after this would count)
    ex("counter", change_config=1, counter_index=1, event_id=EVENT_CODES["LOAD_ACTIVE_CYCLE"])
    assert ex("counter", counter_index=1) == 0                                       # counting from now
    ex("mvin", dram_addr=0x80000200, local_addr=32, rows=16, cols=16)
    tm.fence()
    assert ex("counter", counter_index=1) == tm.intervals["ld_active"][-1][1] - tm.intervals["ld_active"][-1][0]
    # an external value is not zeroed by configuring, only by a reset
    ex("counter", change_config=1, counter_index=2, event_id=rdma_bytes, external=1)
    assert ex("counter", counter_index=2) == 768
    ex("counter", reset_counters=1)
    assert [ex("counter", counter_index=i) for i in range(3)] == [0, 0, 0]
    # a snapshot holds while the counters go on
    ex("mvin", dram_addr=0x80000300, local_addr=48, rows=16, cols=16)
    assert ex("counter", counter_index=0, take_snapshot=1) == 256
    ex("mvin", dram_addr=0x80000400, local_addr=64, rows=16, cols=16)
    assert ex("counter", counter_index=0) == 256
    assert ex("counter", counter_index=0, reset_snapshot=1) == 512


def test_every_counter_event_is_defined_once_and_matches_the_c_header():
    """toolchain/include/gemmini_counter.h spells the same numbering as EVENTS."""
    import re
    from pathlib import Path
    header = (Path(__file__).parents[1] / "toolchain" / "include" / "gemmini_counter.h").read_text()
    defs = dict(re.findall(r"#define (\w+) (.+)", header))
    base = int(defs.pop("INCREMENTAL_COUNTERS"))
    defs.pop("DISABLE"), defs.pop("BACO_GEMMINI_COUNTER_H", None)
    codes = {n: eval(v, {"INCREMENTAL_COUNTERS": base}) for n, v in defs.items()}
    assert base == EXTERNAL_BASE and codes == EVENT_CODES and len(codes) == 51


def test_counter_events_of_a_loop_ws_kernel():
    """Every modelled event moves on a real kernel; the main-controller events partition time."""
    cfg = GemminiConfig.from_capacity(4, 16, 8)
    mem = ArrayMemory(0x80000000, 1 << 16)
    model = GemminiModel(cfg, mem)
    tm = TimingModel(cfg)
    tm.attach(model)
    ex = lambda name, **f: model.execute(COMMANDS[name].funct, *encode(name, **f))
    ex("config_ex", dataflow=1, acc_scale=0x3F800000, a_stride=1, c_stride=1)
    ex("config_st", stride=8, acc_scale=0x3F800000)
    for slot in range(3):
        ex("config_ld", stride=8, scale=0x3F800000, state_id=slot, block_stride=4)
    ex("loop_ws_config_bounds", max_i=2, max_j=2, max_k=2)
    ex("loop_ws_config_addrs_ab", a_addr=0x80000000, b_addr=0x80001000)
    ex("loop_ws_config_addrs_dc", d_addr=0, c_addr=0x80002000)
    ex("loop_ws_config_strides_ab", a_stride=8, b_stride=8)
    ex("loop_ws_config_strides_dc", d_stride=8, c_stride=8)
    ex("loop_ws")
    tm.fence()
    value = {name: tm.counter_value(code) for name, code in EVENT_CODES.items()}
    zero_kind = {EVENTS[c][0] for c in EVENTS if EVENTS[c][1] in ("zero", "level")}
    for name in ("LOAD_ACTIVE_CYCLE", "EXE_ACTIVE_CYCLE", "STORE_ACTIVE_CYCLE", "RDMA_ACTIVE_CYCLE",
                 "WDMA_ACTIVE_CYCLE", "RESERVATION_STATION_ACTIVE_CYCLES", "LOOP_MATMUL_ACTIVE_CYCLES",
                 "DMA_TLB_TOTAL_REQ", "RDMA_BYTES_REC", "WDMA_BYTES_SENT", "RDMA_TOTAL_LATENCY",
                 "WDMA_TOTAL_LATENCY", "D_GARBAGE_CYCLES"):
        assert value[name] > 0, name
    assert all(value[n] == 0 for n in zero_kind)
    main = sum(value[n] for n in value if n.startswith("MAIN_"))
    busy = _union_length([iv for u in ("ld", "st", "ex") for iv in tm.intervals[u]])
    assert main == pytest.approx(busy, abs=2)
    assert value["RDMA_BYTES_REC"] == tm.report()["dram_bytes_in"] == 2 * 8 * 8
    assert value["WDMA_BYTES_SENT"] == 8 * 8


@pytest.mark.parametrize("dataflow,a_t,b_t,short", [(1, 0, 0, True), (1, 1, 0, False), (1, 0, 1, False),
                                                     (0, 0, 0, False), (0, 1, 0, False)])
def test_compute_rows_follow_the_transposer_and_dataflow(dataflow, a_t, b_t, short):
    """A compute feeds only its A rows (at least 4) in WS when no operand goes through the
    transposer, DIM rows otherwise; in WS with B transposed a weight preload is split into an
    extra array pass (TransposePreloadUnroller, counter 44)."""
    cfg = GemminiConfig()
    d = cfg.dim
    tm = TimingModel(cfg)
    tm.observe("config_ex", dict(set_only_strides=0, dataflow=dataflow, a_transpose=a_t, b_transpose=b_t,
                                 a_stride=1, c_stride=1))
    a_rows = 5
    for i, name in enumerate(("compute_preloaded", "compute_accumulated")):
        tm.observe("preload", dict(bd_addr=0 if i == 0 else 0xFFFFFFFF, bd_rows=d, bd_cols=d,
                                   c_addr=0x80000000, c_rows=a_rows, c_cols=d))
        before = tm.busy["ex"]
        tm.observe(name, dict(a_addr=d, a_rows=a_rows, a_cols=d, bd_addr=0xFFFFFFFF, bd_rows=d, bd_cols=d))
        rows = tm.busy["ex"] - before - tm.k.compute_overhead
        unrolled = d if dataflow == 1 and b_t and i == 0 else 0
        # the first preload has no compute before it to share rows with: it feeds its DIM
        # weight rows alone (ExecuteController perform_single_preload); the second shares the
        # first compute's rows (perform_mul_pre)
        alone = d if i == 0 and not unrolled else 0
        assert rows == (a_rows if short else d) + unrolled + alone
    assert tm.counter_value(EVENT_CODES["TRANSPOSE_PRELOAD_UNROLLER_ACTIVE_CYCLES"]) == (d if dataflow and b_t else 0)


@pytest.mark.parametrize("a_stride,a_t,waits", [(1, 0, False), (3, 0, True), (1, 1, True)])
def test_compute_waits_for_the_rows_its_operand_reads(a_stride, a_t, waits):
    """A's rows are at a_addr + r·a_stride, and a transposed A reads its a_cols stored rows:
    a compute waits for an mvin still writing one of them, and only then."""
    cfg = GemminiConfig()
    d = cfg.dim
    tm = TimingModel(cfg)
    tm.observe("config_ex", dict(set_only_strides=0, dataflow=1, a_transpose=a_t, b_transpose=0,
                                 a_stride=a_stride, c_stride=1))
    tm.observe("mvin", dict(dram_addr=0x80000000, local_addr=10, rows=1, cols=d))      # row 10
    tm.observe("preload", dict(bd_addr=0xFFFFFFFF, bd_rows=d, bd_cols=d, c_addr=0x80000000, c_rows=4, c_cols=d))
    tm.observe("compute_preloaded", dict(a_addr=1, a_rows=4, a_cols=12, bd_addr=0xFFFFFFFF, bd_rows=d, bd_cols=d))
    # rows 1..4 untransposed with stride 1; 1, 4, 7, 10 with stride 3; 1..12 transposed
    assert (tm.waits["ex_hazard_wait"] > 0) == waits


@pytest.mark.parametrize("a_row,waits", [(16, False), (64, True), (0, True)])
def test_wide_mvin_writes_its_blocks_block_stride_rows_apart(a_row, waits):
    """A mvin of two DIM-wide blocks under config_ld's block_stride 4·DIM writes rows 0..DIM-1 and
    4·DIM..5·DIM-1 (LoopConv's weights and inputs): a compute reading rows between them does not
    wait for it, one reading either block does."""
    cfg = GemminiConfig()
    d = cfg.dim
    tm = TimingModel(cfg)
    tm.observe("config_ld", dict(state_id=0, shrink=0, block_stride=4 * d, stride=2 * d, scale=0, pixel_repeats=1))
    tm.observe("mvin", dict(dram_addr=0x80000000, local_addr=0, rows=d, cols=2 * d))
    tm.observe("preload", dict(bd_addr=0xFFFFFFFF, bd_rows=d, bd_cols=d, c_addr=0x80000000, c_rows=d, c_cols=d))
    tm.observe("compute_preloaded", dict(a_addr=a_row, a_rows=d, a_cols=d, bd_addr=0xFFFFFFFF, bd_rows=d, bd_cols=d))
    assert (tm.waits["ex_hazard_wait"] > 0) == waits


def _union_length(intervals):
    total, reach = 0.0, 0.0
    for s, e in sorted(intervals):
        total += max(0.0, e - max(s, reach))
        reach = max(reach, e)
    return total


def test_mapping_program_is_timed_and_extrapolated():
    cfg = GemminiConfig()
    layer = dict(R=1, S=1, P=256, Q=1, C=256, K=256, N=1)
    temporal = [{"P": 16}, {"C": 1}, {}, {"P": 16, "K": 16, "C": 16}]
    order = [("N", "P", "Q", "K", "C", "R", "S")] * 4
    exact, extrapolated = simulate_mapping(layer, temporal, 16, 16, order, cfg, lambda: TimingModel(cfg),
                                           command_budget=10 ** 9)
    approx, flag = simulate_mapping(layer, temporal, 16, 16, order, cfg, lambda: TimingModel(cfg),
                                    command_budget=2000)
    assert not extrapolated and flag
    assert exact >= 256 ** 3 / 256
    assert abs(approx - exact) / exact < 0.25


@pytest.mark.parametrize("loop_ws", [False, True])
@pytest.mark.parametrize("shape,block,dataflow", [
    ((17, 33, 65), None, "WS"), ((65, 17, 33), (32, 32, 16), "WS"), ((33, 1, 17), (48, 16, 32), "WS"),
    ((1, 65, 33), (16, 48, 16), "WS"), ((17, 33, 65), (32, 32, 32), "OS")])
def test_mac_counter_counts_the_useful_macs_on_ragged_blocks(shape, block, dataflow, loop_ws):
    """The MAC counter is M·N·K on ragged blocks: in WS the first K step into a one-column (or
    any narrow) strip writes whole DIM-wide accumulator rows (c_cols = DIM beside B's bd_cols
    columns), but only B's columns are products (the explicit 17x33x65 stream counted 40,545)."""
    import numpy as np
    import baco.language as bl
    from baco.kernels.matmul import matmul_kernel, resolve_schedule
    M, N, K = shape
    cfg = GemminiConfig()
    s = resolve_schedule(block=block, dataflow=dataflow, shape=shape, config=cfg)
    tm = TimingModel(cfg)
    a, b, c = np.ones((M, K), np.int8), np.ones((K, N), np.int8), np.zeros((M, N), np.int32)
    ck = matmul_kernel.compile(a, b, c, M, N, K, K, 1, N, 1, N, 1, 1.0, RELU=False, OUT_INT8=False, schedule=s,
                               config=cfg, loop_ws=loop_ws)
    ck.run((bl.cdiv(M, s.block_m), bl.cdiv(N, s.block_n)), [a, b, c, M, N, K, K, 1, N, 1, N, 1, 1.0],
           observers=[tm.observe])
    tm.fence()
    assert (c == K).all()
    assert tm.report()["macs"] == M * N * K
