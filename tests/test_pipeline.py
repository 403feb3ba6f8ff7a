"""The compiler stages on text IR: each stage runs alone, the output of each
verifies and has the expected shape; errors point at the user's source."""
import re
from pathlib import Path

import pytest

from baco.codegen.riscv import intrinsic_prelude, link_intrinsics
from baco.codegen.translate import to_llvm_ir
from baco.dialects import instgem, parse_module
from baco.errors import CompilationError
from baco.gemmini.config import GemminiConfig
from baco.gemmini.isa import COMMANDS
from baco.passes import cli as opt_cli
from baco.options import CompileOptions
from baco.passes.pipeline import LLVM, SAME_INPUT, STAGES, input_stage, run_pipeline

IR = Path(__file__).parent / "ir" / "matmul.baco.mlir"


def stage_texts(**options):
    return run_pipeline(IR.read_text(), CompileOptions.of(**options)).stage_ir


def test_every_stage_output_is_the_next_stage_input():
    """Running stage by stage through text equals running the whole pipeline (the text
    keeps the locations: Gemmini commands carry their source site)."""
    whole = stage_texts()
    text = IR.read_text()
    for name in STAGES:
        module = run_pipeline(text, start=name, until=name).module
        assert str(module) == whole[name], name
        text = module.operation.get_asm(enable_debug_info=True)


def test_stage_contents():
    ir = stage_texts(loop_ws=False)     # the explicit command stream (LOOP_WS: tests/test_loop_ws.py)
    linalg = ir["baco-to-linalg"]
    assert '"baco.' not in linalg and "linalg.matmul" in linalg and "memref.reinterpret_cast" in linalg
    assert "scf.for" in linalg and "tensor.pad" in linalg
    buf = ir["bufferize"]
    assert "tensor." not in buf and "memref.alloc" in buf
    placed = ir["gemmini-placement"]
    assert 'gemmini.space = "spad"' in placed and 'gemmini.space = "acc"' in placed
    assert "linalg.map" not in placed          # operand zero padding replaced by masking
    inst = ir["linalg-to-instgem"]
    for op in ("config_ex", "config_ld", "config_st", "mvin", "preload", "compute_preloaded",
               "compute_accumulated", "mvout"):
        assert f'"instgem.{op}"' in inst, op
    assert '"instgem.fence"' not in inst       # programs stream on: the harness fences after the grid
    assert "linalg." not in inst and "memref.alloc" not in inst
    llvm = ir["instgem-to-llvm"]
    assert "llvm.func @matmul_kernel" in llvm and "baco.rocc.mvin" in llvm


def test_loop_ws_stage_rewrites_the_gemm_nest():
    ir = stage_texts()
    assert '"instgem.loop_ws"' in ir["loop-ws"] and "linalg.matmul" not in ir["loop-ws"]
    inst = ir["linalg-to-instgem"]
    for op in ("loop_ws_config_bounds", "loop_ws_config_addrs_ab", "loop_ws_config_addrs_dc",
               "loop_ws_config_strides_ab", "loop_ws_config_strides_dc", "loop_ws", "mvout"):
        assert f'"instgem.{op}"' in inst, op      # (mvout: a program whose loop runs no step)
    assert "preload" not in stage_texts(loop_ws=True)["loop-ws"]


def test_output_stationary_uses_in_array_accumulation():
    inst = stage_texts(dataflow="OS")["linalg-to-instgem"]
    assert inst.count('"instgem.compute_accumulated"') >= 1
    assert "arith.select" in inst       # only the last K step writes C


def test_locations_survive_to_instgem():
    res = run_pipeline(IR.read_text())
    with res.context:
        text = res.module.operation.get_asm(enable_debug_info=True)
    assert 'loc("k.py":14:15)' in text or "k.py" in text


def test_capacity_error_names_blocks_and_limit():
    tiny = GemminiConfig.from_capacity(16, 2, 4)      # 128-row scratchpad, 64-row accumulator
    with pytest.raises(CompilationError) as e:
        run_pipeline(IR.read_text(), CompileOptions.of(config=tiny))
    msg = str(e.value)
    assert "32x64 i8" in msg and "64x32 i8" in msg
    assert "scratchpad (128 rows" in msg and "2 KiB" in msg and "need 256 rows" in msg
    assert "k.py:" in msg


def test_accumulator_capacity_error():
    small_acc = GemminiConfig.from_capacity(16, 256, 2)   # 32 accumulator rows < a 32x32 block's 64
    with pytest.raises(CompilationError, match=r"accumulator \(32 rows.*32x32 i32 \(64 rows\)"):
        run_pipeline(IR.read_text(), CompileOptions.of(config=small_acc))


def test_instgem_field_width_verifier():
    from baco.dialects import parse_module
    text = IR.read_text()
    res = run_pipeline(text, until="linalg-to-instgem")
    bad = str(res.module).replace('    return\n',
                                  '    %bad = arith.constant 70000 : i64\n'
                                  '    "instgem.mvin"(%bad, %bad, %bad, %bad) : (i64, i64, i64, i64) -> ()\n'
                                  '    return\n', 1)
    module = parse_module(bad)
    with module.context, pytest.raises(CompilationError, match=r"mvin\.cols = 70000 does not fit its 16-bit field"):
        instgem.verify_fields(module.operation)


def test_instgem_ops_come_from_the_command_table():
    text = instgem.irdl_text()
    for name, cmd in COMMANDS.items():
        assert f"irdl.operation @{name} " in text
        for f in instgem.operand_fields(cmd):
            assert f"{f.name}: %i64" in text


def test_riscv_intrinsics_encode_each_funct():
    prelude = intrinsic_prelude()
    for name, cmd in COMMANDS.items():
        if name != "counter":
            assert f'@"baco.rocc.{name}"' in prelude
            assert f"CUSTOM_3, 3, {cmd.funct}, x0, $0, $1" in prelude
    res = run_pipeline(IR.read_text())
    linked = link_intrinsics(to_llvm_ir(res.module))
    assert "asm sideeffect" in linked and "declare void @baco.rocc" not in linked


def test_opt_cli_runs_one_stage(tmp_path, capsys):
    out = tmp_path / "placed.mlir"
    assert opt_cli.main([str(IR), "--to", "gemmini-placement", "-o", str(out)]) == 0
    placed = parse_module(out.read_text())
    with placed.context:
        assert input_stage(placed) == "loop-ws"     # (linalg-to-instgem takes it too)
    assert opt_cli.main([str(out), "--pass", "linalg-to-instgem", "--dim", "4", "--sp-kb", "16", "--acc-kb", "8"]) == 0
    assert '"instgem.mvin"' in capsys.readouterr().out
    assert opt_cli.main([str(out), "--pass", "loop-ws", "--dim", "4", "--sp-kb", "16", "--acc-kb", "8"]) == 0
    assert '"instgem.loop_ws"' in capsys.readouterr().out


def test_input_stage_names_the_stage_each_output_feeds():
    texts = stage_texts()
    names = list(STAGES) + [LLVM]
    for produced, fed in zip(STAGES, names[1:]):
        module = parse_module(texts[produced])
        with module.context:    # InstGem in and out: the first stage that takes InstGem
            # (loop-ws output holding LOOP_WS commands beside placed blocks is linalg-to-instgem's alone)
            assert input_stage(module) in SAME_INPUT.get(fed, ()) + (fed,), produced


def test_dump_dir_gets_every_stage(tmp_path):
    run_pipeline(IR.read_text(), dump_dir=str(tmp_path), name="mm")
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names[0] == "mm.0-input.mlir" and len(names) == 1 + len(STAGES)


def test_two_kernels_in_one_module_lower_alike():
    """Each function is lowered with its own tables: the ops one lowering erased are not
    erased again, nor looked up, when the next function is lowered (a use after free)."""
    text = IR.read_text()
    kernel = re.search(r'(  func\.func @matmul_kernel.*?\n  \} loc\("k\.py":1:0\)\n)', text, re.S).group(1)
    two = text.replace(kernel, kernel + kernel.replace("@matmul_kernel(", "@matmul_kernel2("))
    for options in (dict(), dict(loop_ws=False), dict(dataflow="OS"), dict(double_buffer=True, loop_ws=False)):
        stages = run_pipeline(two, CompileOptions.of(**options)).stage_ir
        for stage in ("linalg-to-instgem", "config-elimination", "instgem-to-llvm"):
            funcs = dict(re.findall(r"\n  (?:llvm\.)?func(?:\.func)? @(matmul_kernel2?)(\(.*?\n  \})", stages[stage], re.S))
            assert len(funcs) == 2, (options, stage)
            assert funcs["matmul_kernel"] == funcs["matmul_kernel2"], (options, stage)
