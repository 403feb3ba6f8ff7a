"""The shared driver of the passes written as rewrite patterns (MLIR's Python rewrite API,
`mlir.rewrite`).

A pattern is a Python callable `(op, rewriter) -> bool` registered on an op name (IRDL ops,
BACO's and InstGem's, have no Python op class, so every root is a name): it is called with the
`Operation` (not an OpView), the insertion point before it and its location entered, and
returns True when it rewrote the op (MLIR's binding reads the callback's result the other way
round: a falsy value means success).
Two drivers, both of which leave the IR exactly as the patterns write it (no folding, no
constant CSE, no region simplification):

- `WALK`: `walk_and_apply_patterns`, one post-order walk, every op visited once (an op's regions
  before the op, the ops of a block in order); a pattern may erase only the op it matched.
- `IN_ORDER`: the greedy driver, top-down (an op before its regions, which a pass whose
  analysis flows from producers to users and from a loop into its body needs), until nothing
  matches; it also erases ops left trivially dead. Its patterns must therefore fail once their
  op is done (it sweeps again after a change), and erase ops the driver has listed only through
  `rewriter.erase_op` / `rewriter.replace_op`.

An exception raised by a pattern (a located CompilationError) is kept, every later match fails,
and it is raised once the driver is back: nothing is thrown through MLIR's C++ frames.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping

from mlir.rewrite import (GreedyRewriteConfig, GreedySimplifyRegionLevel, RewritePatternSet,
                          apply_patterns_and_fold_greedily, walk_and_apply_patterns)

Pattern = Callable[[object, object], bool]

WALK = "walk"
IN_ORDER = "in-order"
DRIVERS = (WALK, IN_ORDER)


def apply_patterns(module_op, patterns: Mapping[str, Pattern], driver: str) -> None:
    """Rewrite `module_op` with `patterns` (op name -> pattern) by `driver` (WALK or IN_ORDER)."""
    if driver not in DRIVERS:
        raise ValueError(f"driver must be one of {DRIVERS} (got {driver!r})")
    raised: list[BaseException] = []

    def adapt(pattern: Pattern):
        def match_and_rewrite(op, rewriter):
            if raised:
                return True
            op = op.operation           # the binding hands an OpView; erase_op takes an Operation
            try:
                with rewriter.ip, op.location:
                    return not pattern(op, rewriter)
            except Exception as e:      # noqa: BLE001 — re-raised below, outside MLIR's frames
                raised.append(e)
                return True
        return match_and_rewrite

    pattern_set = RewritePatternSet()
    for name, pattern in patterns.items():
        pattern_set.add(name, adapt(pattern))
    frozen = pattern_set.freeze()
    if driver == WALK:
        walk_and_apply_patterns(module_op, frozen)
    else:
        apply_patterns_and_fold_greedily(module_op, frozen, _in_order_config())
    if raised:
        raise raised[0]


def _in_order_config() -> GreedyRewriteConfig:
    config = GreedyRewriteConfig()
    config.use_top_down_traversal = True
    config.enable_folding = False
    config.enable_constant_cse = False
    config.region_simplification_level = GreedySimplifyRegionLevel.DISABLED
    return config
