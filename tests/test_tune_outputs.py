"""`baco tune` end to end: the written Scala/header/JSON/Timeloop files of a
tuned GEMM, the header importer, and the tuned block sizes compiled and run
by the compiler."""
import importlib.util
import json
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
    assert cli.main(["--op", "gemm", "--M", "64", "--N", "48", "--K", "96", "--steps", "60",
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
    assert cli.main(["--op", "gemm", "--M", str(M), "--N", str(N), "--K", str(K), "--steps", "60",
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
                     "--padding", "1", "--steps", "30", "--init-params", str(header),
                     "--out", str(tmp_path / "out"), "--quiet"]) == 0
    assert (tmp_path / "out" / "result.json").exists()
