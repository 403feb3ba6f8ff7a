"""The layer vocabulary shared by the tuner and the simulator: `Layer` (one problem), loop
dimensions, memory levels and the mapping text format. Pure Python: no torch, no MLIR, nothing
else of baco."""
