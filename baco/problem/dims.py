"""A layer's loop dimensions (Timeloop's convolution problem) and the memory levels a mapping
tiles them over."""
from __future__ import annotations

# filter rows/columns, output rows/columns, input channels, output channels, batch
DIMS = ("R", "S", "P", "Q", "C", "K", "N")
DIM_INDEX = {d: i for i, d in enumerate(DIMS)}
# the dimensions each tensor's index uses: weights, inputs, outputs
RELEVANT = {"W": frozenset("RSCK"), "I": frozenset("NCPQRS"), "O": frozenset("NKPQ")}

LEVELS = ("L0", "L1", "L2", "L3")      # registers, accumulator, scratchpad, DRAM
NUM_LEVELS = len(LEVELS)
DRAM_LEVEL = NUM_LEVELS - 1
KEEPS = {0: "W", 1: "O", 2: "WI", 3: "WIO"}     # the tensors each level holds (the text's L3[WIO])
