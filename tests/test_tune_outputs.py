"""`baco tune` end to end: the written Scala/header/JSON/Timeloop files of a
tuned GEMM, the header importer, and the tuned block sizes compiled and run
by the compiler."""
import importlib.util
import json
import re
from pathlib import Path

import numpy as np
import yaml

from baco.gemmini.arith import reference_matmul
from baco.gemmini.config import GemminiConfig
from baco.gemmini.params_header import generate_params_header
from baco.tuner import cli
from baco.tuner.arch import Hardware
from baco.tuner.mapping import parse_mapping, validate
from baco.tuner.params_import import config_from_header, parse_defines
from baco.tuner.workloads import gemm

ROOT = Path(__file__).resolve().parents[1]


def test_tune_gemm_writes_consistent_files(tmp_path, capsys):
    assert cli.main(["--op", "gemm", "--M", "64", "--N", "48", "--K", "96", "--steps", "15",
                     "--out", str(tmp_path), "--quiet"]) == 0
    result = json.loads((tmp_path / "result.json").read_text())
    hw = result["hardware"]
    cfg = GemminiConfig.from_dict(json.loads((tmp_path / "gemmini_config.json").read_text()))
    assert (cfg.dim, cfg.sp_kb, cfg.acc_kb) == (hw["pe_dim"], hw["sp_kb"], hw["acc_kb"])
    # header values consistent with the config (parsed back with the lark importer)
    assert config_from_header((tmp_path / "gemmini_params.h").read_text()) == cfg
    scala = (tmp_path / "BacoGemminiConfig.scala").read_text()
    assert f"meshRows = {cfg.dim}" in scala and f"CapacityInKilobytes({int(cfg.sp_kb)})" in scala
    assert f"acc_capacity = CapacityInKilobytes({int(cfg.acc_kb)})" in scala
    # Timeloop files parse and describe the same design
    arch = yaml.safe_load((tmp_path / "timeloop" / "arch.yaml").read_text())
    chip = arch["architecture"]["subtree"][0]["subtree"][0]
    assert chip["local"][0]["attributes"]["entries"] == int(cfg.sp_kb * 1024)
    mapping_yaml = yaml.safe_load((tmp_path / "timeloop" / "layer0.map.yaml").read_text())
    assert {m["target"] for m in mapping_yaml["mapping"]} == {"Registers", "Accumulator", "Scratchpad", "DRAM"}
    problem_text = (tmp_path / "timeloop" / "layer0.problem.yaml").read_text()
    instance = yaml.safe_load(problem_text)["problem"]["instance"]
    # the layer as given, or its padded equivalent (what a ragged mapping's factors cover), then said so
    layer_entry = result["layers"][0]
    mapping = parse_mapping(layer_entry["mapping"])
    assert (instance["P"], instance["C"], instance["K"]) == (mapping.total("P"), mapping.total("C"), mapping.total("K"))
    assert instance["P"] >= 64 and instance["C"] >= 96 and instance["K"] >= 48
    assert ("# Padded equivalent" in problem_text) == ((instance["P"], instance["C"], instance["K"]) != (64, 96, 48))
    # the mapping is valid and its cost is what the JSON says
    hw_obj = Hardware(hw["pe_dim"], hw["sp_kb"], hw["acc_kb"])
    assert validate(mapping, gemm(64, 96, 48), hw_obj) == []
    assert "blocks" in layer_entry
    assert "wrote" in capsys.readouterr().out


def test_tuned_blocks_compile_and_run_bit_exact(tmp_path, capsys):
    # a ragged GEMM: the tuner maps it as it is (ragged edge tiles), the kernel runs the real shape
    M, N, K = 33, 17, 100
    assert cli.main(["--op", "gemm", "--M", str(M), "--N", str(N), "--K", str(K), "--steps", "15",
                     "--out", str(tmp_path), "--quiet"]) == 0
    result = json.loads((tmp_path / "result.json").read_text())
    entry = result["layers"][0]
    assert (entry["layer"]["P"], entry["layer"]["C"], entry["layer"]["K"]) == (M, K, N)
    assert entry["macs"] == result["macs"] == M * N * K
    assert 0 < entry["utilization"] <= 1
    mapping = parse_mapping(entry["mapping"])
    assert validate(mapping, gemm(M, K, N), Hardware(**{k: result["hardware"][k] for k in ("pe_dim", "sp_kb",
                                                                                          "acc_kb")})) == []
    # the Timeloop problem: the real layer, or its padded equivalent (what the factors cover) with a note
    text = (tmp_path / "timeloop" / "layer0.problem.yaml").read_text()
    inst = yaml.safe_load(text)["problem"]["instance"]
    assert (inst["P"], inst["C"], inst["K"]) == tuple(mapping.total(d) for d in "PCK")
    assert ("Padded equivalent" in text) == ((inst["P"], inst["C"], inst["K"]) != (M, K, N))
    blocks = entry["blocks"]
    cfg = GemminiConfig.from_dict(result["gemmini_config"])
    spec = importlib.util.spec_from_file_location("mm", ROOT / "examples" / "matmul.py")
    mm = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mm)
    rng = np.random.default_rng(0)
    a = rng.integers(-128, 128, (M, K), dtype=np.int8)
    b = rng.integers(-128, 128, (K, N), dtype=np.int8)
    c, _ = mm.matmul(a, b, block=(blocks["BLOCK_M"], blocks["BLOCK_N"], blocks["BLOCK_K"]), config=cfg)
    np.testing.assert_array_equal(c, reference_matmul(a, b))


def test_params_header_import_handles_real_header_syntax():
    text = generate_params_header(GemminiConfig.from_capacity(8, 64, 32))
    text += "\n#ifdef EXTRA\n#define EXTRA_FLAG\n#endif  \n/* block\n comment */\n#define SQ(x) \\\n  ((x) * (x))\n"
    d = parse_defines(text)
    assert d["DIM"] == "8" and d["SQ"] is None and d["EXTRA_FLAG"] == ""
    cfg = config_from_header(text)
    assert (cfg.dim, cfg.sp_kb, cfg.acc_kb) == (8, 64, 32)


def test_tune_starts_from_an_existing_header(tmp_path):
    header = tmp_path / "gemmini_params.h"
    header.write_text(generate_params_header(GemminiConfig.from_capacity(8, 64, 32)))
    assert cli.main(["--op", "conv2d", "--H", "14", "--W", "14", "--C", "32", "--K", "32", "--R", "3",
                     "--padding", "1", "--steps", "10", "--init-params", str(header),
                     "--out", str(tmp_path / "out"), "--quiet"]) == 0
    assert (tmp_path / "out" / "result.json").exists()


# ---- the emitted Scala against Gemmini's own sources (../shared/reference/gemmini-rtl) ------------------
GEMMINI_SCALA = ("Configs.scala", "CustomConfigs.scala", "GemminiConfigs.scala")


def scala_imports(text: str) -> set[tuple[str, str]]:
    """(package, name) of every `import a.b.C` / `import a.b.{C, D}` (wildcards as name `_`)."""
    out = set()
    for m in re.finditer(r"^\s*import\s+([\w.]+?)\.(\{[^}]*\}|\w+|_)\s*$", text, re.M):
        names = m.group(2).strip("{}").split(",")
        out |= {(m.group(1), n.strip().split("=>")[0].strip()) for n in names}
    return out


def scala_problems(emitted: str, reference: dict[str, str]) -> list[str]:
    """Names the emitted Scala uses that Gemmini's sources do not define or import: its imports
    (each imported the same way by a reference file), the classes it instantiates or extends
    (defined there, or imported there by name), the GemminiArrayConfig fields it sets
    (parameters of the case class) and the objects its values start from."""
    code = "\n".join(line.split("//")[0] for line in emitted.splitlines())
    ref = "\n".join(reference.values())
    ref_imports = scala_imports(ref)
    defined = set(re.findall(r"\b(?:class|object|trait)\s+(\w+)", ref))
    imported = {name for _, name in ref_imports}
    problems = []
    if not re.search(r"^package gemmini\s*$", code, re.M):
        problems.append("not in package gemmini")
    for package, name in sorted(scala_imports(code)):
        if (package, name) not in ref_imports:
            problems.append(f"import {package}.{name}: no reference file imports it")
    own = set(re.findall(r"\b(?:class|object)\s+(\w+)", code))
    for name in re.findall(r"\b(?:new|extends)\s+([\w.]+)", code):
        if name not in own and name not in defined and name not in imported:
            problems.append(f"config class {name}: not defined or imported by Gemmini's sources")
    fields = re.search(r"case class GemminiArrayConfig\[.*?\]\((.*?)\n\s*\)\s*\{", ref, re.S)
    params = set(re.findall(r"^\s*(\w+)\s*:", fields.group(1), re.M))
    for body in re.findall(r"\.copy\((.*?)\n\s*\)", code, re.S):
        for name, value in re.findall(r"^\s*(\w+)\s*=\s*(.+?),?\s*$", body, re.M):
            if name not in params:
                problems.append(f"GemminiArrayConfig field {name}: not a parameter of the case class")
            head = re.match(r"[A-Za-z_][\w.]*", value)
            if head and head.group(0).split(".")[0] not in defined | imported and head.group(0) not in ref:
                problems.append(f"value {value} of {name}: {head.group(0)} is not in Gemmini's sources")
    for name in re.findall(r"\b([A-Z]\w*)\.\w+", code):
        if name not in own and name not in defined and f"{name}." not in ref:
            problems.append(f"object {name}: not in Gemmini's sources")
    return problems


def test_emitted_scala_uses_only_names_gemmini_defines():
    """BacoGemminiConfig.scala imported chipsalliance.rocketchip.config.Config, which Gemmini left in
    March 2023 (e1f7eaa: org.chipsalliance.cde.config.Config), so a current Chipyard rejected it."""
    from tests.shared import reference
    from baco.tuner.emit import chipyard_scala
    rtl = reference("gemmini-rtl")
    ref = {name: (rtl / name).read_text() for name in GEMMINI_SCALA}
    for hw in (Hardware(16, 256, 64), Hardware(32, 512, 128), Hardware(8, 32, 16), Hardware(4, 0.5, 0.25)):
        scala = chipyard_scala(hw)
        assert scala_problems(scala, ref) == [], scala
    # the checker sees what was wrong before: the old import, a field and a class Gemmini does not have
    old = chipyard_scala(Hardware(16, 256, 64)).replace("org.chipsalliance.cde.config.Config",
                                                        "chipsalliance.rocketchip.config.Config")
    old = old.replace("tileRows = 1,", "tile_rows = 1,").replace("new DefaultGemminiConfig", "new WithNBigCores")
    assert scala_problems(old, ref) == [
        "import chipsalliance.rocketchip.config.Config: no reference file imports it",
        "config class WithNBigCores: not defined or imported by Gemmini's sources",
        "GemminiArrayConfig field tile_rows: not a parameter of the case class"]
