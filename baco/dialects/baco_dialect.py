"""The BACO dialect: block-level ops mirroring `baco.language`.

Blocks are builtin ranked tensors (statically shaped); block pointers are
`!baco.block_ptr<tensor<…>>`, a pointer to a strided 2-D window of a buffer
(base memref, shape, strides, offsets) whose block type is its parameter.
`offset_ptr` is a pointer argument moved by a number of elements (`ptr + n`
in the language); it only feeds make_block_ptr, which adds it to the view's
offset.

A kernel function may carry `baco.loop_conv = false` (jit's `loop_conv=False`, e.g. the GEMM
kernel's): its programs are not convolutions, so the loop-conv-ws pass leaves them alone (a GEMM
program of one K step is the same IR as a 1x1 convolution's whose one tap folded away).
"""

LOOP_CONV_ATTR = "baco.loop_conv"

IRDL = r"""
irdl.dialect @baco {
  irdl.type @block_ptr {
    %0 = irdl.any
    irdl.parameters(block: %0)
  }
  irdl.operation @program_id {
    %i = irdl.is index
    irdl.results(result: %i)
  }
  irdl.operation @num_programs {
    %i = irdl.is index
    irdl.results(result: %i)
  }
  irdl.operation @offset_ptr {
    %i = irdl.is index
    %m = irdl.any
    irdl.operands(base: %m, offset: %i)
    irdl.results(result: %m)
  }
  irdl.operation @make_block_ptr {
    %i = irdl.is index
    %m = irdl.any
    %bp = irdl.base @baco::@block_ptr
    irdl.operands(base: %m, shape: variadic %i, strides: variadic %i, offsets: variadic %i)
    irdl.results(result: %bp)
  }
  irdl.operation @advance {
    %i = irdl.is index
    %bp = irdl.base @baco::@block_ptr
    irdl.operands(ptr: %bp, deltas: variadic %i)
    irdl.results(result: %bp)
  }
  irdl.operation @load {
    %bp = irdl.base @baco::@block_ptr
    %t = irdl.base "!builtin.tensor"
    irdl.operands(ptr: %bp)
    irdl.results(result: %t)
  }
  irdl.operation @store {
    %bp = irdl.base @baco::@block_ptr
    %t = irdl.base "!builtin.tensor"
    irdl.operands(ptr: %bp, value: %t)
  }
  irdl.operation @zeros {
    %t = irdl.base "!builtin.tensor"
    irdl.results(result: %t)
  }
  irdl.operation @dot {
    %a = irdl.base "!builtin.tensor"
    %b = irdl.base "!builtin.tensor"
    %c = irdl.base "!builtin.tensor"
    %r = irdl.base "!builtin.tensor"
    irdl.operands(a: %a, b: %b, acc: %c)
    irdl.results(result: %r)
  }
  irdl.operation @add {
    %a = irdl.base "!builtin.tensor"
    %b = irdl.base "!builtin.tensor"
    %r = irdl.base "!builtin.tensor"
    irdl.operands(lhs: %a, rhs: %b)
    irdl.results(result: %r)
  }
  irdl.operation @scale {
    %t = irdl.base "!builtin.tensor"
    %f = irdl.is f32
    %r = irdl.base "!builtin.tensor"
    irdl.operands(value: %t, factor: %f)
    irdl.results(result: %r)
  }
  irdl.operation @relu {
    %t = irdl.base "!builtin.tensor"
    irdl.operands(value: %t)
    irdl.results(result: %t)
  }
  irdl.operation @max_pool {
    %t = irdl.base "!builtin.tensor"
    %i = irdl.is index
    %r = irdl.base "!builtin.tensor"
    irdl.operands(value: %t, valid_lo: %i, valid_hi: %i)
    irdl.results(result: %r)
  }
  irdl.operation @convert {
    %t = irdl.base "!builtin.tensor"
    %r = irdl.base "!builtin.tensor"
    irdl.operands(value: %t)
    irdl.results(result: %r)
  }
}
"""
