"""Import an existing gemmini_params.h (as Gemmini's generator writes it) with
a lark grammar: the #define values give the GemminiConfig / tuner Hardware a
search can start from."""
from __future__ import annotations

from pathlib import Path

from lark import Lark, Transformer

from baco.gemmini.config import GemminiConfig
from baco.tuner.arch import Hardware

GRAMMAR = r"""
start: (line? _NL)*
?line: define | directive | text
define: "#" _WS? "define" _WS NAME PARAMS? (_WS VALUE)? _WS?
directive: "#" _WS? DIRECTIVE REST?
text: TEXT
PARAMS: "(" /[^)\n]*/ ")"
VALUE: /[^ \t\n][^\n]*/
REST: /[^\n]+/
TEXT: /[^#\n][^\n]*/
DIRECTIVE: "ifndef" | "ifdef" | "if" | "endif" | "else" | "elif" | "include" | "undef" | "pragma" | "error"
NAME: /[A-Za-z_][A-Za-z0-9_]*/
_WS: /[ \t]+/
_NL: /\r?\n/
"""

_parser = Lark(GRAMMAR, parser="earley", lexer="dynamic")


def _strip_comments(text: str) -> str:
    out, i = [], 0
    while i < len(text):
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            out.append("\n" * text.count("\n", i, j if j >= 0 else len(text)))
            i = len(text) if j < 0 else j + 2
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = len(text) if j < 0 else j
        else:
            out.append(text[i])
            i += 1
    # join macro continuation lines
    return "".join(out).replace("\\\n", " ")


class _Defines(Transformer):
    def start(self, items):
        return dict(i for i in items if isinstance(i, tuple))

    def define(self, items):
        name = str(items[0])
        is_macro = any(getattr(t, "type", "") == "PARAMS" for t in items[1:])
        value = next((str(t).strip() for t in items[1:] if getattr(t, "type", "") == "VALUE"), "")
        return (name, None if is_macro else value)


def parse_defines(text: str) -> dict:
    """Object-like #defines of a C header: name -> value text ('' when flag-only)."""
    return _Defines().transform(_parser.parse(_strip_comments(text).rstrip("\n") + "\n"))


def _int(defines, name):
    try:
        return int(defines[name].split()[0].rstrip("uUlL"), 0)
    except KeyError:
        raise ValueError(f"gemmini_params.h does not define {name}") from None


def config_from_header(text: str) -> GemminiConfig:
    d = parse_defines(text)
    dim, banks, bank_rows, acc_rows = (_int(d, n) for n in ("DIM", "BANK_NUM", "BANK_ROWS", "ACC_ROWS"))
    input_type = "int8"
    return GemminiConfig(dim=dim, sp_banks=banks, sp_bank_rows=bank_rows, acc_rows=acc_rows,
                         input_type=input_type, max_bytes=_int(d, "MAX_BYTES") if "MAX_BYTES" in d else 64,
                         acc_read_full_width="ACC_READ_FULL_WIDTH" in d,
                         has_normalizations="HAS_NORMALIZATIONS" in d).validate()


def load_params_header(path) -> GemminiConfig:
    return config_from_header(Path(path).read_text())


def hardware_from_header(path) -> Hardware:
    return Hardware.from_gemmini_config(load_params_header(path))
