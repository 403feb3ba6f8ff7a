"""@baco.jit: specialization, caching and launch of block kernels."""
from __future__ import annotations

import os

import numpy as np

from baco.errors import DIVISION_BY_ZERO, RUNTIME_ERRORS, ZERO_STEP, KernelRuntimeError
from baco.frontend import language as bl
from baco.frontend.codegen import KernelCodegen, KernelSource, helper_sources
from baco.gemmini.config import NUMPY_ELEMENTS
from baco.options import TARGETS, CompileOptions, exact_int, full_grid, launch_grid

LAUNCH_OPTIONS = ("target", "config", "dataflow", "double_buffer", "schedule", "loop_ws")


def specialized(specialize_shapes, target: str) -> bool:
    """Whether a launch compiled for `target` compiles its integer arguments as constants."""
    return specialize_shapes is True or specialize_shapes == target


def _as_array(x):
    """numpy view of a numpy array or CPU torch tensor (same storage, so results reach the caller)."""
    if isinstance(x, np.ndarray):
        return x
    if type(x).__module__.startswith("torch"):
        if x.device.type != "cpu":
            raise TypeError("torch tensors must be on the CPU")
        return x.detach().numpy()
    return None


class JITFunction:
    def __init__(self, fn, *, target="sim", config=None, dataflow="WS", double_buffer=False, interpret=None,
                 specialize_shapes=False, loop_conv=True):
        self.fn = fn
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__
        self.kernel_source = KernelSource.of(fn)
        self.signature = self.kernel_source.signature
        self.params = list(self.signature.parameters.values())
        self.constexprs = self.kernel_source.constexprs
        self.first_line = self.kernel_source.line_offset + 1     # the `def` line (or its first decorator's)
        self.defaults = dict(target=target, config=config, dataflow=dataflow, double_buffer=double_buffer,
                             schedule=None, loop_ws=None)
        self.interpret = interpret
        self.specialize_shapes = self.shape_option(specialize_shapes)
        if not isinstance(loop_conv, bool):
            raise TypeError(f"{self.__name__}: loop_conv must be a bool, got {type(loop_conv).__name__} {loop_conv!r}")
        self.loop_conv = loop_conv
        self.cache = {}

    def __getitem__(self, grid):
        return lambda *args, **kwargs: self.run(grid, *args, **kwargs)

    def __call__(self, *args, **kwargs):
        """A call from a kernel the interpreter runs (compiled kernels inline their helpers)."""
        if getattr(bl._state, "program", None) is not None:
            return self.fn(*args, **kwargs)
        raise RuntimeError(f"launch the kernel with a grid: {self.__name__}[grid](...), or call it from "
                           f"another @baco.jit function, which inlines it")

    # ---- specialization -------------------------------------------------------------
    def shape_option(self, value):
        """`specialize_shapes` checked: a bool or a target name."""
        if not (isinstance(value, bool) or (isinstance(value, str) and value in TARGETS)):
            raise ValueError(f"{self.__name__}: specialize_shapes must be True, False or a target "
                             f"{TARGETS}, not {value!r}")
        return value

    def bind(self, args, kwargs):
        """(the kernel's arguments by name, the CompileOptions of this launch)."""
        given = {k for k in self.defaults if k in kwargs}
        options = {k: kwargs.pop(k) if k in kwargs else v for k, v in self.defaults.items()}
        schedule = options.pop("schedule")
        self.compile_options(options)           # every option checked before a schedule is read
        if schedule is not None:
            self.apply_schedule(schedule, options, given, kwargs)
        try:
            bound = self.signature.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{self.__name__}: {e}") from None
        bound.apply_defaults()
        return dict(bound.arguments), self.compile_options(options)

    def compile_options(self, options: dict) -> CompileOptions:
        """The launch options as CompileOptions (taken as they are, never converted: config a
        GemminiConfig or None, double_buffer a bool, loop_ws a bool or None); an error names the
        kernel and the option."""
        try:
            return CompileOptions.of(**options)
        except (TypeError, ValueError) as e:
            raise type(e)(f"{self.__name__}: {e}") from None

    def apply_schedule(self, schedule, options, given, kwargs):
        """`schedule=` (a GemmSchedule or its dict) fills BLOCK_M/N/K and the
        compile options; an explicit launch value that disagrees is an error."""
        from baco.gemmini.schedule import as_schedule
        for name, value in as_schedule(schedule).launch_options().items():
            if name in options:
                if name in given and options[name] != value:
                    raise ValueError(f"{self.__name__}: {name}={options[name]!r} contradicts the schedule's {value!r}")
                options[name] = value
            elif name in kwargs and kwargs[name] != value:
                raise ValueError(f"{self.__name__}: {name}={kwargs[name]!r} contradicts the schedule's {value!r}")
            elif name in self.constexprs:
                kwargs[name] = value
            else:
                raise ValueError(f"{self.__name__}: the schedule sets {name}, which is not a constexpr parameter")

    def specialize(self, values, shapes: bool = False):
        """(params for codegen, runtime args, cache key). An integer argument's param carries its
        value when the code is specialized on it: always with `shapes` (the launch's integers
        compiled as constants), else only a value of 1 (None otherwise)."""
        params, runtime, key = [], [], []
        for p in self.params:
            v = values[p.name]
            if p.name in self.constexprs:
                if isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)):
                    v = exact_int(v, f"{self.__name__}: constexpr `{p.name}`")   # an i64 in the code
                elif isinstance(v, (np.floating, np.bool_)):
                    v = v.item()          # the same value as a Python float / bool
                params.append((p.name, "const", v))
                key.append(("c", p.name, v if isinstance(v, (int, float, bool, str, type(None))) else repr(v)))
                continue
            if v is None and p.default is None:    # an optional argument (`bias_ptr=None`) left out:
                # a compile-time constant, so `if bias_ptr is not None:` folds
                params.append((p.name, "const", None))
                key.append(("n", p.name))
                continue
            arr = _as_array(v)
            if arr is not None:
                if arr.dtype not in NUMPY_ELEMENTS:
                    raise TypeError(f"{self.__name__}: argument `{p.name}` has dtype {arr.dtype}; "
                                    "kernels take int8, int32 or float32 arrays")
                if not arr.flags.c_contiguous:
                    raise TypeError(f"{self.__name__}: argument `{p.name}` must be C-contiguous")
                kind = f"memref<?x{NUMPY_ELEMENTS[arr.dtype].mlir}>"
                runtime.append(arr)
                params.append((p.name, kind, None))
                key.append(("a", kind))
            elif isinstance(v, bool):
                raise TypeError(f"{self.__name__}: bool argument `{p.name}` must be a constexpr parameter")
            elif isinstance(v, (int, np.integer)):
                v = exact_int(v, f"{self.__name__}: argument `{p.name}`")
                runtime.append(v)
                params.append((p.name, "index", v if shapes or v == 1 else None))
                key.append(("v", v) if shapes else ("i", v == 1))   # ("i", False) == ("i", 0): tagged apart
            elif isinstance(v, (float, np.floating)):
                runtime.append(float(v))
                params.append((p.name, "f32", None))
                key.append(("f",))
            else:
                raise TypeError(f"{self.__name__}: unsupported argument `{p.name}` of type {type(v).__name__}")
        return params, runtime, tuple(key)

    def baco_ir(self, params, grid=None) -> str:
        """The kernel's BACO IR for `params` (specialize's), compiled for `grid` (full_grid's three
        axes) when given."""
        return KernelCodegen(self.kernel_source, params, grid, self.loop_conv).generate()

    def compile(self, *args, **kwargs):
        """The CompiledKernel for these arguments (compiled once per specialization)."""
        return self.compile_launch(*args, **kwargs)[0]

    def compile_launch(self, *args, **kwargs):
        """(CompiledKernel, runtime arguments): the kernel for these arguments and the values it
        is called with, in its parameters' order (constexprs and omitted optionals left out).
        `grid=` (the launch's grid, or a function of the arguments by name as a launch takes it):
        a shape-specialized kernel is compiled for it (its program ids and sizes folded) and runs
        only that grid; without it the kernel runs any grid."""
        kwargs = dict(kwargs)
        grid = kwargs.pop("grid", None)
        values, options, shapes = self.prepare(args, kwargs)
        return self._compiled(values, options, shapes, None if grid is None else self.grid_of(grid, values))

    def prepare(self, args, kwargs: dict):
        """(the arguments by name, CompileOptions, specialize_shapes) of a launch or compile:
        `specialize_shapes` popped from `kwargs` and checked, the rest bound."""
        shapes = self.shape_option(kwargs.pop("specialize_shapes", self.specialize_shapes))
        values, options = self.bind(list(args), kwargs)
        return values, options, shapes

    def grid_of(self, grid, values) -> tuple[int, ...]:
        """The launch's grid as integers (`grid` a function of the arguments by name, or the grid)."""
        return launch_grid(grid(values) if callable(grid) else grid, self.__name__)

    def _compiled(self, values, options: CompileOptions, shapes=None, grid=None):
        """(CompiledKernel, runtime arguments), compiled once per specialization; `shapes` a
        specialize_shapes value (None: the kernel's); `grid` the launch's grid, part of a
        shape-specialized compile (its axes' program ids and sizes constants; any grid if None)."""
        from baco.compiler import compile_module
        shapes = specialized(self.specialize_shapes if shapes is None else shapes, options.target)
        params, runtime, key = self.specialize(values, shapes)
        grid = full_grid(grid) if shapes and grid is not None else None
        key = key + (("g", grid),) + options.key() + tuple(h.digest for h in helper_sources(self.kernel_source))
        ck = self.cache.get(key)
        if ck is None:
            ck = compile_module(self.baco_ir(params, grid), self.__name__, options,
                                fixed={p: v for p, kind, v in params if kind == "index" and v is not None},
                                grid=grid)
            self.cache[key] = ck
        return ck, runtime

    # ---- launch ------------------------------------------------------------------------
    def run(self, grid, *args, **kwargs):
        values, options, shapes = self.prepare(args, dict(kwargs))
        grid = self.grid_of(grid, values)
        interpret = self.interpret if self.interpret is not None else os.environ.get("BACO_INTERPRET") == "1"
        ck, runtime = self._compiled(values, options, shapes, grid)
        if interpret:   # compiled first: the interpreter rejects exactly what the compiler rejects
            return self.interpret_launch(grid, values, options.dataflow, ck.config)
        return ck.run(grid, runtime)

    def interpret_launch(self, grid, values, dataflow, config):
        """Run the kernel body in Python on numpy blocks, program by program, with
        Gemmini's arithmetic (float scalars are float32, as in the compiled kernel)."""
        call = {}
        for p in self.params:
            v = values[p.name]
            arr = _as_array(v)
            if arr is not None:
                v = bl.Pointer(arr)
            elif p.name not in self.constexprs and isinstance(v, (float, np.floating)):
                v = np.float32(v)
            elif p.name not in self.constexprs and isinstance(v, (int, np.integer)):
                v = int(v)
            call[p.name] = v
        g = full_grid(grid)
        for p2 in range(g[2]):
            for p1 in range(g[1]):
                for p0 in range(g[0]):
                    bl._state.program = bl._Program((p0, p1, p2), g, dataflow, config.spatial_output_bits)
                    try:
                        self.fn(**call)
                    except (ZeroDivisionError, ValueError) as e:
                        located = self.interpreted_runtime_error(e)
                        if located is None:
                            raise
                        raise located from None
                    finally:
                        bl._state.program = None
        return {"interpreted": True, "programs": g[0] * g[1] * g[2], "commands": 0, "seconds": 0.0}

    def interpreted_runtime_error(self, error: Exception):
        """The KernelRuntimeError the compiled kernel raises for the Python error the interpreted
        one stopped at (a division by zero, a zero range() step), at the kernel's line:col; None
        for any other error."""
        if isinstance(error, ZeroDivisionError):
            code = DIVISION_BY_ZERO
        elif isinstance(error, ValueError) and str(error) == "range() arg 3 must not be zero":
            code = ZERO_STEP
        else:
            return None
        codes = {self.fn.__code__} | {h.code for h in helper_sources(self.kernel_source)}
        tb, where = error.__traceback__, None
        while tb is not None:        # the innermost frame of the kernel's own code or its helpers'
            if tb.tb_frame.f_code in codes:
                where = tb
            tb = tb.tb_next
        if where is None:
            return None
        col = list(where.tb_frame.f_code.co_positions())[where.tb_lasti // 2][2]
        return KernelRuntimeError(RUNTIME_ERRORS[code], where.tb_lineno, (col or 0) + 1)


def jit(fn=None, **options):
    """Decorator: `@baco.jit` or `@baco.jit(dataflow="OS", target="iss", config=…)`.
    Launch options (`target`, `config`, `dataflow`, `double_buffer`, `schedule`, `loop_ws`: the
    hardware-loop rewrites (LOOP_WS, LOOP_CONV_WS) on/off, None for BACO_LOOP_WS)
    can also be given per launch / compile.

    `specialize_shapes` (the kernel's default; also per launch / compile): compile the launch's
    integer (non-constexpr) arguments as constants, so the arithmetic on them (a LOOP_WS's bounds
    and strides, the configs) folds away when the code is compiled; the kernel is then compiled
    once per distinct set of integers, and a launch passes exactly those values. The launch's grid
    is part of it (a compile's `grid=`): `bl.program_id(a)` of an axis of size 1 is the constant 0,
    `bl.num_programs(a)` the axis's size, and the kernel runs only that grid. False (default):
    only an integer equal to 1 is a constant (one compile serves every other value); True: always;
    a target name ("iss"): only when compiled for that target (the ISS and the ELFs, whose CPU
    instructions are part of the program's time; the host simulator's are not).

    `loop_conv` (the kernel's, default True): False says the kernel's programs are not
    convolutions, so none becomes LOOP_CONV_WS (a GEMM kernel: compiled for its shapes, a program
    of one K step is the same IR as a 1x1 convolution whose one tap folded away, and the GEMM's
    schedules are priced as LOOP_WS or explicit streams)."""
    if fn is None:
        return lambda f: JITFunction(f, **options)
    return JITFunction(fn, **options)
