"""Settings of the whole test session."""
import os
from collections import Counter
from pathlib import Path

import pytest

TESTS = Path(__file__).parent

# The suite's tensors are small, so torch's second intra-op thread only adds contention: residual.fit_supported's
# 600 Adam steps took 60 s wall (15 CPU s) with two threads and 7.6 s (1.7 CPU s) with one on the loaded 2-core
# machine. The variable reaches the subprocesses too (benchmark smokes, lit); OMP_NUM_THREADS=N overrides it.
os.environ.setdefault("OMP_NUM_THREADS", "1")


def pytest_configure(config):
    import torch
    torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
    if hasattr(config.option, "loadscopereorder"):     # xdist: the files in the order collected (see below)
        config.option.loadscopereorder = False


# The test files that take longest, longest first (their CPU seconds with an empty compiler cache, one file after
# another, session 23): xdist hands a worker the next file when it runs dry and by default orders the files by their
# number of tests, so files of a few long tests (the benchmark smokes, hypothesis on the ISS, the tuner's searches)
# came last and one worker ran them while the other idled. Handed out first, the other worker works through the many
# short files meanwhile. The rest keep xdist's order, most tests first (test_golden_ir.py, its files run in one
# process, is now among them).
LONGEST_FILES = ["test_fused_programs.py", "test_loop_conv_ws.py", "test_benchmarks_smoke.py", "test_model.py",
                 "test_loop_ws.py", "test_conv_kernels.py", "test_loop_conv_timing_reference.py", "test_whole_model.py",
                 "test_ops_kernels.py", "test_network_search.py", "test_kernel_generator.py", "test_loop.py",
                 "test_explore.py", "test_conv_rows.py", "test_fused_dwpw.py", "test_emitted_header.py",
                 "test_optimum.py", "test_conv_model.py", "test_properties.py", "test_loop_conv_designs.py",
                 "test_design_conv.py", "test_tune_outputs.py", "test_baselines.py"]


def pytest_collection_modifyitems(config, items):
    missing = [f for f in LONGEST_FILES if not (TESTS / f).exists()]
    if missing:
        raise pytest.UsageError(f"conftest.LONGEST_FILES names files that do not exist: {missing}")
    rank = {f: i for i, f in enumerate(LONGEST_FILES)}
    tests = Counter(item.path.name for item in items)
    # stable: a file's tests stay together and in order
    items.sort(key=lambda item: (rank.get(item.path.name, len(rank)), -tests[item.path.name]))
