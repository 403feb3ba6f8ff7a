"""The kernel generator (tests/kernel_generator.py): generated kernels, mutations and calls
of the shipped kernels each give their expected outcome (bit-exact against the generator's
own numpy model, a located CompilationError, an argument error naming the argument, a
located run-time error) compiled on sim, interpreted, and on the ISS for every tenth; each
case runs in a worker process with a time limit, so a hang or a crash fails the test. A
bounded sample by default, 600 cases (and 300 of the entry points: schedule=, autotune,
kernel.compile()) with -m slow; the seeds that found bugs run always."""
import numpy as np
import pytest

from tests import kernel_generator as kg

# seeds (one launch each of a kernel group of LAUNCHES_PER_KERNEL) covering every family
BOUNDED = [s for group in (36, 31, 3, 33, 57, 10) for s in range(group * kg.LAUNCHES_PER_KERNEL,
                                                                  group * kg.LAUNCHES_PER_KERNEL + 5)]
# widened seeds: constexpr-flag epilogues with an optional bias pointer, GEMV, the fused MLP, compile_model
BOUNDED += [100017, 100019, 100020, 100112, 100128, 100130, 100760, 100761, 100805]
# entry-point seeds: schedule= (valid, broken), @baco.autotune (valid, broken), kernel.compile() (valid, a broken
# compile, a broken run)
BOUNDED += [200001, 200002, 200008, 200010, 200016, 200018, 200021, 200036, 200040]

# seeds that found a bug (fixed), by what they found
REGRESSIONS = {
    16: "a constexpr NaN/inf scale was printed into the IR as `nan`/`inf` (invalid input IR)",
    40: "config=16 reached an AttributeError instead of a TypeError naming `config`",
    54: "conv2d(config=16) was an AttributeError (the shipped kernels took any config)",
    86: "resadd(block=(4096, 64)) was a CompilationError inside the kernel, not a ValueError naming block",
    164: "matmul(block=(512, 512, 256)) was a CompilationError inside the kernel, not a ValueError naming block",
    279: "matmul(relu=True, out='int32') silently skipped the ReLU",
    304: "`acc = acc + bl.dot(x, y)` was rejected (two accumulator blocks), unlike `acc += bl.dot(x, y)`",
    388: "matmul(schedule=...) over the accumulator's capacity: the same, for schedule",
    421: "a pooled store whose window folds to nothing (PM = OFF = 1) failed canonicalization, then "
         "crashed the LLVM translation (SIGSEGV)",
    464: "conv_pool(config=16): the same",
    1074: "matmul(out='int16') silently gave an int32 result",
    2038: "resadd(block=(16.5, 16)) was a RuntimeError from bl.cdiv",
    5330: "matmul(dataflow='XS', schedule=...) ignored the bad dataflow",
    6596: "matmul(block=(0, 16, 16), schedule=...) ignored the bad block",
    2595: "resadd(block=(16,)) was an unpacking ValueError that did not name block",
    3986: "resadd(relu='yes') ran as relu=True",
    5047: "conv_pool(stride=1.5) was a TypeError from range() that did not name stride",
    # the WS store stored the window's row tile i-1 after computing the block's row tile i, so a block
    # whose first valid rows lie two or more DIM-row tiles in stored tiles not yet computed (zeros)
    344: "a DIM 8 Gemmini, WS, a bias block and a row offset of -16 (BM = 32, the A block's first two DIM-row "
         "tiles outside the array): 18 of 46 elements wrong on sim (the interpreter was right)",
    345: "the same class (DIM 8, WS, BM = 32, a negative row offset two or more tiles deep)",
    349: "the same class",
    1406: "the same class",
    1642: "the same class",
    1729: "the same class",
    1731: "the same class",
    40692: "the generator's own: `bad = M / 2` with M = 1 (a compile-time constant) is a constant expression, "
           "no error; bad statements now use program ids",
    # widened seeds (examples' GEMV and fused-MLP wrappers, compile_model): arguments converted or unchecked
    102186: "gemv(out='int16') silently gave an int32 result",
    100923: "gemv(relu=True, out='int32') silently skipped the ReLU",
    100643: "gemv(block=(16,)) was an IndexError",
    101793: "gemv(block=(0, 16)) was a CompilationError inside the example's kernel, not a ValueError naming block",
    100136: "gemv(block=(4096, 4096)): the same, over the scratchpad's capacity",
    100938: "gemv(config=16) was an AttributeError",
    100113: "fused_mlp(scale1='0.5') ran, the string converted to a float",
    100952: "fused_mlp with w1 of K+1 rows for x of K columns ran, reading a mismatched weight",
    100625: "fused_mlp(block_k=-16) ran",
    100941: "fused_mlp(dataflow='XS') ran as WS",
    100939: "fused_mlp(block_m=0) was a ZeroDivisionError",
    101028: "fused_mlp(dataflow='OS', scale1=0.3) was a CompilationError inside the example's kernel, not a "
            "ValueError naming scale1",
    100926: "fused_mlp with a float32 x was a CompilationError inside the example's kernel",
    101031: "fused_mlp(scale2=None) was a TypeError from float() that did not name scale2",
    100386: "fused_mlp with a 1-D x was an unpacking ValueError that did not name x",
    103167: "matmul with a column-major b under OS was a CompilationError inside the shipped kernel, not a "
            "ValueError naming b",
    140640: "the generator's own expectation: a single-row b with an element stride of 2 (a non-contiguous view) "
            "is the column-major 1×N matrix the wrapper rejects under OS, not a result",
    150160: "the generator's own expectation: a K×N b (K > 1) with strides (2N, 2) is neither row- nor "
            "column-major, so the wrapper copies it row-major and OS runs it (a result, not b's ValueError)",
    162246: "the generator's own expectation: a bad bias beside a column-major b under OS is two bad "
            "arguments, and the wrapper's error may name either (it names b)",
    101480: "compile_model with an int32 example_input was a RuntimeError from torch",
    100857: "compile_model with a float64 example_input for a float32 model: the same",
    100756: "compile_model with an example_input of the wrong channel count: the same",
    100787: "compile_model(design=5) was a TypeError from pathlib that did not name design",
    100863: "compile_model(design={'layers': []}) was a KeyError after the capture and the calibration",
    # entry-point seeds (schedule=, autotune, kernel.compile()), each failing on the code before its fix
    200000: "autotune with an early_config_prune that keeps nothing: 'no autotune candidate runs: ' (an empty "
            "list), not naming the pruner",
    200001: "autotune(prune_configs_by={'top_k': ...}) with a negative, fractional > 1 or string top_k ran (it was "
            "converted or cut the list from the end)",
    201209: "autotune with a float64 a_ptr reported 'no autotune candidate runs' when every candidate was skipped "
            "for its blocks",
    201780: "autotune with a float64 a_ptr and an early_config_prune keeping nothing: the pruner's error hid the "
            "argument's",
    201205: "the generator's own: OS with a column-major B compiles where no dot runs (an empty constexpr loop)",
    200022: "kernel.compile() with M = 1 (a constant in the code), then ck.run with another M: silently wrong",
    200023: "ck.run with a float for an integer argument truncated it",
    200048: "ck.run with one argument too many ran (the extra one ignored)",
    200069: "ck.run with one argument too few was ctypes' 'this function takes at least 24 arguments'",
    200016: "ck.run with a list for an array was 'kernel array arguments must be C-contiguous numpy arrays', "
            "naming no argument",
    200066: "ck.run with an int16 bias where int32 was compiled was a Gemmini fault (a DRAM read outside the arrays)",
    200053: "kernel.compile(BM=2**62): MLIR's size arithmetic overflowed and aborted the process (SIGABRT)",
    200083: "the same (a block beyond any memory)",
    200059: "kernel.compile(BM=2**70): 'invalid input IR: integer constant out of range', located in the IR",
    200047: "schedule= with an unknown field: 'unknown GemmSchedule fields', naming no schedule",
    200075: "schedule= without block_k: a TypeError from GemmSchedule.__init__, naming no schedule",
    200992: "compile_model's error for `x * x[:, :1]` pointed at the start of the return statement, not at the `*`",
    5140: "a column-major B (order=(0, 1)) on a DIM 8 Gemmini, WS, with a row offset that leaves the A block's "
          "first 3 DIM-row tiles outside the array (OFF = -30, BM = 32): 34 elements of the output's second "
          "DIM-column tile wrong on sim and the ISS (the interpreter was right)",
    205288: "compile_model of a 1x1 conv padded by 1 (torch allows it) was a ValueError from the tuner's Layer "
            "(padding below the filter's extent only)",
}


def bad_runs(seeds, **kw):
    bad = []
    for answer in kg.run_isolated(seeds, **kw):
        bad += [(answer["seed"], answer["category"], *r) for r in answer["results"] if r[1] not in kg.GOOD]
    return bad


def test_generated_bounded():
    assert bad_runs(BOUNDED, timeout=240) == []


@pytest.mark.parametrize("seed", sorted(REGRESSIONS))
def test_generated_regression(seed):
    answer = kg.run_seed(seed)
    assert all(r[1] in kg.GOOD for r in answer["results"]), (REGRESSIONS[seed], answer)


@pytest.mark.slow
def test_generated_600():
    assert bad_runs(range(1000, 1600), timeout=240) == []


@pytest.mark.slow
def test_generated_entry_points_300():
    assert bad_runs(range(kg.ENTRY_POINTS + 5000, kg.ENTRY_POINTS + 5300), timeout=300) == []


def test_cases_are_reproducible_and_cover_the_language():
    """case(seed) is a function of the seed; over 1400 seeds the cases cover every builtin, every
    family and every expected outcome."""
    import baco.language as bl
    a, b = kg.case(1234), kg.case(1234)
    assert (a.source, a.expect, a.category) == (b.source, b.expect, b.category)
    cases = [kg.case(s) for s in range(1400)]
    text = " ".join(c.source for c in cases if c.source)
    for builtin in bl.__all__:
        if builtin not in ("int8", "int32", "float32", "constexpr"):
            assert f"bl.{builtin}(" in text, builtin
    for form in ("range(KLO, KHI, STEP)", "range(bl.cdiv(K, BK) - 1, -1, -1)", "range(max(0, KLO)",
                 "for k1 in range(2)", "a_ptr + R0", "strides=(0, 1)", "valid_rows=(LO, HI)", "S: bl.constexpr",
                 "acc = acc + bl.dot", "acc += bl.dot", "order=(0, 1)", "shape=(S, R, K)", "bl.dot(bl.load(a, boundary_check=(0, 1)), "
                 "bl.load(b, boundary_check=(0, 1)), acc)", "M // D"):
        assert form in text, form
    assert {c.expect for c in cases} == {"result", "compile", "launch", "runtime"}
    assert {c.category.split("-")[0] for c in cases} >= {"gemm", "pool", "chain", "sum", "slices", "shipped", "mutation"}
    assert {c.category for c in cases if c.category.startswith("shipped")} == {
        f"shipped-{k}" for k in ("matmul", "conv2d", "depthwise", "conv1d", "conv_pool", "resadd")}


def test_widened_cases_cover_the_new_forms():
    """Seeds from kg.WIDENED on add optional pointers, constexpr-flag epilogues, the GEMV and
    fused-MLP wrappers and compile_model (valid calls and every broken argument); seeds below
    keep their cases."""
    cases = [kg.case(s) for s in range(kg.WIDENED, kg.WIDENED + 1600)]
    text = " ".join(c.source for c in cases if c.source)
    for form in ("bias_ptr=None", "if bias_ptr is not None:", "if OUT8:", "if RELU:", "OUT8: bl.constexpr"):
        assert form in text, form
    categories = {(c.category, c.expect) for c in cases}
    for category in ("shipped-gemv", "shipped-fused_mlp", "model-mlp", "model-conv"):
        assert {(category, "result"), (category, "launch")} <= categories, category
    assert {("model-mlp", "compile"), ("model-conv", "compile")} <= categories     # layers without an operator
    assert any(c.meta.get("bias_ptr") is not None for c in cases if getattr(c, "meta", None))
    assert not any("bias_ptr=None" in (kg.case(s).source or "") or kg.case(s).category.startswith("model")
                   for s in range(400))


def test_entry_point_cases_cover_schedule_autotune_and_compile():
    """Seeds from kg.ENTRY_POINTS on launch widened gemm kernels through schedule=, @baco.autotune
    and kernel.compile() (every outcome of each, every kind of broken argument), and compile_model
    (its located errors include a broadcast multiply); seeds below keep their cases."""
    cases = [kg.case(s) for s in range(kg.ENTRY_POINTS, kg.ENTRY_POINTS + 1200)]
    outcomes = {(c.category, c.expect) for c in cases}
    assert {("schedule", "result"), ("schedule-launch", "launch"), ("schedule-capacity", "compile"),
            ("autotune", "result"), ("autotune-launch", "launch"), ("aot", "result"), ("aot-launch", "launch"),
            ("aot-compile", "compile"), ("aot-runtime", "runtime"), ("model-mlp", "compile")} <= outcomes, outcomes
    broken = {(c.category.split("-")[0], c.broken[0]) for c in cases if getattr(c, "broken", None)}
    assert {("schedule", k) for k in ("field", "unknown", "missing", "rows", "contradicts", "type", "names")} <= broken
    assert {("autotune", k) for k in ("config", "key", "top_k", "prune", "pruner", "passed", "argument", "flag")} <= broken
    assert {("aot", k) for k in ("missing", "unknown", "huge", "count", "dtype", "layout", "float", "list", "grid",
                                 "fixed")} <= broken
    schedules = [c.schedule for c in cases if c.category == "schedule"]
    assert {type(s).__name__ for s in schedules} == {"GemmSchedule", "dict", "tuple"}
    assert {1, 8, 24, 48} <= {s.block_m if hasattr(s, "block_m") else s["block_m"] if isinstance(s, dict) else s[0]
                              for s in schedules}
    tuned = [c.settings for c in cases if c.category.startswith("autotune")]
    assert {s["end_to_end"] for s in tuned} >= {False, True} and {s["cache_results"] for s in tuned} >= {False, True}
    prunes = [s["prune_configs_by"] for s in tuned if isinstance(s["prune_configs_by"], dict)]
    assert any("early_config_prune" in p for p in prunes) and {p.get("top_k") for p in prunes} >= {1, 2, 0.5}
    assert any(c.category == "autotune-launch" and c.names == ("candidate",) for c in cases)   # none compiles
    assert any(c.category.startswith("model") and c.expect == "compile" and c.match == "aten.mul" for c in cases)
    assert not any(kg.case(s).category.startswith(("schedule", "autotune", "aot")) for s in range(100000, 100400))


def test_checker_sees_wrong_results_and_bad_locations():
    """The classification is not vacuous: a reference off by one element is a wrong result; a
    compile error expected elsewhere is unlocated."""
    seed = next(s for s in range(16, 400) if kg.case(s).expect == "result" and kg.case(s).category == "gemm")
    c = kg.build(kg.case(seed))
    good = c.reference

    def off_by_one():
        expected = good()
        expected["c"].flat[0] += 1
        return expected
    c.reference = off_by_one
    assert kg.classify(c, "sim")[0] == "wrong result"
    seed = next(s for s in range(400) if kg.case(s).category == "mutation-compile")
    c = kg.build(kg.case(seed))
    assert kg.classify(c, "sim") == ("compile error", "")
    c.where = (c.where[0] + 1, c.where[1])
    assert kg.classify(c, "sim")[0] == "unlocated error"


def test_time_limit_makes_a_hang_an_outcome():
    (answer,) = kg.run_isolated([BOUNDED[0]], timeout=0.01)
    assert answer["results"] == [["-", "hang", "no answer in 0.01 s"]]


def test_reference_arithmetic():
    """The generator's own model of Gemmini's read-out: ReLU, float32 scale, half to even, NaN
    to 0, int8 saturation."""
    acc = np.array([5, -5, 3, 1 << 30, -(1 << 30), 7])
    assert kg.readout(acc, 0.5).tolist() == [2, -2, 2, 127, -128, 4]
    assert kg.readout(acc, 0.5, relu=True).tolist() == [2, 0, 2, 127, 0, 4]
    assert kg.readout(acc, float("nan")).tolist() == [0] * 6
    assert kg.readout(acc, float("inf")).tolist() == [127, -128, 127, 127, -128, 127]
    pooled, pc = kg.pool(np.arange(12).reshape(12, 1) - 6, 3, 4, 2, 2, 1, 1)
    assert pc == 3 and pooled[:, 0].tolist() == [0, 0, 0, 2, 4, 5]


def test_summarize_counts_chunks(tmp_path, capsys):
    """fuzz_report --summarize counts the cases of --jsonl files as a run prints them (a seed in two
    files once, its last run) and exits 1 when one is bad."""
    import json
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    import fuzz_report
    good = {"seed": 1, "category": "gemm", "expect": "result", "seconds": 2.0,
            "results": [["sim", "bit-exact", ""], ["interpreter", "bit-exact", ""]]}
    bad = dict(good, seed=2, results=[["sim", "wrong result", "c: 3 of 9 elements differ"]])
    (tmp_path / "a.jsonl").write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    (tmp_path / "b.jsonl").write_text(json.dumps(dict(bad, results=[["sim", "bit-exact", ""]])) + "\n")
    assert fuzz_report.main(["--summarize", str(tmp_path / "a.jsonl")]) == 1
    assert "BAD seed 2 [gemm, sim] wrong result" in capsys.readouterr().out
    assert fuzz_report.main(["--summarize", str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl")]) == 0
    out = capsys.readouterr().out
    assert "generated cases: 2" in out and "bad runs: 0" in out
    assert [line.split()[:3] for line in out.splitlines() if line.startswith("bit-exact")] == [["bit-exact", "3", "1"]]
