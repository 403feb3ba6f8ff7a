"""Kernels that call @baco.jit helpers wrongly, for tests/test_frontend_calls.py (which finds
each error's line by its text)."""
import baco
import baco.language as bl
from tests.kernels import helpers


def plain_python(x):
    return x + 1


@baco.jit
def int32_dot(acc):
    return bl.dot(acc, acc)


@baco.jit
def dot_in_helper(c_ptr, M):
    acc = bl.zeros((16, 16), dtype=bl.int32)
    acc = int32_dot(acc)
    bl.store(helpers.tile_ptr(c_ptr, M, M, M, 0, 0, 16, 16), acc)


@baco.jit
def countdown(n, DEPTH: bl.constexpr):
    return countdown(n, DEPTH - 1)


@baco.jit
def recursive(c_ptr, M):
    m = countdown(M, 3)


@baco.jit
def ping(n):
    return pong(n)


@baco.jit
def pong(n):
    return ping(n)


@baco.jit
def mutually_recursive(c_ptr, M):
    m = ping(M)


@baco.jit
def calls_plain_python(c_ptr, M):
    m = plain_python(M)


@baco.jit
def too_many_arguments(c_ptr, M):
    p = helpers.tile_ptr(c_ptr, M, M, M, 0, 0, 16, 16, 3)


@baco.jit
def too_few_arguments(c_ptr, M):
    p = helpers.tile_ptr(c_ptr, M, M, M, 0, 0, 16)


@baco.jit
def unknown_keyword(c_ptr, M):
    p = helpers.tile_ptr(c_ptr, M, M, M, 0, 0, BR=16, BC=16, ORDER=1)


@baco.jit
def runtime_constexpr(c_ptr, M):
    p = helpers.tile_ptr(c_ptr, M, M, M, 0, 0, M, 16)


@baco.jit
def loop_return(n):
    for i in range(n):
        return i
    return n


@baco.jit
def calls_loop_return(c_ptr, M):
    m = loop_return(M)


@baco.jit
def branch_return(n, FIRST: bl.constexpr):
    if FIRST:
        return n
    return n + 1


@baco.jit
def calls_branch_return(c_ptr, M):
    m = branch_return(M, True)


@baco.jit
def shifted_left(c_ptr, M):
    return bl.load(helpers.tile_ptr(c_ptr, M, M, M, 0, -3, 16, 16), boundary_check=(0, 1))


@baco.jit
def loads_shifted_left(c_ptr, M):
    bl.store(helpers.tile_ptr(c_ptr, M, M, M, 0, 0, 16, 16), shifted_left(c_ptr, M))
