"""One bare-metal ELF for a whole program (baco.codegen.program): chained shipped-kernel launches
and a CPU call linked with their weights, run on the ISS, bit-exact against the same launches run
one by one on the host JIT model and against the kernels' numpy references."""
import os
from types import SimpleNamespace

import numpy as np
import pytest

import baco.language as bl
from baco.codegen.program import Program, ProgramDoesNotFit, build_program_elf, run_program
from baco.gemmini.config import GemminiConfig
from baco.gemmini.isa import GemminiFault
from baco.gemmini.schedule import GemmSchedule
from baco.kernels.conv import conv2d_launch, reference_conv2d
from baco.kernels.matmul import matmul_kernel, reference as matmul_reference
from baco.sim.elfinfo import read_symbols

SCHEDULE = GemmSchedule(32, 32, 64)
SCALE = 0.02
CONV = dict(stride=2, padding=1, scale=0.01, relu=True, out="int8")


def gemm(program, name, a, w, c, relu):
    """c = a·w on Gemmini (int8 out), matmul_kernel with SCHEDULE."""
    m, k = a.shape
    n = w.shape[1]
    return program.launch(name, matmul_kernel, (bl.cdiv(m, 32), bl.cdiv(n, 32)),
                          [a, w, c, m, n, k, k, 1, n, 1, n, 1, SCALE], outputs=[c],
                          RELU=relu, OUT_INT8=True, schedule=SCHEDULE)


def gemm_reference(a, w, relu):
    return matmul_reference(a, w, out="int8", scale=SCALE, relu=relu, schedule=SCHEDULE)


def gemm_on_sim(a, w, relu):
    m, k = a.shape
    n = w.shape[1]
    c = np.zeros((m, n), np.int8)
    matmul_kernel[(bl.cdiv(m, 32), bl.cdiv(n, 32))](a, w, c, m, n, k, k, 1, n, 1, n, 1, SCALE, RELU=relu,
                                                   OUT_INT8=True, schedule=SCHEDULE, target="sim")
    return c


@pytest.fixture(scope="module")
def chain(tmp_path_factory):
    """conv (3x3, stride 2, padded, bias, ReLU) -> GEMM (ReLU) -> GEMM (ReLU, the same options,
    another K) -> GEMM, ragged shapes, int8 activations feeding each other."""
    rng = np.random.default_rng(7)
    x = rng.integers(-128, 128, (1, 9, 11, 5), dtype=np.int8)
    wc = rng.integers(-128, 128, (3, 3, 5, 40), dtype=np.int8)
    bc = rng.integers(-3000, 3000, 40).astype(np.int32)
    w1, w2, w3 = (rng.integers(-128, 128, s, dtype=np.int8) for s in ((40, 24), (24, 24), (24, 7)))
    conv = conv2d_launch(x, wc, bc, **CONV)
    _, P, Q, K = conv.y.shape
    M = P * Q

    p = Program()
    X = p.input("x", np.int8, x.shape)
    h1 = p.activation("h1", np.int8, (M, K))
    by_array = {id(conv.args[0]): X, id(conv.args[1]): p.weights("conv.w", wc), id(conv.args[2]): h1}
    args = [by_array.get(id(a), a) for a in conv.args]
    options = {k: v for k, v in conv.options.items() if k != "config"}
    p.launch("conv", conv.kernel, conv.grid, args, outputs=[h1], **dict(options, bias_ptr=p.weights("conv.b", bc)))
    h2, h3 = p.activation("h2", np.int8, (M, 24)), p.activation("h3", np.int8, (M, 24))
    y = p.output("y", np.int8, (M, 7))
    gemm(p, "fc1", h1, p.weights("w1", w1), h2, relu=True)
    gemm(p, "fc2", h2, p.weights("w2", w2), h3, relu=True)
    gemm(p, "fc3", h3, p.weights("w3", w3), y, relu=False)

    r1 = reference_conv2d(x, wc, bc, **CONV).reshape(M, K)
    expected = gemm_reference(gemm_reference(gemm_reference(r1, w1, True), w2, True), w3, False)
    build = build_program_elf(p, tmp_path_factory.mktemp("chain") / "chain.elf", input=x, expected=expected)
    return SimpleNamespace(program=p, build=build, x=x, weights=(wc, bc, w1, w2, w3), expected=expected)


def test_chained_launches_in_one_elf_are_bit_exact_on_the_iss(chain):
    run = run_program(chain.build)
    assert run.passed and "PASS" in run.console
    np.testing.assert_array_equal(run.output, chain.expected)
    # the same launches one by one on the host JIT model
    wc, bc, w1, w2, w3 = chain.weights
    conv = conv2d_launch(chain.x, wc, bc, **CONV)
    conv.run("sim")
    h = conv.y.reshape(-1, wc.shape[3])
    for w, relu in ((w1, True), (w2, True), (w3, False)):
        h = gemm_on_sim(h, w, relu)
    np.testing.assert_array_equal(run.output, h)
    assert list(run.step_cycles) == ["conv", "fc1", "fc2", "fc3"]
    assert all(c > 0 for c in run.step_cycles.values()) and sum(run.step_cycles.values()) <= run.total_cycles
    assert run.gemmini_commands > 0 and run.cpu_cycles >= run.total_cycles


def test_the_cycle_model_times_each_step(chain):
    plain = run_program(chain.build)
    timed = run_program(chain.build, timing=True)
    np.testing.assert_array_equal(timed.output, chain.expected)
    assert timed.gemmini_cycles > 0 and timed.gemmini_commands == plain.gemmini_commands
    # with the cycle model each step also waits for Gemmini at its fence
    assert all(timed.step_cycles[s] > plain.step_cycles[s] for s in plain.step_cycles)


def test_a_corrupted_expected_array_fails_the_self_check(chain, tmp_path):
    from baco.sim.cli import main as baco_sim
    wrong = chain.expected.copy()
    wrong[3, 2] ^= 1
    bad = build_program_elf(chain.program, tmp_path / "bad.elf", input=chain.x, expected=wrong)
    run = run_program(bad)
    assert run.exit_code == 1 and not run.passed and "mismatch y[23]" in run.console and "FAIL: 1" in run.console
    np.testing.assert_array_equal(run.output, chain.expected)
    # `baco sim` runs both ELFs unchanged, with the cycle model too
    assert baco_sim([str(bad.elf)]) == 1
    assert baco_sim([str(chain.build.elf), "--timing"]) == 0


@pytest.mark.slow
@pytest.mark.skipif(not os.path.isfile(os.environ.get("BACO_SPIKE_EXTLIB", "")),
                    reason="Spike's Gemmini library is not installed (set BACO_SPIKE_EXTLIB)")
def test_the_program_elf_runs_on_spike(chain):
    from baco.sim.external import run_spike
    assert run_spike(chain.build.elf, timeout_s=300, stdout=None) == 0


def test_the_arena_reuses_an_activation_after_its_last_reader(chain):
    plan = chain.build.plan
    assert plan.live == {"h1": (0, 1), "h2": (1, 2), "h3": (2, 3)}
    assert plan.offsets["h3"] == plan.offsets["h1"]        # h1's last reader is fc1; fc2 writes h3
    assert plan.peak_bytes < plan.activation_bytes
    assert plan.peak_bytes == 1216 + 768 and plan.activation_bytes == 1216 + 768 + 768
    assert f"arena peak {plan.peak_bytes} bytes of {plan.activation_bytes}" in chain.build.report()
    assert chain.build.elf_bytes == os.path.getsize(chain.build.elf) and chain.build.image_bytes > 0


def test_each_specialisation_is_linked_once(chain):
    # the GEMM kernel's ELFs are specialized on their shapes (matmul_kernel's specialize_shapes="iss"):
    # fc1 and fc2 differ in K, so each is its own function (test_specialize_shapes links a shared one once)
    kernels = chain.build.kernels
    assert sorted(kernels.values()) == [["conv"], ["fc1"], ["fc2"], ["fc3"]]
    functions = [s for s in read_symbols(chain.build.elf) if s.startswith(("matmul_kernel_", "conv2d_kernel_"))]
    assert sorted(f.rsplit("_", 1)[0] for f in functions) == ["conv2d_kernel"] + ["matmul_kernel"] * 3
    assert set(functions) == set(kernels)


def test_each_fence_says_why(chain):
    assert chain.build.fences == {
        0: "step 'fc1' (Gemmini) reads 'h1', which 'conv' writes",
        1: "step 'fc2' (Gemmini) reads 'h2', which 'fc1' writes; writes 'h3' over the bytes of 'h1', which 'fc1' "
           "reads",
        2: "step 'fc3' (Gemmini) reads 'h3', which 'fc2' writes",
        3: "the CPU reads the outputs to check them"}


def test_a_cpu_step_between_launches(tmp_path):
    """GEMM -> GEMM -> residual add with ReLU on the CPU (baco.model.cpu_ops) -> GEMM: the CPU
    reads both launches' outputs after a fence and writes an activation the last launch reads."""
    from baco.model import cpu_ops
    rng = np.random.default_rng(3)
    x = rng.integers(-128, 128, (19, 30), dtype=np.int8)
    w1, w2, w3 = (rng.integers(-128, 128, s, dtype=np.int8) for s in ((30, 21), (21, 21), (21, 9)))
    add = cpu_ops.add((19, 21), a_scale=0.5, b_scale=0.25, out_scale=0.75, relu=True)
    p = Program()
    X = p.input("x", np.int8, x.shape)
    h, g, r = (p.activation(n, np.int8, (19, 21)) for n in "hgr")
    y = p.output("y", np.int8, (19, 9))
    gemm(p, "fc1", X, p.weights("w1", w1), h, relu=True)
    gemm(p, "fc2", h, p.weights("w2", w2), g, relu=False)
    p.cpu("residual", add, [h, g], [r])
    gemm(p, "fc3", r, p.weights("w3", w3), y, relu=True)

    rh = gemm_reference(x, w1, True)
    rg = gemm_reference(rh, w2, False)
    v = rh.astype(np.float32) * np.float32(0.5 / 0.75) + rg.astype(np.float32) * np.float32(0.25 / 0.75)
    rr = np.rint(np.clip(np.maximum(v, np.float32(0)), -128, 127)).astype(np.int8)
    expected = gemm_reference(rr, w3, True)
    build = build_program_elf(p, tmp_path / "cpu.elf", input=x, expected=expected)
    assert build.fences[1] == "step 'residual' (the CPU) reads 'g', which 'fc2' writes"
    assert 2 not in build.fences          # the CPU's stores come before fc3's commands
    run = run_program(build)
    assert run.passed
    np.testing.assert_array_equal(run.output, expected)
    with pytest.raises(TypeError, match=r"argument 1 of cpu_add_relu_\w+ is int8 \(19, 21\); buffer 'y' is int8 "
                                        r"\(19, 9\)"):
        p.cpu("bad", add, [h, y], [r])


def test_a_gemmini_fault_names_the_step(tmp_path):
    """A launch whose A rows run past its buffer: Gemmini's DMA is confined to the program's buffers."""
    p = Program()
    X = p.input("x", np.int8, (40, 16))
    h, y = p.activation("h", np.int8, (40, 16)), p.output("y", np.int8, (40, 16))
    W = p.weights("w", np.eye(16, dtype=np.int8))
    gemm(p, "fine", X, W, h, relu=False)
    p.launch("stray", matmul_kernel, (2, 1), [h, W, y, 40, 16, 16, 1 << 16, 1, 16, 1, 16, 1, 1.0], outputs=[y],
             RELU=False, OUT_INT8=True, schedule=SCHEDULE)
    build = build_program_elf(p, tmp_path / "fault.elf", input=np.zeros((40, 16), np.int8))
    with pytest.raises(GemminiFault, match=r"step 1 \('stray', matmul_kernel\).*outside the kernel's arrays"):
        run_program(build)


def small_program():
    p = Program()
    return p, p.input("x", np.int8, (8, 16)), p.weights("w", np.ones((16, 16), np.int8))


def test_bad_programs_are_named_errors():
    p, X, W = small_program()
    h = p.activation("h", np.int8, (8, 16))
    with pytest.raises(ValueError, match="step 'fc' writes 'w', which is read-only weights"):
        gemm(p, "fc", X, h, W, relu=False)
    ok = gemm(p, "ok", X, W, h, relu=False)
    with pytest.raises(TypeError, match=r"argument 1 of matmul_kernel is a memref of i8; buffer 'wide' holds int32"):
        p.launch("fc", ok.kernel, (1, 1),
                 [X, p.weights("wide", np.ones((16, 16), np.int32)), h, 8, 16, 16, 16, 1, 16, 1, 16, 1, 1.0],
                 outputs=[h])
    with pytest.raises(TypeError, match="argument 12 of matmul_kernel is a float32 scalar, got int 1"):
        p.launch("fc2", ok.kernel, (1, 1), [X, W, h, 8, 16, 16, 16, 1, 16, 1, 16, 1, 1], outputs=[h])
    with pytest.raises(ValueError, match="buffer 'h' is already defined"):
        p.activation("h", np.int8, (1,))
    with pytest.raises(ValueError, match="config .* is not the program's"):
        Program().launch("x", matmul_kernel, (1,), [], outputs=[], config=GemminiConfig(dim=8))

    p, X, W = small_program()
    g, h = p.activation("g", np.int8, (8, 16)), p.activation("h", np.int8, (8, 16))
    gemm(p, "fc", g, W, h, relu=False)
    with pytest.raises(ValueError, match="step 'fc' reads activation 'g' before any step writes it"):
        p.plan()

    p, X, W = small_program()
    p.output("y", np.int8, (8, 16))
    gemm(p, "fc", X, W, p.activation("h", np.int8, (8, 16)), relu=False)
    with pytest.raises(ValueError, match=r"buffer 'y' \(output\) is used by no step"):
        p.plan()


def test_data_that_does_not_fit_is_an_error_with_the_sizes(tmp_path):
    p, X, W = small_program()
    big = p.activation("big", np.int8, (300 << 20,))
    y = p.output("y", np.int8, (8, 16))
    p.launch("fill", matmul_kernel, (1, 1), [X, W, big, 8, 16, 16, 16, 1, 16, 1, 16, 1, 1.0], outputs=[big],
             RELU=False, OUT_INT8=True, schedule=SCHEDULE)
    gemm(p, "fc", X, W, y, relu=False)
    x = np.zeros((8, 16), np.int8)
    with pytest.raises(ProgramDoesNotFit, match=rf"arena {300 << 20}\) does not fit in {256 << 20} bytes of RAM"):
        build_program_elf(p, tmp_path / "big.elf", input=x)
    with pytest.raises(TypeError, match="expected 'y': dtype int32, the buffer holds int8"):
        build_program_elf(p, tmp_path / "big.elf", input=x, expected=np.zeros((8, 16), np.int32))
    with pytest.raises(ValueError, match=r"input 'x': shape \(16, 8\), the buffer is \(8, 16\)"):
        build_program_elf(p, tmp_path / "big.elf", input=np.zeros((16, 8), np.int8))


def test_slices_of_a_buffer_are_arguments(tmp_path):
    """A batched GEMM as one launch per image, each on slices of the batch's buffers, then the
    two images summed on the CPU (cpu_ops.add on two slices of one buffer)."""
    from baco.model import cpu_ops
    rng = np.random.default_rng(5)
    x = rng.integers(-128, 128, (2, 17, 24), dtype=np.int8)
    w = rng.integers(-128, 128, (24, 10), dtype=np.int8)
    p = Program()
    X, W, H = p.input("x", np.int8, x.shape), p.weights("w", w), p.activation("h", np.int8, (2, 17, 10))
    y = p.output("y", np.int8, (17, 10))
    for n in range(2):
        a, c = X.slice(n * 17 * 24, 17 * 24), H.slice(n * 17 * 10, 17 * 10)
        p.launch(f"image{n}", matmul_kernel, (1, 1), [a, W, c, 17, 10, 24, 24, 1, 10, 1, 10, 1, SCALE],
                 outputs=[c], RELU=False, OUT_INT8=True, schedule=SCHEDULE)
    add = cpu_ops.add((17, 10), a_scale=1.0, b_scale=1.0, out_scale=2.0)
    p.cpu("sum", add, [H.slice(0, 170), H.slice(170, 170)], [y])
    h = np.stack([gemm_reference(x[n], w, False) for n in range(2)]).astype(np.float32)
    expected = np.rint(np.clip(h[0] * np.float32(0.5) + h[1] * np.float32(0.5), -128, 127)).astype(np.int8)
    build = build_program_elf(p, tmp_path / "batch.elf", input=x, expected=expected, cache_dir=tmp_path / "cache")
    run = run_program(build)
    assert run.passed
    # each function's object is cached, and a rebuild links the cached objects (the same files: a hit
    # refreshes a file's time for the cache's pruning, a rebuild would publish a new file by rename)
    objects = sorted((tmp_path / "cache" / "riscv-obj").glob("*.o"))
    assert len(objects) == len(build.kernels) == 2
    files = [o.stat().st_ino for o in objects]
    again = build_program_elf(p, tmp_path / "again.elf", input=x, expected=expected, cache_dir=tmp_path / "cache")
    assert [o.stat().st_ino for o in sorted((tmp_path / "cache" / "riscv-obj").glob("*.o"))] == files
    assert run_program(again).passed
    np.testing.assert_array_equal(run.output, expected)
    with pytest.raises(ValueError, match=r"slice \[400, 400 \+ 10\) is not inside buffer 'h' of 340 elements"):
        H.slice(400, 10)
    with pytest.raises(TypeError, match=r"argument 1 of cpu_add_\w+ is int8 \(17, 10\); the slice of 'h' is int8 "
                                        r"\[0, 100\)"):
        p.cpu("bad", add, [H.slice(0, 170), H.slice(0, 100)], [y])
