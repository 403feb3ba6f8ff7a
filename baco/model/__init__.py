"""Whole models: a PyTorch model captured (graph), quantised (quantize), lowered to Gemmini kernel
launches and CPU ops (lower), checked against an independent reference (reference); the front
door is baco.compile_model (compile)."""
