"""Checkpoints of a co-exploration: the whole search state (random generator included), written
atomically at least every `every_s` seconds, so `baco tune ... --resume` continues a killed run;
with a fixed number of steps and a seed it ends with the same design as an uninterrupted run."""
from __future__ import annotations

import os
import time
from pathlib import Path

import torch


class Checkpointer:
    def __init__(self, path, every_s: float = 30.0, resume: bool = False, key: str = ""):
        """key identifies the problem and settings; resuming a checkpoint of another run is an error."""
        self.path, self.every_s, self.resume, self.key = Path(path), every_s, resume, key
        self.last = time.perf_counter()
        self.saves = 0

    def due(self) -> bool:
        return time.perf_counter() - self.last >= self.every_s

    def save(self, state: dict) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        torch.save({"key": self.key, **state}, tmp)
        os.replace(tmp, self.path)      # a kill mid-write leaves the previous checkpoint whole
        self.last = time.perf_counter()
        self.saves += 1

    def load(self) -> dict | None:
        """The saved state when resuming (None when not resuming or nothing was saved yet)."""
        if not self.resume or not self.path.exists():
            return None
        state = torch.load(self.path, weights_only=False)
        if state.pop("key") != self.key:
            raise ValueError(f"{self.path} is a checkpoint of another run (other layers or settings)")
        return state
