"""Whole models: a PyTorch model as one quantised program of Gemmini kernels and CPU operators:
captured (graph), quantised (quantize), lowered to Gemmini kernel launches and CPU operators
(lower, cpu_ops), checked against an independent reference (reference); the front door is
baco.compile_model (compile)."""
