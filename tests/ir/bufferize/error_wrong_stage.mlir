// RUN: not baco opt --pass bufferize %s 2>&1 | FileCheck %s
// Input of stage gemmini-placement: the pass refuses it before running.
// CHECK: baco opt: this IR is the input of stage 'gemmini-placement', not the input of stage 'bufferize'

module {
  func.func private @baco_boundary_error(i64, i64)
  func.func private @baco_program_id(i64) -> i64
  func.func @gemm(%arg0: memref<?xi8>, %arg1: memref<?xi8>, %arg2: memref<?xi32>, %arg3: index, %arg4: index, %arg5: index, %arg6: f32) {
    %c9_i64 = arith.constant 9 : i64
    %c48_i64 = arith.constant 48 : i64
    %c62_i64 = arith.constant 62 : i64
    %c0_i8 = arith.constant 0 : i8
    %c27_i64 = arith.constant 27 : i64
    %c41_i64 = arith.constant 41 : i64
    %c0_i32 = arith.constant 0 : i32
    %c16 = arith.constant 16 : index
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %c1_i64 = arith.constant 1 : i64
    %c0_i64 = arith.constant 0 : i64
    %0 = call @baco_program_id(%c0_i64) : (i64) -> i64
    %1 = arith.index_cast %0 : i64 to index
    %2 = call @baco_program_id(%c1_i64) : (i64) -> i64
    %3 = arith.index_cast %2 : i64 to index
    %4 = arith.muli %1, %c32 : index
    %reinterpret_cast = memref.reinterpret_cast %arg0 to offset: [0], sizes: [%arg3, %arg5], strides: [%arg5, 1] : memref<?xi8> to memref<?x?xi8, strided<[?, 1]>>
    %5 = arith.muli %3, %c16 : index
    %reinterpret_cast_0 = memref.reinterpret_cast %arg1 to offset: [0], sizes: [%arg5, %arg4], strides: [%arg4, 1] : memref<?xi8> to memref<?x?xi8, strided<[?, 1]>>
    %alloc = memref.alloc() {alignment = 64 : i64} : memref<32x16xi32>
    linalg.fill ins(%c0_i32 : i32) outs(%alloc : memref<32x16xi32>)
    %6 = arith.ceildivsi %arg5, %c32 : index
    %7:2 = scf.for %arg7 = %c0 to %6 step %c1 iter_args(%arg8 = %c0, %arg9 = %c0) -> (index, index) {
      %27 = arith.maxsi %4, %c0 : index
      %28 = arith.minsi %27, %arg3 : index
      %29 = arith.addi %4, %c32 : index
      %30 = arith.maxsi %29, %c0 : index
      %31 = arith.minsi %30, %arg3 : index
      %32 = arith.subi %28, %4 : index
      %33 = arith.maxsi %32, %c0 : index
      %34 = arith.minsi %33, %c32 : index
      %35 = arith.subi %31, %28 : index
      %36 = arith.maxsi %arg8, %c0 : index
      %37 = arith.minsi %36, %arg5 : index
      %38 = arith.addi %arg8, %c32 : index
      %39 = arith.maxsi %38, %c0 : index
      %40 = arith.minsi %39, %arg5 : index
      %41 = arith.subi %37, %arg8 : index
      %42 = arith.maxsi %41, %c0 : index
      %43 = arith.minsi %42, %c32 : index
      %44 = arith.subi %40, %37 : index
      %45 = arith.cmpi sgt, %43, %c0 : index
      scf.if %45 {
        func.call @baco_boundary_error(%c41_i64, %c27_i64) : (i64, i64) -> ()
      }
      %subview_3 = memref.subview %reinterpret_cast[%28, %37] [%35, %44] [1, 1] : memref<?x?xi8, strided<[?, 1]>> to memref<?x?xi8, strided<[?, 1], offset: ?>>
      %alloc_4 = memref.alloc() {alignment = 64 : i64} : memref<32x32xi8>
      linalg.map outs(%alloc_4 : memref<32x32xi8>)
        (%init: i8) {
          linalg.yield %c0_i8 : i8
        }
      %subview_5 = memref.subview %alloc_4[%34, 0] [%35, %44] [1, 1] : memref<32x32xi8> to memref<?x?xi8, strided<[32, 1], offset: ?>>
      memref.copy %subview_3, %subview_5 : memref<?x?xi8, strided<[?, 1], offset: ?>> to memref<?x?xi8, strided<[32, 1], offset: ?>>
      %46 = arith.maxsi %arg9, %c0 : index
      %47 = arith.minsi %46, %arg5 : index
      %48 = arith.addi %arg9, %c32 : index
      %49 = arith.maxsi %48, %c0 : index
      %50 = arith.minsi %49, %arg5 : index
      %51 = arith.subi %47, %arg9 : index
      %52 = arith.maxsi %51, %c0 : index
      %53 = arith.minsi %52, %c32 : index
      %54 = arith.subi %50, %47 : index
      %55 = arith.maxsi %5, %c0 : index
      %56 = arith.minsi %55, %arg4 : index
      %57 = arith.addi %5, %c16 : index
      %58 = arith.maxsi %57, %c0 : index
      %59 = arith.minsi %58, %arg4 : index
      %60 = arith.subi %56, %5 : index
      %61 = arith.maxsi %60, %c0 : index
      %62 = arith.minsi %61, %c16 : index
      %63 = arith.subi %59, %56 : index
      %64 = arith.cmpi sgt, %62, %c0 : index
      scf.if %64 {
        func.call @baco_boundary_error(%c41_i64, %c62_i64) : (i64, i64) -> ()
      }
      %subview_6 = memref.subview %reinterpret_cast_0[%47, %56] [%54, %63] [1, 1] : memref<?x?xi8, strided<[?, 1]>> to memref<?x?xi8, strided<[?, 1], offset: ?>>
      %alloc_7 = memref.alloc() {alignment = 64 : i64} : memref<32x16xi8>
      linalg.map outs(%alloc_7 : memref<32x16xi8>)
        (%init: i8) {
          linalg.yield %c0_i8 : i8
        }
      %subview_8 = memref.subview %alloc_7[%53, 0] [%54, %63] [1, 1] : memref<32x16xi8> to memref<?x?xi8, strided<[16, 1], offset: ?>>
      memref.copy %subview_6, %subview_8 : memref<?x?xi8, strided<[?, 1], offset: ?>> to memref<?x?xi8, strided<[16, 1], offset: ?>>
      linalg.matmul ins(%alloc_4, %alloc_7 : memref<32x32xi8>, memref<32x16xi8>) outs(%alloc : memref<32x16xi32>)
      scf.yield %38, %48 : index, index
    }
    %reinterpret_cast_1 = memref.reinterpret_cast %arg2 to offset: [0], sizes: [%arg3, %arg4], strides: [%arg4, 1] : memref<?xi32> to memref<?x?xi32, strided<[?, 1]>>
    %8 = arith.maxsi %4, %c0 : index
    %9 = arith.minsi %8, %arg3 : index
    %10 = arith.addi %4, %c32 : index
    %11 = arith.maxsi %10, %c0 : index
    %12 = arith.minsi %11, %arg3 : index
    %13 = arith.subi %9, %4 : index
    %14 = arith.maxsi %13, %c0 : index
    %15 = arith.minsi %14, %c32 : index
    %16 = arith.subi %12, %9 : index
    %17 = arith.maxsi %5, %c0 : index
    %18 = arith.minsi %17, %arg4 : index
    %19 = arith.addi %5, %c16 : index
    %20 = arith.maxsi %19, %c0 : index
    %21 = arith.minsi %20, %arg4 : index
    %22 = arith.subi %18, %5 : index
    %23 = arith.maxsi %22, %c0 : index
    %24 = arith.minsi %23, %c16 : index
    %25 = arith.subi %21, %18 : index
    %26 = arith.cmpi sgt, %24, %c0 : index
    scf.if %26 {
      func.call @baco_boundary_error(%c48_i64, %c9_i64) : (i64, i64) -> ()
    }
    %subview = memref.subview %reinterpret_cast_1[%9, %18] [%16, %25] [1, 1] : memref<?x?xi32, strided<[?, 1]>> to memref<?x?xi32, strided<[?, 1], offset: ?>>
    %subview_2 = memref.subview %alloc[%15, 0] [%16, %25] [1, 1] : memref<32x16xi32> to memref<?x?xi32, strided<[16, 1], offset: ?>>
    memref.copy %subview_2, %subview : memref<?x?xi32, strided<[16, 1], offset: ?>> to memref<?x?xi32, strided<[?, 1], offset: ?>>
    return
  }
}
