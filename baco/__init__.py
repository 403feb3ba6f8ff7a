"""baco: a Python compiler and co-exploration framework for the Gemmini accelerator."""
from baco.errors import CompilationError
from baco.frontend.autotune import Autotuner, Config, autotune
from baco.frontend.jit import JITFunction, jit

__all__ = ["jit", "JITFunction", "autotune", "Autotuner", "Config", "CompilationError"]
__version__ = "0.1.0"
