// RUN: not baco opt --pass baco-to-linalg %s 2>&1 | FileCheck %s
// Input of stage bufferize: the pass refuses it before running.
// CHECK: baco opt: this IR is the input of stage 'bufferize', not the input of stage 'baco-to-linalg'

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
    %6 = bufferization.alloc_tensor() : tensor<32x16xi32>
    %7 = linalg.fill ins(%c0_i32 : i32) outs(%6 : tensor<32x16xi32>) -> tensor<32x16xi32>
    %8 = arith.ceildivsi %arg5, %c32 : index
    %9:3 = scf.for %arg7 = %c0 to %8 step %c1 iter_args(%arg8 = %7, %arg9 = %c0, %arg10 = %c0) -> (tensor<32x16xi32>, index, index) {
      %29 = arith.maxsi %4, %c0 : index
      %30 = arith.minsi %29, %arg3 : index
      %31 = arith.addi %4, %c32 : index
      %32 = arith.maxsi %31, %c0 : index
      %33 = arith.minsi %32, %arg3 : index
      %34 = arith.subi %30, %4 : index
      %35 = arith.maxsi %34, %c0 : index
      %36 = arith.minsi %35, %c32 : index
      %37 = arith.subi %33, %30 : index
      %38 = arith.maxsi %arg9, %c0 : index
      %39 = arith.minsi %38, %arg5 : index
      %40 = arith.addi %arg9, %c32 : index
      %41 = arith.maxsi %40, %c0 : index
      %42 = arith.minsi %41, %arg5 : index
      %43 = arith.subi %39, %arg9 : index
      %44 = arith.maxsi %43, %c0 : index
      %45 = arith.minsi %44, %c32 : index
      %46 = arith.subi %42, %39 : index
      %47 = arith.cmpi sgt, %45, %c0 : index
      scf.if %47 {
        func.call @baco_boundary_error(%c41_i64, %c27_i64) : (i64, i64) -> ()
      }
      %subview_2 = memref.subview %reinterpret_cast[%30, %39] [%37, %46] [1, 1] : memref<?x?xi8, strided<[?, 1]>> to memref<?x?xi8, strided<[?, 1], offset: ?>>
      %cast_3 = memref.cast %subview_2 : memref<?x?xi8, strided<[?, 1], offset: ?>> to memref<?x?xi8, strided<[?, ?], offset: ?>>
      %48 = bufferization.to_tensor %cast_3 restrict : memref<?x?xi8, strided<[?, ?], offset: ?>> to tensor<?x?xi8>
      %49 = arith.subi %c32, %37 : index
      %50 = arith.subi %49, %36 : index
      %51 = arith.subi %c32, %46 : index
      %padded = tensor.pad %48 low[%36, %c0] high[%50, %51] {
      ^bb0(%arg11: index, %arg12: index):
        tensor.yield %c0_i8 : i8
      } : tensor<?x?xi8> to tensor<32x32xi8>
      %52 = arith.maxsi %arg10, %c0 : index
      %53 = arith.minsi %52, %arg5 : index
      %54 = arith.addi %arg10, %c32 : index
      %55 = arith.maxsi %54, %c0 : index
      %56 = arith.minsi %55, %arg5 : index
      %57 = arith.subi %53, %arg10 : index
      %58 = arith.maxsi %57, %c0 : index
      %59 = arith.minsi %58, %c32 : index
      %60 = arith.subi %56, %53 : index
      %61 = arith.maxsi %5, %c0 : index
      %62 = arith.minsi %61, %arg4 : index
      %63 = arith.addi %5, %c16 : index
      %64 = arith.maxsi %63, %c0 : index
      %65 = arith.minsi %64, %arg4 : index
      %66 = arith.subi %62, %5 : index
      %67 = arith.maxsi %66, %c0 : index
      %68 = arith.minsi %67, %c16 : index
      %69 = arith.subi %65, %62 : index
      %70 = arith.cmpi sgt, %68, %c0 : index
      scf.if %70 {
        func.call @baco_boundary_error(%c41_i64, %c62_i64) : (i64, i64) -> ()
      }
      %subview_4 = memref.subview %reinterpret_cast_0[%53, %62] [%60, %69] [1, 1] : memref<?x?xi8, strided<[?, 1]>> to memref<?x?xi8, strided<[?, 1], offset: ?>>
      %cast_5 = memref.cast %subview_4 : memref<?x?xi8, strided<[?, 1], offset: ?>> to memref<?x?xi8, strided<[?, ?], offset: ?>>
      %71 = bufferization.to_tensor %cast_5 restrict : memref<?x?xi8, strided<[?, ?], offset: ?>> to tensor<?x?xi8>
      %72 = arith.subi %c32, %60 : index
      %73 = arith.subi %72, %59 : index
      %74 = arith.subi %c16, %69 : index
      %padded_6 = tensor.pad %71 low[%59, %c0] high[%73, %74] {
      ^bb0(%arg11: index, %arg12: index):
        tensor.yield %c0_i8 : i8
      } : tensor<?x?xi8> to tensor<32x16xi8>
      %75 = linalg.matmul ins(%padded, %padded_6 : tensor<32x32xi8>, tensor<32x16xi8>) outs(%arg8 : tensor<32x16xi32>) -> tensor<32x16xi32>
      scf.yield %75, %40, %54 : tensor<32x16xi32>, index, index
    }
    %reinterpret_cast_1 = memref.reinterpret_cast %arg2 to offset: [0], sizes: [%arg3, %arg4], strides: [%arg4, 1] : memref<?xi32> to memref<?x?xi32, strided<[?, 1]>>
    %10 = arith.maxsi %4, %c0 : index
    %11 = arith.minsi %10, %arg3 : index
    %12 = arith.addi %4, %c32 : index
    %13 = arith.maxsi %12, %c0 : index
    %14 = arith.minsi %13, %arg3 : index
    %15 = arith.subi %11, %4 : index
    %16 = arith.maxsi %15, %c0 : index
    %17 = arith.minsi %16, %c32 : index
    %18 = arith.subi %14, %11 : index
    %19 = arith.maxsi %5, %c0 : index
    %20 = arith.minsi %19, %arg4 : index
    %21 = arith.addi %5, %c16 : index
    %22 = arith.maxsi %21, %c0 : index
    %23 = arith.minsi %22, %arg4 : index
    %24 = arith.subi %20, %5 : index
    %25 = arith.maxsi %24, %c0 : index
    %26 = arith.minsi %25, %c16 : index
    %27 = arith.subi %23, %20 : index
    %28 = arith.cmpi sgt, %26, %c0 : index
    scf.if %28 {
      func.call @baco_boundary_error(%c48_i64, %c9_i64) : (i64, i64) -> ()
    }
    %subview = memref.subview %reinterpret_cast_1[%11, %20] [%18, %27] [1, 1] : memref<?x?xi32, strided<[?, 1]>> to memref<?x?xi32, strided<[?, 1], offset: ?>>
    %cast = memref.cast %subview : memref<?x?xi32, strided<[?, 1], offset: ?>> to memref<?x?xi32, strided<[?, ?], offset: ?>>
    %extracted_slice = tensor.extract_slice %9#0[%17, 0] [%18, %27] [1, 1] : tensor<32x16xi32> to tensor<?x?xi32>
    bufferization.materialize_in_destination %extracted_slice in restrict writable %cast : (tensor<?x?xi32>, memref<?x?xi32, strided<[?, ?], offset: ?>>) -> ()
    return
  }
}
