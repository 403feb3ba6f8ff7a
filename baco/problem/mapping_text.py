"""The mapping text format (as in DOSA's data), outermost level first, `X` = spatial:
`L3[WIO] C8 Q7 K16 - L2[WI] Q2 C2 - L1[O] P7 K2 C4 K2X - L0[W] Q4 P8`."""
from __future__ import annotations

import re

from baco.problem.dims import DIMS, NUM_LEVELS


def parse_loops(text: str) -> list[list[tuple[str, int, bool]]]:
    """[level] -> the level's loops as written, outer first: (dim, factor, spatial)."""
    loops = [[] for _ in range(NUM_LEVELS)]
    for part in text.split(" - "):
        m = re.fullmatch(r"\s*L(\d)\[(\w*)\]\s*(.*?)\s*", part)
        if not m:
            raise ValueError(f"bad mapping level {part!r} in {text!r}")
        level = int(m.group(1))
        for tok in m.group(3).split():
            t = re.fullmatch(rf"([{''.join(DIMS)}])(\d+)(X?)", tok)
            if not t:
                raise ValueError(f"bad loop {tok!r} in {text!r}")
            loops[level].append((t.group(1), int(t.group(2)), t.group(3) == "X"))
    return loops
