"""Malformed kernels for tests/test_errors.py. Line numbers matter: the tests
assert the exact line and column each error points at."""
import baco
import baco.language as bl


@baco.jit
def dot_of_int32(a_ptr, c_ptr, M, BLOCK: bl.constexpr):
    p = bl.make_block_ptr(a_ptr, shape=(M, M), strides=(M, 1), offsets=(0, 0), block_shape=(BLOCK, BLOCK))
    acc = bl.zeros((BLOCK, BLOCK), dtype=bl.int32)
    acc = bl.dot(acc, acc)
    c = bl.make_block_ptr(c_ptr, shape=(M, M), strides=(M, 1), offsets=(0, 0), block_shape=(BLOCK, BLOCK))
    bl.store(c, acc)


@baco.jit
def runtime_block_shape(a_ptr, M, N):
    p = bl.make_block_ptr(a_ptr, shape=(M, M), strides=(M, 1), offsets=(0, 0), block_shape=(N, 16))
    bl.load(p)


@baco.jit
def while_loop(a_ptr, M):
    i = 0
    while i < M:
        i += 1


@baco.jit
def unknown_name(a_ptr, M):
    p = bl.make_block_ptr(a_ptr, shape=(M, M), strides=(M, 1), offsets=(0, 0), block_shape=(16, 16))
    x = bl.load(p)
    bl.store(p, undefined_thing)


@baco.jit
def wrong_store_dtype(a_ptr, c_ptr, M, BLOCK: bl.constexpr):
    a = bl.make_block_ptr(a_ptr, shape=(M, M), strides=(M, 1), offsets=(0, 0), block_shape=(BLOCK, BLOCK))
    c = bl.make_block_ptr(c_ptr, shape=(M, M), strides=(M, 1), offsets=(0, 0), block_shape=(BLOCK, BLOCK))
    acc = bl.dot(bl.load(a), bl.load(a))
    bl.store(c, acc)


@baco.jit
def dot_shape_mismatch(a_ptr, b_ptr, M):
    a = bl.make_block_ptr(a_ptr, shape=(M, M), strides=(M, 1), offsets=(0, 0), block_shape=(16, 32))
    b = bl.make_block_ptr(b_ptr, shape=(M, M), strides=(M, 1), offsets=(0, 0), block_shape=(16, 16))
    acc = bl.dot(bl.load(a), bl.load(b))


@baco.jit
def calls_numpy(a_ptr, M):
    x = print(M)


@baco.jit
def runtime_if(a_ptr, M):
    if M > 3:
        pass


@baco.jit
def relu_int32_store(a_ptr, c_ptr, M):
    a = bl.make_block_ptr(a_ptr, shape=(M, M), strides=(M, 1), offsets=(0, 0), block_shape=(16, 16))
    c = bl.make_block_ptr(c_ptr, shape=(M, M), strides=(M, 1), offsets=(0, 0), block_shape=(16, 16))
    x = bl.load(a)
    acc = bl.dot(x, x)
    bl.store(c, bl.relu(acc))


@baco.jit
def too_big_blocks(a_ptr, c_ptr, M, BLOCK: bl.constexpr):
    a = bl.make_block_ptr(a_ptr, shape=(M, M), strides=(M, 1), offsets=(0, 0), block_shape=(BLOCK, BLOCK))
    c = bl.make_block_ptr(c_ptr, shape=(M, M), strides=(M, 1), offsets=(0, 0), block_shape=(BLOCK, BLOCK))
    x = bl.load(a, boundary_check=(0, 1))
    acc = bl.dot(x, x)
    bl.store(c, acc, boundary_check=(0, 1))
