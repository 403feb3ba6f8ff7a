"""@baco.autotune: pick a kernel's launch configuration by timing candidates on the cycle model.

    @baco.autotune(configs=[baco.Config({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 64}, double_buffer=True),
                            baco.Config({"BLOCK_M": 32, "BLOCK_N": 128, "BLOCK_K": 64})],
                   key=["M", "N", "K"],
                   prune_configs_by=baco.autotune.cost_model_pruner(top_k=4))
    @baco.jit
    def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, ..., BLOCK_M: bl.constexpr, ...): ...

    grid = lambda meta: (bl.cdiv(meta["M"], meta["BLOCK_M"]), bl.cdiv(meta["N"], meta["BLOCK_N"]))
    matmul_kernel[grid](a, b, c, M, N, K, ...)

As in Triton: a `Config` holds constexpr values (and here the compile options `dataflow` and
`double_buffer`); `key` names the arguments whose values select a cached choice (an array
argument contributes its shape and dtype); `prune_configs_by` is
`{"early_config_prune": fn(configs, named_args) -> configs}` and/or
`{"perf_model": fn(**named_args, **config.all_kwargs(), config=GemminiConfig) -> cost, "top_k": n}`
(n an int, or a float <= 1 for a fraction). `cost_model_pruner(top_k)` is a ready perf model for
GEMM kernels (parameters M, N, K, BLOCK_M/N/K, optional OUT_INT8): baco.tuner.residual.compiled_cycles,
the differentiable model of the compiled GEMM kernel.

With no `configs`, the candidates are the GEMM schedule space of the launch's layer (`schedule_space`:
block sizes DIM·2^i and the whole padded dimension, every combination within capacity, single and
double buffered, the launch's dataflow), ranked by the cost model to the `top_k` (default 6) best,
plus baco's default schedule, which is always timed, so the choice is never slower than the
default on the cycle model.

Benchmarking: each surviving candidate whose block sizes fit (baco.gemmini.schedule.schedule_problems,
checked before compiling) is timed end to end, as the program a user runs: compiled into its RISC-V
runner ELF and run on the ISS with the cycle model attached (baco.sim.timing.TimingModel), the CPU
issuing every command, its cycles read by rdcycle around the grid loop and its fence. With
`end_to_end=False` it is compiled for the host instead and only its command stream is timed
(Gemmini alone, commands arriving for free). Either way it runs on scratch copies of the array
arguments, so the caller's arrays see exactly one run: the real launch with the winner. A
candidate the compiler rejects is skipped. The winner is cached in memory and on disk (JSON under the
compile cache dir, BACO_CACHE_DIR/autotune/) keyed by (kernel source hash, candidate list, key values,
the launch's CompileOptions, compiler fingerprint) and reused without re-timing. BACO_AUTOTUNE_PRINT=1 prints the
timings.
"""
from __future__ import annotations

import hashlib
import inspect
import json
import math
import os

import numpy as np

from baco.frontend.jit import LAUNCH_OPTIONS, JITFunction, _as_array
from baco.gemmini.schedule import DATAFLOWS, field_problems
from baco.options import launch_grid

CONFIG_OPTIONS = ("dataflow", "double_buffer")
DEFAULT_TOP_K = 6


class Config:
    """One candidate: constexpr values (`kwargs`, e.g. BLOCK_M) and optionally the compile options
    `dataflow` / `double_buffer`. `baco.Config({"BLOCK_M": 64}, double_buffer=True)` or
    `baco.Config(BLOCK_M=64, double_buffer=True)`."""

    def __init__(self, kwargs: dict | None = None, *, dataflow: str | None = None,
                 double_buffer: bool | None = None, **more):
        if kwargs is not None and not isinstance(kwargs, dict):
            raise TypeError(f"Config kwargs must be a dict of constexpr values, got {type(kwargs).__name__}")
        if dataflow is not None and dataflow not in DATAFLOWS:
            raise ValueError(f"Config dataflow must be one of {DATAFLOWS}, not {dataflow!r}")
        if double_buffer is not None and not isinstance(double_buffer, bool):
            raise TypeError(f"Config double_buffer must be a bool, not {double_buffer!r}")
        self.kwargs = dict(kwargs or {}, **more)
        self.options = {k: v for k, v in (("dataflow", dataflow), ("double_buffer", double_buffer))
                        if v is not None}

    def all_kwargs(self) -> dict:
        return {**self.kwargs, **self.options}

    def to_dict(self) -> dict:
        return {"kwargs": self.kwargs, **self.options}

    @classmethod
    def from_dict(cls, d: dict) -> "Config":
        return cls(d["kwargs"], **{k: d[k] for k in CONFIG_OPTIONS if k in d})

    @classmethod
    def from_schedule(cls, s) -> "Config":
        opts = s.launch_options()
        return cls({k: v for k, v in opts.items() if k not in CONFIG_OPTIONS},
                   **{k: opts[k] for k in CONFIG_OPTIONS})

    def schedule(self, dataflow="WS", double_buffer=False):
        """The GemmSchedule this config launches, when it sets BLOCK_M/N/K (else None)."""
        from baco.gemmini.schedule import GemmSchedule
        kw = self.all_kwargs()
        if not all(f"BLOCK_{x}" in kw for x in "MNK"):
            return None
        return GemmSchedule(kw["BLOCK_M"], kw["BLOCK_N"], kw["BLOCK_K"], kw.get("dataflow", dataflow),
                            bool(kw.get("double_buffer", double_buffer)))

    def __eq__(self, other):
        return isinstance(other, Config) and self.to_dict() == other.to_dict()

    def __hash__(self):
        return hash(json.dumps(self.to_dict(), sort_keys=True))

    def __repr__(self):
        return "Config(" + ", ".join(f"{k}={v!r}" for k, v in self.all_kwargs().items()) + ")"


# ---- the GEMM schedule space and its cost model ------------------------------------------------
def schedule_space(M: int, N: int, K: int, cfg, dataflow: str = "WS", out_int8: bool = False) -> list[Config]:
    """GEMM schedules for an M×N×K layer on `cfg`: per dimension the block sizes DIM·2^i below the
    padded dimension and the padded dimension itself (multiples of DIM), every combination that
    fits (schedule_problems), single and double buffered."""
    from baco.gemmini.schedule import GemmSchedule, schedule_problems
    d = cfg.dim

    def sizes(n):
        tiles = max(1, math.ceil(n / d))
        return sorted({d << i for i in range(tiles.bit_length()) if (1 << i) < tiles} | {tiles * d})

    out = []
    for bm in sizes(M):
        for bn in sizes(N):
            for bk in sizes(K):
                for db in (False, True):
                    s = GemmSchedule(bm, bn, bk, dataflow, db)
                    if not schedule_problems(s, cfg, out_int8):
                        out.append(Config.from_schedule(s))
    return out


def gemm_perf_model(*, M, N, K, BLOCK_M, BLOCK_N, BLOCK_K, config, dataflow="WS", double_buffer=False,
                    OUT_INT8=False, **_) -> float:
    """Predicted cycles of the GEMM kernel under these block sizes, end to end (the CPU issuing its
    commands): the program the compiler emits, LOOP_WS where the blocks fit the loop unit's halves
    (kernel_model.gemm_schedule_cycles, the tuner's model of it)."""
    from baco.gemmini.schedule import GemmSchedule
    from baco.tuner.kernel_model import gemm_schedule_cycles
    schedule = GemmSchedule(int(BLOCK_M), int(BLOCK_N), int(BLOCK_K), dataflow, bool(double_buffer))
    return gemm_schedule_cycles(int(M), int(N), int(K), schedule, config, out_int8=bool(OUT_INT8))


def cost_model_pruner(top_k: int | float = DEFAULT_TOP_K) -> dict:
    """prune_configs_by for GEMM kernels: keep the `top_k` candidates with the fewest cycles
    predicted by the compiled-program cost model (gemm_perf_model)."""
    return {"perf_model": gemm_perf_model, "top_k": top_k}


# ---- the autotuner ------------------------------------------------------------------------------
def checked_configs(fn: JITFunction, configs) -> list[Config]:
    """autotune's `configs` as Configs (a dict is a Config's constexpr values): each sets only
    constexpr parameters of the kernel, and block sizes (BLOCK_M/N/K) that are a valid schedule;
    else an error naming `configs[i]`."""
    if configs is None:
        return []
    if not isinstance(configs, (list, tuple)):
        raise TypeError(f"{fn.__name__}: autotune configs must be a list of baco.Config, got {type(configs).__name__}")
    out = []
    for i, c in enumerate(configs):
        if isinstance(c, dict):
            c = Config(c)
        elif not isinstance(c, Config):
            raise TypeError(f"{fn.__name__}: autotune configs[{i}] must be a baco.Config or a dict, "
                            f"got {type(c).__name__} {c!r}")
        wrong = sorted(k for k in c.kwargs if k not in fn.constexprs)
        if wrong:
            raise ValueError(f"{fn.__name__}: autotune configs[{i}] sets {wrong}, which are not constexpr parameters "
                             f"(constexprs: {sorted(fn.constexprs)})")
        s = c.schedule()
        bad = field_problems(s) if s is not None else []
        if bad:
            raise ValueError(f"{fn.__name__}: autotune configs[{i}] {c}: " + "; ".join(bad))
        out.append(c)
    return out


def function_key(f) -> list | None:
    """What a pruning function is, for the choice's cache key: where it is defined, a hash of its
    code and the values it closes over or takes as defaults (two pruners differ in one of them)."""
    if f is None:
        return None
    code = getattr(f, "__code__", None)
    body = hashlib.sha256(code.co_code + repr(code.co_consts).encode()).hexdigest()[:16] if code else repr(f)
    captured = [c.cell_contents for c in getattr(f, "__closure__", None) or ()]
    return [getattr(f, "__module__", None), getattr(f, "__qualname__", None), body,
            repr(captured), repr(getattr(f, "__defaults__", None)), repr(getattr(f, "__kwdefaults__", None))]


def checked_top_k(top_k) -> int | float:
    """prune_configs_by's top_k: a count (an int >= 1) or a fraction (a float in (0, 1])."""
    if isinstance(top_k, bool) or not isinstance(top_k, (int, float)):
        raise TypeError(f"prune_configs_by top_k must be an int or a float, got {type(top_k).__name__} {top_k!r}")
    if isinstance(top_k, int) and top_k < 1 or isinstance(top_k, float) and not 0.0 < top_k <= 1.0:
        raise ValueError(f"prune_configs_by top_k must be a count >= 1 or a fraction in (0, 1], got {top_k!r}")
    return top_k


class Autotuner:
    def __init__(self, fn: JITFunction, configs, key, prune_configs_by=None, cache_results=True,
                 end_to_end=True):
        if not isinstance(fn, JITFunction):
            raise TypeError("@baco.autotune goes above @baco.jit")
        self.fn = fn
        self.__name__ = fn.__name__
        self.configs = checked_configs(fn, configs)
        if not isinstance(key, (list, tuple)) or not all(isinstance(k, str) for k in key):
            raise TypeError(f"{fn.__name__}: autotune key must be a list of parameter names, got {key!r}")
        self.key = list(key)
        params = {p.name for p in fn.params}
        unknown = [k for k in self.key if k not in params]
        if unknown:
            raise ValueError(f"{fn.__name__}: autotune key {unknown} names no parameter; parameters: "
                             f"{[p.name for p in fn.params]}")
        if not self.configs:
            missing = [n for n in ("M", "N", "K", "BLOCK_M", "BLOCK_N", "BLOCK_K") if n not in params]
            if missing:
                raise ValueError(f"{fn.__name__}: autotune without configs draws GEMM schedules and needs "
                                 f"parameters {missing}")
        if prune_configs_by is not None and not isinstance(prune_configs_by, dict):
            raise TypeError(f"prune_configs_by must be a dict, got {type(prune_configs_by).__name__}")
        prune = dict(prune_configs_by or {})
        unknown = sorted(set(prune) - {"perf_model", "top_k", "early_config_prune"})
        if unknown:
            raise ValueError(f"prune_configs_by takes perf_model, top_k and early_config_prune, not {unknown}")
        for name in ("perf_model", "early_config_prune"):
            if prune.get(name) is not None and not callable(prune[name]):
                raise TypeError(f"prune_configs_by {name} must be a function, got {type(prune[name]).__name__}")
        if not self.configs and "perf_model" not in prune:
            prune.update(cost_model_pruner())
        self.perf_model = prune.get("perf_model")
        self.top_k = checked_top_k(prune.get("top_k", DEFAULT_TOP_K))
        self.early_config_prune = prune.get("early_config_prune")
        for name, value in (("cache_results", cache_results), ("end_to_end", end_to_end)):
            if not isinstance(value, bool):
                raise TypeError(f"autotune {name} must be a bool, got {value!r}")
        self.cache_results = cache_results
        self.end_to_end = end_to_end
        self.cache = {}                # cache key -> Config
        self.timings = {}              # last tuning: Config -> cycles (or the reason it was skipped)
        self.best_config = None
        self.source_hash = hashlib.sha256(inspect.getsource(fn.fn).encode()).hexdigest()[:16]

    def __getitem__(self, grid):
        return lambda *args, **kwargs: self.run(grid, *args, **kwargs)

    def __call__(self, *args, **kwargs):
        raise RuntimeError(f"launch the kernel with a grid: {self.__name__}[grid](...)")

    # ---- keys ---------------------------------------------------------------------------------
    def named_args(self, args, kwargs) -> dict:
        plain = {k: v for k, v in kwargs.items() if k not in LAUNCH_OPTIONS}
        try:
            bound = self.fn.signature.bind_partial(*args, **plain)
        except TypeError as e:
            raise TypeError(f"{self.__name__}: {e}") from None
        return dict(bound.arguments)

    def key_values(self, named) -> tuple:
        out = []
        for k in self.key:
            arr = _as_array(named.get(k))
            out.append([list(arr.shape), str(arr.dtype)] if arr is not None else named.get(k))
        return tuple(out)

    def cache_key(self, named, compile_options) -> str:
        """The tuned choice's key: the kernel, its candidates, the key arguments' values and the
        launch's CompileOptions (LOOP_WS and the target included: they change what is timed)."""
        from baco.compiler import compiler_fingerprint
        pruning = [function_key(self.early_config_prune), function_key(self.perf_model), self.top_k]
        blob = json.dumps([self.__name__, self.source_hash, [c.to_dict() for c in self.configs], pruning,
                           self.key_values(named), compile_options.key(), self.end_to_end, compiler_fingerprint()],
                          sort_keys=True, default=str)
        return hashlib.sha256(blob.encode()).hexdigest()[:32]

    # ---- candidates ---------------------------------------------------------------------------
    def candidates(self, named, gemmini_cfg, options) -> list[Config]:
        out_int8 = bool(named.get("OUT_INT8", False))
        if self.configs:
            configs = list(self.configs)
        else:
            configs = schedule_space(int(named["M"]), int(named["N"]), int(named["K"]), gemmini_cfg,
                                     options["dataflow"], out_int8)
        if self.early_config_prune is not None:
            kept = self.early_config_prune(configs, dict(named))
            if not isinstance(kept, (list, tuple)) or not all(c in configs for c in kept):
                raise TypeError(f"{self.__name__}: prune_configs_by early_config_prune must return a list of the "
                                f"configs it was given, got {kept!r}")
            if not kept:
                raise ValueError(f"{self.__name__}: prune_configs_by early_config_prune kept no config")
            configs = list(kept)
        if self.perf_model is not None and len(configs) > 1:
            k = self.top_k
            k = max(1, int(len(configs) * k)) if isinstance(k, float) else k
            base = {k: options[k] for k in CONFIG_OPTIONS}
            cost = {}
            for c in configs:
                cost[c] = self.perf_model(**named, **{**base, **c.all_kwargs()}, config=gemmini_cfg)
                real = isinstance(cost[c], (int, float, np.integer, np.floating)) and not isinstance(cost[c], bool)
                if not real or math.isnan(cost[c]):
                    raise TypeError(f"{self.__name__}: prune_configs_by perf_model must return a number, got "
                                    f"{cost[c]!r} for {c}")
            configs = sorted(configs, key=lambda c: cost[c])[:k]
        if not self.configs:
            from baco.gemmini.schedule import default_gemm_schedule
            default = default_gemm_schedule(int(named["M"]), int(named["N"]), int(named["K"]), gemmini_cfg,
                                            out_int8)
            if options["dataflow"] == default.dataflow:
                configs = list(dict.fromkeys(configs + [Config.from_schedule(default)]))
        return configs

    def bench(self, grid, args, kwargs, config: Config, gemmini_cfg, options) -> float | str:
        """Cycles of one launch under `config` on the cycle model (end to end on the ISS, or its
        command stream alone; scratch arrays), or why it cannot run."""
        from baco.errors import CompilationError
        from baco.gemmini.schedule import schedule_problems
        from baco.sim.timing import CommandStream, TimingModel
        s = config.schedule(options["dataflow"], options["double_buffer"])
        if s is not None:
            problems = schedule_problems(s, gemmini_cfg, bool(self.named_args(args, kwargs).get("OUT_INT8")))
            if problems:
                return "; ".join(problems)
        kw = {**kwargs, **config.all_kwargs(), "target": "iss" if self.end_to_end else "sim"}
        values, opts = self.fn.bind(list(args), kw)
        launch = launch_grid(grid(values) if callable(grid) else grid, self.__name__)
        try:        # compiled for its grid, as the launch it times is (a shape-specialized one folds it)
            ck, runtime = self.fn._compiled(values, opts, None, launch)
        except CompilationError as e:
            return str(e).splitlines()[0]
        scratch = [np.copy(a) if isinstance(a, np.ndarray) else a for a in runtime]
        tm = TimingModel(ck.config)
        if self.end_to_end:
            return float(ck.run(launch, scratch, timing=tm)["kernel_cycles"])
        ck.run(launch, scratch, model=CommandStream(), observers=[tm.observe])
        tm.fence()
        return float(tm.report()["cycles"])

    def tune(self, grid, args, kwargs, named, gemmini_cfg, options) -> Config:
        self.timings = {}
        # the launch's own arguments are checked before the pruning and the candidates (an empty
        # pruning, or candidates all skipped for their blocks, must not hide a wrong argument)
        probe = self.configs[0].all_kwargs() if self.configs else {f"BLOCK_{x}": gemmini_cfg.dim for x in "MNK"}
        self.fn.specialize(self.fn.bind(list(args), {**kwargs, **probe})[0])
        candidates = self.candidates(named, gemmini_cfg, options)
        for c in candidates:
            self.timings[c] = self.bench(grid, args, kwargs, c, gemmini_cfg, options)
        timed = {c: t for c, t in self.timings.items() if not isinstance(t, str)}
        if os.environ.get("BACO_AUTOTUNE_PRINT") == "1":
            for c, t in self.timings.items():
                print(f"autotune {self.__name__} {self.key_values(named)}: {c}: "
                      f"{f'{t:,.0f} cycles' if c in timed else 'skipped: ' + t}")
        if not timed:
            raise ValueError(f"{self.__name__}: no autotune candidate runs: " +
                             "; ".join(f"{c}: {t}" for c, t in self.timings.items()))
        best = min(timed, key=timed.get)
        if os.environ.get("BACO_AUTOTUNE_PRINT") == "1":
            print(f"autotune {self.__name__}: chose {best} ({timed[best]:,.0f} cycles)")
        return best

    def choose(self, grid, args, kwargs) -> Config:
        """The cached or freshly tuned config for this launch."""
        from baco.compiler import cache_dir
        named = self.named_args(args, kwargs)
        options = {k: kwargs.get(k, self.fn.defaults[k]) for k in LAUNCH_OPTIONS}
        clash = sorted(set(kwargs) & ({k for c in self.configs for k in c.all_kwargs()}))
        if clash:
            raise ValueError(f"{self.__name__}: {clash} are chosen by autotune; do not pass them")
        compile_options = self.fn.compile_options({k: v for k, v in options.items() if k != "schedule"})
        gemmini_cfg = compile_options.config
        key = self.cache_key(named, compile_options)
        if key in self.cache:
            return self.cache[key]
        cdir = cache_dir() if self.cache_results else None
        path = cdir / "autotune" / f"{key}.json" if cdir else None
        if path is not None and path.exists():
            best = Config.from_dict(json.loads(path.read_text())["config"])
        else:
            best = self.tune(grid, args, kwargs, named, gemmini_cfg, options)
            if path is not None:
                path.parent.mkdir(parents=True, exist_ok=True)
                tmp = path.with_suffix(f".{os.getpid()}.tmp")
                tmp.write_text(json.dumps({
                    "kernel": self.__name__, "key": dict(zip(self.key, self.key_values(named))),
                    "config": best.to_dict(),
                    "timings": [{"config": c.to_dict(), "cycles": t} for c, t in self.timings.items()]},
                    indent=1, default=str))
                tmp.replace(path)
        self.cache[key] = best
        return best

    def run(self, grid, *args, **kwargs):
        self.best_config = self.choose(grid, args, kwargs)
        return self.fn.run(grid, *args, **kwargs, **self.best_config.all_kwargs())


def autotune(configs=None, key=(), prune_configs_by=None, cache_results=True, end_to_end=True):
    """Decorator above @baco.jit (see the module docstring)."""
    return lambda fn: Autotuner(fn, configs, key, prune_configs_by, cache_results, end_to_end)


autotune.cost_model_pruner = cost_model_pruner
autotune.schedule_space = schedule_space
