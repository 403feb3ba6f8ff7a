"""Reading the text inputs of the command-line tools (`baco opt`, `baco translate`, `baco llc`):
a file or stdin, with one-line errors. Apart from baco/cli.py so that importing a stage does not
import the dispatcher (`python -m baco.cli` would then find it imported already)."""
import sys


def input_name(path: str) -> str:
    """How errors name an input file ('-' is stdin)."""
    return "<stdin>" if path == "-" else path


def read_text(path: str, what: str = "input") -> str:
    """A text input file ('-' for stdin), or a one-line error (ValueError)."""
    if path == "-":
        return sys.stdin.read()
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not a text file (is it a binary, e.g. an object or ELF?)") from None
