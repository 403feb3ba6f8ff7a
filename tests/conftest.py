"""Settings of the whole test session."""
import os

# The suite's tensors are small, so torch's second intra-op thread only adds contention: residual.fit_supported's
# 600 Adam steps took 60 s wall (15 CPU s) with two threads and 7.6 s (1.7 CPU s) with one on the loaded 2-core
# machine. The variable reaches the subprocesses too (benchmark smokes, lit); OMP_NUM_THREADS=N overrides it.
os.environ.setdefault("OMP_NUM_THREADS", "1")


def pytest_configure(config):
    import torch
    torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
