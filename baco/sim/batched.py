"""A hardware loop's preload/compute pairs executed with numpy per run of pairs instead of per
command: the functional model's hot path (a 224x224 ResNet-50 unrolls millions of them).

A run qualifies when each of its commands would take the functional model's plainest path
(GemminiModel.do_preload / _compute): weight-stationary, no transposes, C stride 1 (A rows
config_ex's a_stride apart: a strided convolution's pixels), int8
inputs, A and the weights read from the scratchpad, no D operand, C written into the
accumulator. What it computes is then exactly what the commands one by one compute: every
product block A·W summed exactly (int8 products of DIM terms in float64), added into the
accumulator in int32 arithmetic (wrapping, so the order of the additions does not matter) or
written over it (in command order: the last write of an element wins, and the additions
after it count). Every check the commands would make (field sizes, address ranges) is made
first, before anything changes: a run that would fault, or that is not of that form, returns
False and the caller runs its commands one by one, which raises the same fault."""
from __future__ import annotations

import numpy as np

from baco.gemmini.isa import ACC_BIT, ACCUMULATE_BIT, is_garbage

ROW_MASK = 0x3FFFFFF
CHUNK = 4096          # pairs per numpy pass (bounds the temporary arrays)


def _local(addr, rows, limit, stride=1) -> int | None:
    """The first row of `rows` local rows `stride` apart inside memory `limit` rows, else None."""
    row = addr & ROW_MASK
    return row if row + (rows - 1) * stride + 1 <= limit else None


def plan_pairs(model, pairs):
    """(A rows, weight blocks, C targets) of the pairs [(preload fields, compute name, compute
    fields)], or None when a pair does not take the plain path or would fault. A row: (first
    row, rows, cols) or None (zeros); weight block per pair: an index into `blocks`, whose
    entry 0 is the weights the array holds now and the others (first row, rows, cols) or None;
    C target: (first row, rows, cols, accumulate) or None (not written)."""
    cfg = model.config
    d, sp_rows, acc_rows = cfg.dim, cfg.sp_rows, cfg.acc_rows
    if model.dataflow != 1 or model.a_transpose or model.b_transpose or model.c_stride != 1 or model.in_bits != 8:
        return None
    a_stride = model.a_stride
    a_rows_, blocks, w_of, targets = [], [None], [], []
    for pre, name, f in pairs:
        if max(pre["bd_rows"], pre["bd_cols"], pre["c_rows"], pre["c_cols"], f["a_rows"], f["a_cols"],
               f["bd_rows"], f["bd_cols"]) > d or not is_garbage(f["bd_addr"]):
            return None
        a, rows, cols = f["a_addr"], f["a_rows"], f["a_cols"]
        if is_garbage(a) or not rows or not cols:
            a_rows_.append(None)
        elif a & ACC_BIT or (row := _local(a, rows, sp_rows, a_stride)) is None:
            return None
        else:
            a_rows_.append((row, rows, cols))
        if name == "compute_preloaded":
            b, rows, cols = pre["bd_addr"], pre["bd_rows"], pre["bd_cols"]
            if is_garbage(b) or not rows or not cols:
                blocks.append(None)
            elif b & ACC_BIT or (row := _local(b, rows, sp_rows)) is None:
                return None
            else:
                blocks.append((row, rows, cols))
        w_of.append(len(blocks) - 1)
        c, rows, cols = pre["c_addr"], pre["c_rows"], pre["c_cols"]
        if is_garbage(c) or not rows or not cols:
            targets.append(None)
        elif not c & ACC_BIT or (row := _local(c, rows, acc_rows)) is None:
            return None
        else:
            targets.append((row, rows, cols, bool(c & ACCUMULATE_BIT)))
    return a_rows_, blocks, w_of, targets


def _gather(spad, ranges, d, stride=1):
    """(n, d, d) int64 blocks of the scratchpad: ranges (first row, rows, cols) of rows `stride`
    apart, or None (zeros)."""
    n = len(ranges)
    first = np.array([r[0] if r else 0 for r in ranges], dtype=np.int64)
    rows = np.array([r[1] if r else 0 for r in ranges], dtype=np.int64)
    cols = np.array([r[2] if r else 0 for r in ranges], dtype=np.int64)
    ar = np.arange(d)
    idx = np.minimum(first[:, None] + ar * stride, spad.shape[0] - 1)
    mask = (ar[None, :, None] < rows[:, None, None]) & (ar[None, None, :] < cols[:, None, None])
    return np.where(mask, spad[idx].astype(np.int64), 0).reshape(n, d, d)


def run_pairs(model, pairs) -> bool:
    """Execute the pairs on `model` as one numpy computation; False (nothing done) when
    plan_pairs rejects them."""
    plan = plan_pairs(model, pairs)
    if plan is None:
        return False
    a_ranges, blocks, w_of, targets = plan
    d = model.config.dim
    weights = np.concatenate([model.weights[None].astype(np.int64), _gather(model.spad, blocks[1:], d)]) \
        if len(blocks) > 1 else model.weights[None].astype(np.int64)
    acc = model.acc.reshape(-1)
    ar = np.arange(d)
    for lo in range(0, len(pairs), CHUNK):
        hi = min(len(pairs), lo + CHUNK)
        A = _gather(model.spad, a_ranges[lo:hi], d, model.a_stride).astype(np.float64)
        C = np.rint(np.matmul(A, weights[w_of[lo:hi]].astype(np.float64))).astype(np.int64)
        _write(acc, C, targets[lo:hi], d, ar)
    model.weights = weights[w_of[-1]].copy()
    model.preload = None
    for pre, name, _ in pairs:
        model.stats["preload"] = model.stats.get("preload", 0) + 1
        model.stats[name] = model.stats.get(name, 0) + 1
    return True


def _write(acc, C, targets, d, ar):
    """Write or add each C block into the flat accumulator, in command order: consecutive
    writes and consecutive additions are applied a group at a time."""
    start = 0
    while start < len(targets):
        kind = _kind(targets[start])
        end = start
        while end < len(targets) and _kind(targets[end]) == kind:
            end += 1
        if kind is not None:
            idx, vals = _elements(C[start:end], targets[start:end], d, ar)
            if kind:       # accumulate: int32 sums wrap, so one total per element
                sums = np.bincount(idx, weights=vals.astype(np.float64), minlength=acc.size)
                touched = np.unique(idx)
                acc[touched] = (acc[touched].astype(np.int64) + np.rint(sums[touched]).astype(np.int64)).astype(np.int32)
            else:          # overwrite: the last write of each element wins
                _, last = np.unique(idx[::-1], return_index=True)
                keep = len(idx) - 1 - last
                acc[idx[keep]] = vals[keep].astype(np.int32)
        start = end


def _kind(target):
    return None if target is None else target[3]


def _elements(C, targets, d, ar):
    """(flat accumulator indices, values) of the C blocks' written elements, in command order."""
    first = np.array([t[0] for t in targets], dtype=np.int64)
    rows = np.array([t[1] for t in targets], dtype=np.int64)
    cols = np.array([t[2] for t in targets], dtype=np.int64)
    mask = (ar[None, :, None] < rows[:, None, None]) & (ar[None, None, :] < cols[:, None, None])
    idx = (first[:, None, None] + ar[None, :, None]) * d + ar[None, None, :]
    return idx[mask], C[mask]
