"""baco: a Python compiler and co-exploration framework for the Gemmini accelerator."""
from baco.errors import CompilationError
from baco.frontend.autotune import Autotuner, Config, autotune
from baco.frontend.jit import JITFunction, jit
from baco.model.compile import CompiledModel, compile_model

__all__ = ["jit", "JITFunction", "autotune", "Autotuner", "Config", "CompilationError", "compile_model", "CompiledModel"]
__version__ = "0.1.0"
