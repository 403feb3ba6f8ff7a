"""Compile options' defaults, read by the launch (frontend.jit), the compiler and the passes
alike, so none of them learns a default from another. Imports nothing of baco."""
from __future__ import annotations

import os

LOOP_WS_ENV = "BACO_LOOP_WS"


def loop_ws_enabled(option: bool | None) -> bool:
    """The hardware-loop rewrites (LOOP_WS, LOOP_CONV_WS): the launch/pipeline option if given,
    else BACO_LOOP_WS (default on)."""
    if option is not None:
        return bool(option)
    return os.environ.get(LOOP_WS_ENV, "1").strip().lower() not in ("0", "off", "false", "no")
