"""Checkpoints of a co-exploration: the whole search state (random generator included), written
atomically at least every `every_s` seconds, so `baco tune ... --resume` continues a killed run;
with a fixed number of steps and a seed it ends with the same design as an uninterrupted run.

The file holds tensors and JSON only: the state's structure (dicts, lists, tuples, numbers,
strings, the search's own classes Tiling, LayerTask and Adam) as JSON text, its
tensors by reference in a flat dict, so it is read with `torch.load(weights_only=True)`: a
checkpoint handed over by someone else cannot run code (a pickled object in it is refused)."""
from __future__ import annotations

import dataclasses
import json
import os
import time
from pathlib import Path

import torch

from baco.tuner.descent import Adam
from baco.tuner.importance import LayerTask
from baco.tuner.points import Tiling

FORMAT = "baco-checkpoint-1"
CLASSES = {cls.__name__: cls for cls in (Tiling, LayerTask, Adam)}    # the only objects a checkpoint holds


class CheckpointError(ValueError):
    """A checkpoint file that is not one this version of baco writes."""


def encode(state) -> dict:
    """{"format", "state": JSON text, "tensors": {str: tensor}} of a search state (see the module
    docstring); a tensor held twice (an optimizer's parameter) is stored once."""
    tensors, ids = {}, {}

    def enc(x):
        if x is None or isinstance(x, (bool, int, float, str)):
            return x
        if isinstance(x, torch.Tensor):
            if id(x) not in ids:
                ids[id(x)] = str(len(ids))
                tensors[ids[id(x)]] = x.detach().clone()
            return {"tensor": ids[id(x)], "requires_grad": x.requires_grad}
        if isinstance(x, list):
            return [enc(v) for v in x]
        if isinstance(x, tuple):
            return {"tuple": [enc(v) for v in x]}
        if isinstance(x, dict):
            return {"dict": [[enc(k), enc(v)] for k, v in x.items()]}
        if CLASSES.get(type(x).__name__) is type(x):
            names = [f.name for f in dataclasses.fields(x)] if dataclasses.is_dataclass(x) else list(vars(x))
            return {"object": type(x).__name__, "fields": {n: enc(getattr(x, n)) for n in names}}
        raise TypeError(f"a checkpoint cannot hold a {type(x).__name__}")
    return {"format": FORMAT, "state": json.dumps(enc(state)), "tensors": tensors}


def decode(saved) -> object:
    """The search state of encode()'s dict (a tensor held twice is one tensor again)."""
    if not isinstance(saved, dict) or saved.get("format") != FORMAT:
        raise CheckpointError("not a baco checkpoint of this version")
    tensors, made = saved["tensors"], {}

    def dec(x):
        if isinstance(x, list):
            return [dec(v) for v in x]
        if not isinstance(x, dict):
            return x
        if "tensor" in x:
            if x["tensor"] not in made:
                made[x["tensor"]] = tensors[x["tensor"]].clone().requires_grad_(x["requires_grad"])
            return made[x["tensor"]]
        if "tuple" in x:
            return tuple(dec(v) for v in x["tuple"])
        if "dict" in x:
            return {dec(k): dec(v) for k, v in x["dict"]}
        if "object" in x:
            cls, fields = CLASSES[x["object"]], {k: dec(v) for k, v in x["fields"].items()}
            if dataclasses.is_dataclass(cls):
                return cls(**fields)
            obj = cls.__new__(cls)          # Adam: its attributes as they were
            obj.__dict__.update(fields)
            return obj
        raise CheckpointError(f"unknown entry in a checkpoint: {sorted(x)}")
    return dec(json.loads(saved["state"]))


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
        torch.save(encode({"key": self.key, **state}), tmp)
        os.replace(tmp, self.path)      # a kill mid-write leaves the previous checkpoint whole
        self.last = time.perf_counter()
        self.saves += 1

    def load(self) -> dict | None:
        """The saved state when resuming (None when not resuming or nothing was saved yet)."""
        if not self.resume or not self.path.exists():
            return None
        try:
            saved = torch.load(self.path, weights_only=True)
        except Exception as e:      # weights_only refuses any pickled object that is not tensor data
            raise CheckpointError(f"{self.path} is not a baco checkpoint (refused by the tensors-only "
                                  f"loader: {' '.join(str(e).split())[:300]})") from None
        state = decode(saved)
        if state.pop("key") != self.key:
            raise ValueError(f"{self.path} is a checkpoint of another run (other layers or settings)")
        return state
