# lit configuration of the golden IR-in/IR-out tests: tests/ir/<pass>/*.mlir, each with
# `// RUN: baco opt --pass NAME %s | FileCheck %s` and CHECK lines (regenerate them with
# `python tests/ir/update_golden.py`). tests/test_golden_ir.py runs every file's RUN line inside the test process
# (baco opt's entry, then FileCheck) and a few files through lit with this configuration.
import os
import sys
from pathlib import Path

import lit.formats

config.name = "baco-golden-ir"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.excludes = ["matmul.baco.mlir"]          # pipeline input of tests/test_pipeline.py, not a lit test
config.test_source_root = os.path.dirname(__file__)
repo = str(Path(__file__).resolve().parents[2])
config.environment["PYTHONPATH"] = os.pathsep.join(
    [repo] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
config.environment["BACO_CACHE_DIR"] = ""
config.substitutions.append(("baco ", f"{sys.executable} -m baco.cli "))
config.substitutions.append(("FileCheck", lit_config.params["filecheck"]))
