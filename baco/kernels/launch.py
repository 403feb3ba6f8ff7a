"""A prepared kernel launch as data: the kernel, its grid, runtime arguments, compile options
and output array, which runs, times itself or writes a self-checking ELF. The convolution,
pooling, GEMM and residual-add kernels hand these out, and whole models (baco.model) keep a
list of them."""
import numpy as np


class KernelLaunch:
    """A prepared launch of a block kernel (kernel, grid, runtime arguments with the output
    array as argument 2, compile options with the GemminiConfig, optional int32 bias as the last
    argument, passed as the `bias_ptr` option): runs it, times it, or writes a self-checking ELF
    of it."""

    def __init__(self, kernel, grid, args, options, y, config, bias=None):
        self.kernel, self.grid, self.args, self.y, self.config, self.bias = kernel, grid, args, y, config, bias
        self.options = dict(options, config=config) if bias is None else dict(options, config=config, bias_ptr=bias)

    def runtime_args(self) -> list:
        """The arguments a compiled kernel's run takes: the launch's, then its bias array (the
        kernel's bias_ptr, its last runtime argument) where it has one."""
        return self.args + ([] if self.bias is None else [self.bias])

    def run(self, target="sim"):
        return self.kernel[self.grid](*self.args, target=target, **self.options)

    def compiled(self, target="sim", **options):
        """The CompiledKernel of this launch for `target` (`options` over the launch's), compiled
        for its grid (which a shape-specialized kernel folds)."""
        return self.kernel.compile(*self.args, target=target, grid=self.grid, **dict(self.options, **options))

    def cycles(self) -> dict:
        """The cycle model's report (cycles, ...) of this launch, timed from its command stream
        (which does not depend on the data)."""
        from baco.sim.timing import CommandStream, TimingModel
        ck = self.compiled("sim")
        tm = TimingModel(self.config)
        ck.run(self.grid, self.runtime_args(), model=CommandStream(), observers=[tm.observe])
        tm.fence()
        return tm.report()

    def write_elf(self, path, expected):
        """A bare-metal ELF of this launch that exits 0 iff its output equals `expected`."""
        ck = self.compiled("iss")
        return ck.build_elf(self.grid, self.runtime_args(), path,
                            expected={2: np.asarray(expected).reshape(self.args[2].shape)})
