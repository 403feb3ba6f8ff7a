"""The gemmini_params.h `baco tune` emits, built by a real toolchain: Gemmini's own C library
(gemmini-rocc-tests 180c46848eca, include/ of ../shared/reference) with Debian's
riscv64-unknown-elf-gcc, picolibc's headers and the suite's own CFLAGS, linked against the
riscv-tests environment of toolchain/ as the reference bin/ ELFs were, for three fixed designs (DIM
8, 16 and 32, each header written by the tuner's emitter) and four that tuning runs return (`baco
tune` on a two-layer network, fixed seed and steps, unconstrained and under three area budgets: DIM
64, 32, 16 and 8; their gemmini_params.h and gemmini_config.json as written). Every program runs on
`baco sim --config` with the same design:
- tests/emitted_header/library_check.c drives the library's tiled_matmul_auto (WS and OS),
  tiled_conv_auto with the pooling epilogue and tiled_resadd_auto on ragged numpy data and exits 0
  iff each output equals numpy's reference of Gemmini's arithmetic;
- the reference's mlps programs (mlp3 on every design; mlp2 on the fixed ones with -m slow:
  tiled_matmul_nn_auto at batch 64) build unchanged and run to exit 0 (their data is all zeros, so
  they check the library's tiling for the design, not values).
Each tuned run's BacoGemminiConfig.scala, as written, uses only names Gemmini's Scala sources define
(tests/test_tune_outputs.py's checker).
Skipped with the reason when ../shared is absent; FAILS when the cross compiler or picolibc is
missing (`.ci/run` installs both)."""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import yaml

from baco.gemmini.config import GemminiConfig
from baco.gemmini.params_header import generate_params_header
from baco.sim import cli
from baco.tuner import cli as tune_cli
from tests.shared import reference
from tests.test_loop_conv import conv_reference
from tests.test_loop_resadd import reference as resadd_reference
from tests.test_tune_outputs import GEMMINI_SCALA, scala_problems

ROOT = Path(__file__).resolve().parents[1]
TOOLCHAIN = ROOT / "toolchain"
HARNESS = Path(__file__).parent / "emitted_header" / "library_check.c"
ROCC_TESTS = "gemmini-rocc-tests"
GCC = "riscv64-unknown-elf-gcc"
INSTALL = "apt-get install -y gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf"

# Three designs (DIM, scratchpad KiB, accumulator KiB), each smaller or larger than the default.
DESIGNS = {"dim8": (8, 64, 32), "dim16": (16, 128, 64), "dim32": (32, 512, 128)}
# mlp3 (64x448x512, 64x512x448) in the default suite, the larger mlp2 (64x832x832) with -m slow
MLPS = ("mlp3", pytest.param("mlp2", marks=pytest.mark.slow))
# The tuned design's network (layer_count.yaml keys R_S_P_Q_C_K_N_Wstride_Hstride_Wdilation_Hdilation: a
# 3x3 conv 14x14 32->64 twice and a 64x96x48 GEMM) and the run's seed and descent steps (no time budget:
# the same design on every machine).
TUNED_NETWORK = {"3_3_14_14_32_64_1_1_1_1_1": {"count": 2, "name": "conv3x3"},
                 "1_1_64_1_96_48_1_1_1_1_1": {"count": 1, "name": "fc"}}
TUNED_RUN = ["--seed", "0", "--steps", "20", "--quiet"]
# Four runs, each with the array size it returns (the acceptance asks for tuned DIM 8, 16 and 32
# designs): unconstrained (a 64x64 array, 32/64 KB: since the search prices the explicit stream's
# interior programs as the clamp-free version they run, that design's EDP is below the C library's
# programs on Gemmini-default, which the run returned before) and under three area budgets
# (32x32 16/56 KB; 16x16 16/28 KB: an accumulator of 448 rows, not a power of two; 8x8 4/12 KB: 384
# accumulator rows: a 16x16 array within 0.15 mm2 keeps ~8 KB of buffers, whose double-buffered
# explicit conv programs the search priced at 0.59x of the ISS until the conv CPU table had its
# double-buffer terms, and returned: its network EDP end to end on the ISS 7.46e6 against 4.93e6).
TUNED_AREAS = {"tuned": ([], 64), "tuned_0.9mm2": (["--max-area", "0.9"], 32),
               "tuned_0.4mm2": (["--max-area", "0.4"], 16), "tuned_0.15mm2": (["--max-area", "0.15"], 8)}

TARGET = ["--specs=picolibc.specs", "-march=rv64gc", "-mabi=lp64d", "-mcmodel=medany", "-O2", "-fno-common"]
# gemmini-rocc-tests' bareMetalC/Makefile and mlps/Makefile: CFLAGS + CFLAGS_BAREMETAL.
SUITE_CFLAGS = ["-DPREALLOCATE=1", "-DMULTITHREAD=1", "-std=gnu99", "-ffast-math", "-fno-builtin-printf",
                "-fno-tree-loop-distribute-patterns", "-Wa,-march=rv64gc", "-nostdlib", "-nostartfiles",
                "-static", "-DBAREMETAL=1"]


def run(cmd: list[str], cwd: Path) -> None:
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    assert done.returncode == 0, f"{' '.join(cmd)}\n{done.stdout}{done.stderr}"


def check_toolchain() -> str:
    gcc = shutil.which(GCC)
    if gcc is None:
        pytest.fail(f"{GCC} is not installed: `{INSTALL}` (.ci/run does this)")
    specs = subprocess.run([gcc, "-print-file-name=picolibc.specs"], capture_output=True, text=True).stdout.strip()
    if not Path(specs).is_file():
        pytest.fail(f"picolibc for {GCC} is not installed (no picolibc.specs): `{INSTALL}` (.ci/run does this)")
    return gcc


class Builds:
    """One build folder per design: the reference library's headers, the emitted
    gemmini_params.h beside them, the design's JSON for --config, and the runtime objects."""

    def __init__(self, root: Path, gcc: str, rocc_tests: Path):
        self.root, self.gcc, self.rocc_tests = root, gcc, rocc_tests
        self.runtime = self._runtime()

    def _runtime(self) -> list[Path]:
        """crt.S and syscalls.c, compiled once with toolchain/'s own libc headers (no libc is linked:
        they provide what the programs call, as riscv-tests' benchmarks/common does)."""
        out = self.root / "runtime"
        out.mkdir()
        objs = []
        for name in ("crt.S", "syscalls.c"):
            obj = out / (Path(name).stem + ".o")
            flags = [] if name.endswith(".S") else ["-ffreestanding", "-I", str(TOOLCHAIN / "include")]
            run([self.gcc, *TARGET[1:], *flags, "-c", str(TOOLCHAIN / name), "-o", str(obj)], out)
            objs.append(obj)
        return objs

    def design(self, name: str) -> tuple[Path, GemminiConfig]:
        """The build folder of a fixed design (DESIGNS, made here) or of one added with `add`."""
        folder = self.root / name
        if not folder.is_dir():
            config = GemminiConfig.from_capacity(*DESIGNS[name])
            self.add(name, generate_params_header(config), json.dumps(config.to_dict()))
        return folder, GemminiConfig.from_dict(json.loads((folder / "config.json").read_text()))

    def add(self, name: str, params_header: str, config_json: str) -> None:
        """A design's build folder: the reference headers with this gemmini_params.h, and the
        design's JSON for `baco sim --config`."""
        folder = self.root / name
        (folder / "include").mkdir(parents=True)
        for header in (self.rocc_tests / "include").glob("*.h"):
            shutil.copy(header, folder / "include")
        (folder / "include" / "gemmini_params.h").write_text(params_header)
        (folder / "config.json").write_text(config_json)

    def elf(self, design: str, source: Path, extra: list[Path] = ()) -> Path:
        folder, _ = self.design(design)
        out = folder / f"{source.stem}.elf"
        run([self.gcc, *TARGET, *SUITE_CFLAGS, "-I", str(folder), "-I", str(source.parent), "-I", str(TOOLCHAIN),
             "-T", str(TOOLCHAIN / "test.ld"), str(source), *map(str, extra), *map(str, self.runtime), "-lgcc",
             "-o", str(out)], folder)
        return out


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    rocc_tests = reference(ROCC_TESTS)
    return Builds(tmp_path_factory.mktemp("emitted-header"), check_toolchain(), rocc_tests)


@pytest.fixture(scope="module", params=TUNED_AREAS)
def tuned(request, builds, tmp_path_factory) -> str:
    """The design `baco tune` returns for TUNED_NETWORK (within an area budget of TUNED_AREAS), added to
    the builds as it was written (gemmini_params.h, gemmini_config.json, BacoGemminiConfig.scala); its
    name."""
    root = tmp_path_factory.mktemp(request.param)
    network, out = root / "network", root / "out"
    network.mkdir()
    (network / "layer_count.yaml").write_text(yaml.safe_dump(TUNED_NETWORK))
    area_args, dim = TUNED_AREAS[request.param]
    assert tune_cli.main(["--network", str(network), "--out", str(out), *TUNED_RUN, *area_args]) == 0
    hardware = json.loads((out / "result.json").read_text())["hardware"]
    assert hardware["pe_dim"] == dim, f"{request.param}: the run returned {hardware}, not a {dim}x{dim} array"
    config_json = (out / "gemmini_config.json").read_text()
    config = GemminiConfig.from_dict(json.loads(config_json))
    assert (config.dim, config.sp_kb, config.acc_kb) == (hardware["pe_dim"], hardware["sp_kb"], hardware["acc_kb"])
    builds.add(request.param, (out / "gemmini_params.h").read_text(), config_json)
    shutil.copy(out / "BacoGemminiConfig.scala", builds.root / request.param)
    return request.param


def run_on_sim(elf: Path, folder: Path, capsys) -> str:
    rc = cli.main([str(elf), "--config", str(folder / "config.json")])
    out, err = capsys.readouterr()
    assert rc == 0, f"{elf.name}: exit {rc}\n{out[-3000:]}\n{err[-3000:]}"
    return out


# ---- the case data, and numpy's reference of Gemmini's arithmetic ------------------------------------------------
def c_array(ctype: str, name: str, values: np.ndarray, align: str = "") -> str:
    dims = "".join(f"[{d}]" for d in values.shape)
    body = ",".join(str(int(v)) for v in values.ravel())
    return f"static const {ctype} {name}{dims} {align} = {{{body}}};\n"


def c_float(x: float) -> str:
    """The float32 nearest x as an exact C literal (a decimal one could round twice)."""
    return f"{float(np.float32(x)).hex()}f"


def case_header(seed: int) -> str:
    rng = np.random.default_rng(seed)
    i8 = lambda *shape: rng.integers(-128, 128, shape).astype(np.int8)
    defines = {}
    out = []

    # matmul: ragged in every dimension, a repeating int32 bias, float scale, ReLU
    I, J, K, scale = 37, 50, 70, 0.0021
    A, B = i8(I, K), i8(K, J)
    bias = rng.integers(-20000, 20000, J).astype(np.int32)
    acc = A.astype(np.int64) @ B.astype(np.int64) + bias
    want = np.clip(np.rint(np.maximum(acc, 0).astype(np.float32) * np.float32(scale)), -128, 127)
    defines.update(MM_I=I, MM_J=J, MM_K=K, MM_ACT="RELU", MM_SCALE=c_float(scale))
    out += [c_array("elem_t", "mm_A", A, "row_align(1)"), c_array("elem_t", "mm_B", B, "row_align(1)"),
            c_array("acc_t", "mm_bias", bias, "row_align_acc(1)"), c_array("elem_t", "mm_want", want)]

    # conv: batch 2, ragged channels, stride 2 over an odd image, padding 1, ReLU, 3x3/2 pooling padded by 1
    n, h, w, ic, oc, k, stride, pad, scale, pool = 2, 11, 9, 5, 19, 3, 2, 1, 0.0013, (3, 2, 1)
    x, wt = i8(n, h, w, ic), (rng.integers(-128, 128, (k, k, ic, oc))).astype(np.int8)
    cbias = rng.integers(-3000, 3000, oc).astype(np.int32)
    cwant = conv_reference(x, wt, cbias, stride=stride, padding=pad, pool=pool, relu=True, scale=scale)
    oh, ow = (h + 2 * pad - k) // stride + 1, (w + 2 * pad - k) // stride + 1
    defines.update(CV_N=n, CV_H=h, CV_W=w, CV_IC=ic, CV_OC=oc, CV_OH=oh, CV_OW=ow, CV_K=k, CV_STRIDE=stride,
                   CV_PAD=pad, CV_ACT="RELU", CV_SCALE=c_float(scale), CV_POOL=pool[0], CV_POOL_STRIDE=pool[1],
                   CV_POOL_PAD=pool[2], CV_POOL_OH=cwant.shape[1], CV_POOL_OW=cwant.shape[2])
    out += [c_array("elem_t", "cv_in", x, "row_align(1)"),
            c_array("elem_t", "cv_w", wt.reshape(k * k * ic, oc), "row_align(1)"),
            c_array("acc_t", "cv_bias", cbias, "row_align_acc(1)"), c_array("elem_t", "cv_want", cwant)]

    # residual add: ragged, both inputs scaled on the way in, ReLU, an output scale
    I, J, a_scale, b_scale, c_scale = 21, 45, 0.7, 1.3, 0.45
    RA, RB = i8(I, J), i8(I, J)
    rwant = resadd_reference(RA, RB, a_scale, b_scale, c_scale, True)
    defines.update(RA_I=I, RA_J=J, RA_A_SCALE=c_float(a_scale), RA_B_SCALE=c_float(b_scale),
                   RA_C_SCALE=c_float(c_scale), RA_RELU="true")
    out += [c_array("elem_t", "ra_A", RA, "row_align(1)"), c_array("elem_t", "ra_B", RB, "row_align(1)"),
            c_array("elem_t", "ra_want", rwant)]

    head = [f"#define {key} {value}\n" for key, value in defines.items()]
    return "/* written by tests/test_emitted_header.py */\n" + "".join(head) + "".join(out)


# ---- the tests ------------------------------------------------------------------------------------------------------
def check_library(design: str, builds, tmp_path, capsys) -> None:
    """library_check.c built with the design's header, run on `baco sim` with its config: every
    library call bit-exact against numpy."""
    folder, config = builds.design(design)
    assert f"#define DIM {config.dim}" in (folder / "include" / "gemmini_params.h").read_text()
    case = tmp_path / "library_check.c"
    shutil.copy(HARNESS, case)
    (tmp_path / "library_case.h").write_text(case_header(seed=config.dim))
    out = run_on_sim(builds.elf(design, case), folder, capsys)
    for what in ("tiled_matmul_auto WS", "tiled_matmul_auto OS", "tiled_conv_auto + pool", "tiled_resadd_auto"):
        assert f"{what}: bit-exact" in out, out


@pytest.mark.parametrize("design", DESIGNS)
def test_emitted_header_runs_gemmini_library(design, builds, tmp_path, capsys):
    check_library(design, builds, tmp_path, capsys)


def test_tuned_design_header_runs_gemmini_library(tuned, builds, tmp_path, capsys):
    """A design that comes out of a tuning run (not one of DESIGNS), its files as the tuner wrote them."""
    _, config = builds.design(tuned)
    assert (config.dim, config.sp_kb, config.acc_kb) not in DESIGNS.values()
    check_library(tuned, builds, tmp_path, capsys)


def check_mlp(design: str, program: str, builds, capsys) -> None:
    """The reference's mlps program built unchanged with the design's header runs to exit 0."""
    folder, _ = builds.design(design)
    out = run_on_sim(builds.elf(design, builds.rocc_tests / "mlps" / f"{program}.c"), folder, capsys)
    assert "Overall cycles taken" in out


@pytest.mark.parametrize("program", MLPS)
@pytest.mark.parametrize("design", DESIGNS)
def test_emitted_header_builds_gemmini_mlps(design, program, builds, capsys):
    check_mlp(design, program, builds, capsys)


def test_tuned_design_header_builds_gemmini_mlp3(tuned, builds, capsys):
    check_mlp(tuned, "mlp3", builds, capsys)


def test_tuned_design_scala_uses_only_names_gemmini_defines(tuned, builds):
    """The same run's BacoGemminiConfig.scala, as written, against Gemmini's Scala sources."""
    rtl = reference("gemmini-rtl")
    scala = (builds.root / tuned / "BacoGemminiConfig.scala").read_text()
    assert scala_problems(scala, {name: (rtl / name).read_text() for name in GEMMINI_SCALA}) == [], scala
