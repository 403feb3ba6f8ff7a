"""Block kernels shipped with baco (used by the tuner/compiler/simulator loop and the examples)."""
