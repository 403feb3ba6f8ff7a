"""Whole models: a PyTorch model as one quantised program of Gemmini kernels and CPU operators."""
