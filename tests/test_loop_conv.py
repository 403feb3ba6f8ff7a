"""LOOP_CONV_WS expanded into LoopConv's command stream (baco.sim.loops.loop_conv_ws_commands)
against a compact numpy convolution, on a parametrized set of shapes and every flag, at
DIM 4, 16 and 32. The loops are configured the way the C library's tiled_conv / sp_tiled_conv
configures one tile (config_st and config_ex first, then funct 16–21 and 15)."""
from __future__ import annotations

import numpy as np
import pytest

from baco.gemmini.arith import acc_to_int8
from baco.gemmini.config import GemminiConfig
from baco.gemmini.isa import COMMANDS, encode
from baco.gemmini.isa import GemminiFault
from baco.sim.functional import ArrayMemory, GemminiModel

CONFIGS = {4: GemminiConfig.from_capacity(4, 16, 8), 16: GemminiConfig(), 32: GemminiConfig.from_capacity(32, 256, 128)}
F32_ONE = 0x3F800000
BASE = 0x80000000


def f32(x):
    return int(np.float32(x).view(np.uint32))


# ---- reference --------------------------------------------------------------------------------
def conv_reference(x, w, bias, *, stride=1, padding=0, kdil=1, input_dilated=False, wrot180=False,
                   pool=None, relu=False, scale=1.0, dw=False):
    """x: NHWC int8, w: [krow][kcol][ich][och] (dw: [ch][krow][kcol]), bias: int32 [och] or None.
    Returns the int8 NHWC output after activation, scale and max pooling (size, stride, pad;
    padding counts as zero)."""
    x = x.astype(np.int64)
    if input_dilated:
        n, h, wd, c = x.shape
        xd = np.zeros((n, 2 * h - 1, 2 * wd - 1, c), np.int64)
        xd[:, ::2, ::2] = x
        x = xd
    x = np.pad(x, ((0, 0), (padding, padding), (padding, padding), (0, 0)))
    if dw:
        k = w.shape[1]
        w = np.stack([np.stack([np.diag(w[:, kr, kc]) for kc in range(k)]) for kr in range(k)]).astype(np.int64)
    w = w.astype(np.int64)
    if wrot180:
        w = w[::-1, ::-1]
    k_r, k_c = w.shape[:2]
    orows = (x.shape[1] - (kdil * (k_r - 1) + 1)) // stride + 1
    ocols = (x.shape[2] - (kdil * (k_c - 1) + 1)) // stride + 1
    out = np.zeros((x.shape[0], orows, ocols, w.shape[3]), np.int64)
    for kr in range(k_r):
        for kc in range(k_c):
            win = x[:, kr * kdil:kr * kdil + (orows - 1) * stride + 1:stride,
                    kc * kdil:kc * kdil + (ocols - 1) * stride + 1:stride]
            out += win @ w[kr, kc]
    if bias is not None:
        out += bias
    y = acc_to_int8(out, scale, relu).astype(np.int64)
    if pool:
        size, pstride, ppad = pool
        yp = np.pad(y, ((0, 0), (ppad, ppad), (ppad, ppad), (0, 0)))
        pr = (y.shape[1] + 2 * ppad - size) // pstride + 1
        pc = (y.shape[2] + 2 * ppad - size) // pstride + 1
        y = np.stack([np.stack([yp[:, r * pstride:r * pstride + size, c * pstride:c * pstride + size].max(axis=(1, 2))
                                for c in range(pc)], 1) for r in range(pr)], 1)
    return y.astype(np.int8)


# ---- driving the model as tiled_conv does ----------------------------------------------------------
def _tile_dims(in_dim, k, stride, padding, kdil, dilated, pool):
    """Per-dimension loop fields of a tile covering the whole layer (sp_tiled_conv's arithmetic)."""
    dim_d = 2 * in_dim - 1 if dilated else in_dim
    dil_k = kdil * (k - 1) + 1
    out_dim = (dim_d + 2 * padding - dil_k) // stride + 1
    size, pstride, ppad = pool or (1, 1, 0)
    pool_out = (out_dim + 2 * ppad - size) // pstride + 1
    o0 = -ppad
    o_span = pool_out * pstride + size - 1
    p_lo, p_hi = max(0, -o0), max(0, o0 + o_span - out_dim)
    o = o_span - p_lo - p_hi
    i0 = (o0 + p_lo) * stride - padding
    i_span = o * stride + dil_k - 1
    return dict(out_dim=out_dim, pool_out=pool_out, plo=p_lo, phi=p_hi, o=o,
                lo=max(0, -i0), hi=max(0, i0 + i_span - dim_d))


def run_conv(cfg, x, w, bias, *, stride=1, padding=0, kdil=1, pool=None, relu=False, scale=1.0,
             no_bias=False, wrot180=False, downsample=False, input_dilated=False, trans_input_3120=False,
             trans_weight_1203=False, trans_weight_0132=False, trans_output_1203=False, dw=False,
             kch_tiles=1, max_pixels_per_row=1, model=None, spad_ids=(0, 0)):
    """Write the operands, issue the loop(s) and return (output NHWC int8, model)."""
    ib = cfg.input_bytes
    n, h, wd, ich = x.shape
    if dw:
        och, k = ich, w.shape[1]
    else:
        k, och = w.shape[0], w.shape[3]
    mem = ArrayMemory(BASE, 1 << 22)
    model = model or GemminiModel(cfg, mem)
    mem = model.memory
    rd, cd = (_tile_dims(h, k, stride, padding, kdil, input_dilated, pool),
              _tile_dims(wd, k, stride, padding, kdil, input_dilated, pool))
    out_shape = (n, rd["pool_out"], cd["pool_out"], och) if pool else (n, rd["out_dim"], cd["out_dim"], och)
    x_dram = x.transpose(3, 1, 2, 0) if trans_input_3120 else x
    if dw:
        w_dram = w
    elif trans_weight_1203:
        w_dram = w.transpose(2, 0, 1, 3)
    elif trans_weight_0132:
        w_dram = w.transpose(0, 1, 3, 2)
    else:
        w_dram = w
    in_addr, w_addr, b_addr, out_addr = BASE + 0x1000, BASE + 0x100000, BASE + 0x180000, BASE + 0x200000
    mem.write(in_addr, np.ascontiguousarray(x_dram, np.int8).tobytes())
    mem.write(w_addr, np.ascontiguousarray(w_dram, np.int8).tobytes())
    mem.write(b_addr, np.asarray(bias if bias is not None else np.zeros(och), np.int32).tobytes())
    mem.write(out_addr, bytes(int(np.prod(out_shape)) * ib))

    def issue(name, **fields):
        rs1, rs2 = encode(name, **fields)
        model.execute(COMMANDS[name].funct, rs1, rs2)

    st_stride = n * och if trans_output_1203 else och
    issue("config_st", stride=st_stride * ib, activation=int(relu), acc_scale=f32(scale))
    issue("config_ex", dataflow=1, a_stride=stride >> int(downsample), c_stride=2 if input_dilated else 1,
          a_transpose=int(trans_input_3120), b_transpose=int(trans_weight_0132), acc_scale=F32_ONE)
    size, pstride, ppad = pool or (1, 1, 0)
    channel_loops = range(ich) if dw else [None]
    for ch in channel_loops:
        kchs_all = 1 if dw else ich
        step = -(-kchs_all // kch_tiles)
        for kch0 in range(0, kchs_all, step):
            kchs = min(step, kchs_all - kch0)
            first, last = kch0 == 0, kch0 + kchs >= kchs_all
            if dw:
                i_off, w_off, o_off, b_off = ch, ch * k * k, ch, ch
            else:
                i_off = kch0 * h * wd * n if trans_input_3120 else kch0
                w_off = (kch0 * k * k * och if trans_weight_1203 else kch0 if trans_weight_0132 else kch0 * och)
                o_off = b_off = 0
            issue("loop_conv_ws_config_1", batch_size=n, in_row_dim=h, in_channels=ich, out_channels=och,
                  out_row_dim=rd["out_dim"], pool_out_row_dim=rd["pool_out"], out_col_dim=cd["out_dim"],
                  stride=stride, padding=padding)
            issue("loop_conv_ws_config_2", kernel_dim=k, pool_size=size, pool_stride=pstride, pool_padding=ppad,
                  pool_out_col_dim=cd["pool_out"], batches=n, porows=rd["pool_out"] if pool else rd["out_dim"],
                  pocols=cd["pool_out"] if pool else cd["out_dim"], pochs=1 if dw else och)
            issue("loop_conv_ws_config_3", krows=k, kcols=k, kchs=kchs, lpad=cd["lo"], in_col_dim=wd,
                  rpad=cd["hi"], upad=rd["lo"], dpad=rd["hi"], plpad=cd["plo"])
            issue("loop_conv_ws_config_4", kernel_dilation=kdil, prpad=cd["phi"], pupad=rd["plo"], pdpad=rd["phi"],
                  orows=rd["o"], ocols=cd["o"], in_stride=ich, weight_stride=och, out_stride=och)
            issue("loop_conv_ws_config_5", weights_addr=w_addr + w_off * ib,
                  output_addr=out_addr + o_off * ib if last else 0)
            issue("loop_conv_ws_config_6", bias_addr=b_addr + b_off * 4 if first else 0,
                  input_addr=in_addr + i_off * ib)
            issue("loop_conv_ws", no_bias=int(no_bias), wrot180=int(wrot180), trans_output_1203=int(trans_output_1203),
                  trans_weight_1203=int(trans_weight_1203), trans_weight_0132=int(trans_weight_0132),
                  trans_input_3120=int(trans_input_3120), dw=int(dw), max_pixels_per_row=max_pixels_per_row,
                  a_spad_id=spad_ids[0], b_spad_id=spad_ids[1],
                  no_pool=int(pool is None), downsample=int(downsample), input_dilated=int(input_dilated),
                  activation=int(relu))
    raw = np.frombuffer(mem.read(out_addr, int(np.prod(out_shape)) * ib), np.int8)
    if trans_output_1203:
        y = raw.reshape(out_shape[1], out_shape[2], n, och).transpose(2, 0, 1, 3)
    else:
        y = raw.reshape(out_shape)
    return y, model


def random_case(rng, n, h, wd, ich, och, k, dw=False):
    x = rng.integers(-128, 128, (n, h, wd, ich), dtype=np.int64).astype(np.int8)
    w = (rng.integers(-128, 128, (ich, k, k), dtype=np.int64) if dw else
         rng.integers(-128, 128, (k, k, ich, och), dtype=np.int64)).astype(np.int8)
    bias = rng.integers(-3000, 3000, och).astype(np.int32)
    return x, w, bias


def check(dim, shape, seed=0, dw=False, **kw):
    rng = np.random.default_rng(seed)
    x, w, bias = random_case(rng, *shape, dw=dw)
    ref_keys = ("stride", "padding", "kdil", "input_dilated", "wrot180", "pool", "relu", "scale")
    ref = conv_reference(x, w, None if kw.get("no_bias") else bias, dw=dw,
                         **{key: kw[key] for key in ref_keys if key in kw})
    got, model = run_conv(CONFIGS[dim], x, w, bias, dw=dw, **kw)
    np.testing.assert_array_equal(got, ref)
    return model


# shapes: (batch, in rows, in cols, in channels, out channels, kernel)
SHAPES = [(1, 5, 6, 3, 5, 3), (2, 4, 4, 17, 6, 1), (1, 5, 4, 33, 5, 3), (1, 7, 4, 1, 2, 2)]
CASES = [
    dict(),
    dict(stride=2, padding=1),
    dict(padding=2, kdil=2, relu=True, scale=0.25),
    dict(padding=1, pool=(2, 2, 0), relu=True, scale=0.5),
    dict(padding=1, pool=(3, 2, 1)),
    dict(padding=1, wrot180=True, no_bias=True),
    dict(padding=1, kch_tiles=2, relu=True, scale=0.125),
    dict(padding=1, trans_input_3120=True, trans_output_1203=True),
    dict(padding=1, trans_weight_1203=True, scale=0.5),
    dict(stride=2, padding=1, trans_weight_0132=True, wrot180=True),
    dict(padding=1, input_dilated=True, scale=0.5),
    dict(padding=1, spad_ids=(2, 1)),
]


@pytest.mark.parametrize("dim", [4, 16, 32])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_loop_conv_matches_reference(dim, case):
    for i, shape in enumerate(SHAPES):
        kw = dict(CASES[case])
        if kw.get("input_dilated") and shape[5] == 1:
            kw["padding"] = 0
        check(dim, shape, seed=100 * case + i, **kw)


@pytest.mark.parametrize("dim", [4, 16, 32])
def test_loop_conv_downsample(dim):
    for i, (n, h, wd, ich, och) in enumerate([(1, 6, 8, 3, 5), (2, 4, 4, 17, 20)]):
        check(dim, (n, h, wd, ich, och, 1), seed=i, stride=2, downsample=True, relu=True, scale=0.5)


@pytest.mark.parametrize("dim", [4, 16, 32])
def test_loop_conv_depthwise(dim):
    check(dim, (1, 5, 6, 5, 5, 3), seed=1, dw=True, padding=1, scale=0.25)
    check(dim, (2, 4, 4, 3, 3, 3), seed=2, dw=True, stride=2, padding=1, pool=(2, 2, 0))


@pytest.mark.parametrize("dim", [4, 16, 32])
def test_loop_conv_first_layer_pixels(dim):
    """max_pixels_per_row > 1: several input pixels packed into one array row (pixel_repeats)."""
    ich = 1 if dim == 4 else 3
    check(dim, (1, 6, 6, ich, 5, 3), seed=3, padding=1, max_pixels_per_row=min(3, dim // ich))


def test_loop_conv_accumulates_across_loops_and_rotates_halves():
    """A chain of loops with output 0 keeps its partial sums in one accumulator half; the loop
    that stores rotates to the other half, so back-to-back layers do not interfere."""
    model = check(4, (1, 5, 5, 9, 6, 3), seed=5, padding=1, kch_tiles=3)
    assert model.loop_conv.acc_half == 1
    check(4, (1, 4, 4, 3, 5, 3), seed=6, padding=1, kch_tiles=2)


def test_loop_conv_issues_real_commands():
    """The model runs LoopConv's commands: bias mvin3s, weight mvin2s, input mvins (padding from
    address 0), preload/compute pairs and mvouts, and the timing model sees them all."""
    from baco.sim.timing import TimingModel
    cfg = CONFIGS[16]
    model = GemminiModel(cfg, ArrayMemory(BASE, 1 << 22))
    tm = TimingModel(cfg)
    tm.attach(model)
    rng = np.random.default_rng(0)
    x, w, bias = random_case(rng, 1, 6, 6, 3, 18, 3)
    run_conv(cfg, x, w, bias, padding=1, model=model)
    s = model.stats
    # bias: 6 output rows × 2 och blocks (one DIM-wide accumulator block per mvin3); weights:
    # 9 (krow, kcol) × one mvin of all 18 och; inputs: 8 rows × (left pad, 6 pixels, right pad)
    assert s["mvin3"] == 6 * 2 and s["mvin2"] == 9 and s["mvin"] == 8 * 3
    assert s["preload"] == s["compute_preloaded"] + s["compute_accumulated"] == 2 * 9 * 6
    assert s["compute_preloaded"] == 2 * 9 and s["mvout"] == 6 * 2
    assert tm.report()["macs"] > 0 and tm.cycles > 0


@pytest.mark.parametrize("flags, field", [
    (dict(trans_weight_1203=True, trans_weight_0132=True), "trans_weight_0132"),
    (dict(trans_output_1203=True, pool=(2, 2, 0)), "trans_output_1203"),
    (dict(input_dilated=True, stride=2), "stride"),
    (dict(input_dilated=True, kdil=2), "kernel_dilation"),
    (dict(downsample=True), "downsample"),
    (dict(max_pixels_per_row=2, wrot180=True), "max_pixels_per_row"),
])
def test_loop_conv_illegal_combinations_fault(flags, field):
    rng = np.random.default_rng(0)
    x, w, bias = random_case(rng, 1, 6, 6, 3, 4, 3)
    with pytest.raises(GemminiFault) as e:
        run_conv(CONFIGS[4], x, w, bias, padding=1, **flags)
    assert e.value.field == field
    assert "loop_conv_ws" in e.value.command


def test_loop_conv_transposed_input_and_weights_fault():
    """trans_input_3120 with trans_weight_0132 would need A and B transposed at once (not in WS):
    the C library's config_ex already faults, and so does the loop on its own."""
    rng = np.random.default_rng(0)
    x, w, bias = random_case(rng, 1, 6, 6, 3, 4, 3)
    with pytest.raises(GemminiFault) as e:
        run_conv(CONFIGS[4], x, w, bias, padding=1, trans_input_3120=True, trans_weight_0132=True)
    assert e.value.field == "b_transpose"
    model = GemminiModel(CONFIGS[4], ArrayMemory(BASE, 1 << 16))
    for name, fields in (("loop_conv_ws_config_1", dict(batch_size=1, in_row_dim=4, in_channels=3, out_channels=4,
                                                       stride=1)),
                         ("loop_conv_ws_config_2", dict(kernel_dim=1, batches=1, porows=4, pocols=4, pochs=4)),
                         ("loop_conv_ws_config_3", dict(krows=1, kcols=1, kchs=3, in_col_dim=4)),
                         ("loop_conv_ws_config_4", dict(orows=4, ocols=4, in_stride=3, weight_stride=4, out_stride=4)),
                         ("loop_conv_ws", dict(trans_input_3120=1, trans_weight_0132=1, no_pool=1))):
        rs1, rs2 = encode(name, **fields)
        if name == "loop_conv_ws":
            with pytest.raises(GemminiFault) as e:
                model.execute(COMMANDS[name].funct, rs1, rs2)
            assert e.value.field == "trans_weight_0132"
        else:
            model.execute(COMMANDS[name].funct, rs1, rs2)
