"""`import baco.language as bl`: the block language (see baco/frontend/language.py)."""
from baco.frontend.language import *  # noqa: F401,F403
from baco.frontend.language import __all__  # noqa: F401
