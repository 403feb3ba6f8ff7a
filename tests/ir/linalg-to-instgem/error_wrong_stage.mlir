// RUN: not baco opt --pass linalg-to-instgem %s 2>&1 | FileCheck %s
// Input of stage config-elimination: the pass refuses it before running.
// CHECK: baco opt: this IR is the input of stage 'config-elimination', not the input of stage 'linalg-to-instgem'

module {
  func.func private @baco_boundary_error(i64, i64)
  func.func private @baco_program_id(i64) -> i64
  func.func @gemm(%arg0: memref<?xi8>, %arg1: memref<?xi8>, %arg2: memref<?xi32>, %arg3: index, %arg4: index, %arg5: index, %arg6: f32) attributes {gemmini.acc_rows_used = 32 : i64, gemmini.sp_rows_used = 96 : i64} {
    %c2684354576_i64 = arith.constant 2684354576 : i64
    %c3221225488_i64 = arith.constant 3221225488 : i64
    %c80_i64 = arith.constant 80 : i64
    %c2 = arith.constant 2 : index
    %c3221225472_i64 = arith.constant 3221225472 : i64
    %c2684354560_i64 = arith.constant 2684354560 : i64
    %c-1_i64 = arith.constant -1 : i64
    %c4294967295_i64 = arith.constant 4294967295 : i64
    %c32_i64 = arith.constant 32 : i64
    %c15_i64 = arith.constant 15 : i64
    %c4_i64 = arith.constant 4 : i64
    %c2147483648_i64 = arith.constant 2147483648 : i64
    %c2_i64 = arith.constant 2 : i64
    %c64_i64 = arith.constant 64 : i64
    %c16_i64 = arith.constant 16 : i64
    %c32 = arith.constant 32 : index
    %c1 = arith.constant 1 : index
    %c0 = arith.constant 0 : index
    %c16 = arith.constant 16 : index
    %c41_i64 = arith.constant 41 : i64
    %c27_i64 = arith.constant 27 : i64
    %c62_i64 = arith.constant 62 : i64
    %c48_i64 = arith.constant 48 : i64
    %c9_i64 = arith.constant 9 : i64
    %c1_i64 = arith.constant 1 : i64
    %c0_i64 = arith.constant 0 : i64
    %c1065353216_i64 = arith.constant 1065353216 : i64
    "instgem.config_ex"(%c1_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c1_i64, %c1065353216_i64, %c0_i64, %c0_i64, %c1_i64) : (i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> ()
    %0 = call @baco_program_id(%c0_i64) : (i64) -> i64
    %1 = arith.index_cast %0 : i64 to index
    %2 = call @baco_program_id(%c1_i64) : (i64) -> i64
    %3 = arith.index_cast %2 : i64 to index
    %4 = arith.muli %1, %c32 : index
    %5 = arith.muli %3, %c16 : index
    %6 = arith.ceildivsi %arg5, %c32 : index
    %7 = arith.maxsi %4, %c0 : index
    %8 = arith.minsi %7, %arg3 : index
    %9 = arith.subi %8, %4 : index
    %10 = arith.maxsi %5, %c0 : index
    %11 = arith.minsi %10, %arg4 : index
    %12 = arith.subi %11, %5 : index
    %13 = arith.addi %4, %c32 : index
    %14 = arith.addi %5, %c16 : index
    %15 = arith.subi %6, %c1 : index
    %16 = arith.muli %15, %c32 : index
    %17 = arith.addi %16, %c32 : index
    %18 = arith.cmpi sge, %4, %c0 : index
    %19 = arith.cmpi sle, %4, %arg3 : index
    %20 = arith.cmpi sge, %13, %c0 : index
    %21 = arith.cmpi sle, %13, %arg3 : index
    %22 = arith.cmpi sge, %9, %c0 : index
    %23 = arith.cmpi sle, %9, %c32 : index
    %24 = arith.cmpi sge, %5, %c0 : index
    %25 = arith.cmpi sle, %5, %arg4 : index
    %26 = arith.cmpi sge, %14, %c0 : index
    %27 = arith.cmpi sle, %14, %arg4 : index
    %28 = arith.cmpi sge, %12, %c0 : index
    %29 = arith.cmpi sle, %12, %c16 : index
    %30 = arith.cmpi sle, %16, %arg5 : index
    %31 = arith.cmpi sle, %17, %arg5 : index
    %32 = arith.andi %18, %19 : i1
    %33 = arith.andi %32, %20 : i1
    %34 = arith.andi %33, %21 : i1
    %35 = arith.andi %34, %22 : i1
    %36 = arith.andi %35, %23 : i1
    %37 = arith.andi %36, %24 : i1
    %38 = arith.andi %37, %25 : i1
    %39 = arith.andi %38, %26 : i1
    %40 = arith.andi %39, %27 : i1
    %41 = arith.andi %40, %28 : i1
    %42 = arith.andi %41, %29 : i1
    %43 = arith.andi %42, %20 : i1
    %44 = arith.andi %43, %21 : i1
    %45 = arith.andi %44, %30 : i1
    %46 = arith.andi %45, %31 : i1
    %47 = arith.andi %46, %30 : i1
    %48 = arith.andi %47, %31 : i1
    %49 = arith.andi %48, %26 : i1
    %50 = arith.andi %49, %27 : i1
    scf.if %50 {
      %reinterpret_cast = memref.reinterpret_cast %arg0 to offset: [0], sizes: [%arg3, %arg5], strides: [%arg5, 1] : memref<?xi8> to memref<?x?xi8, strided<[?, 1]>>
      %reinterpret_cast_0 = memref.reinterpret_cast %arg1 to offset: [0], sizes: [%arg5, %arg4], strides: [%arg4, 1] : memref<?xi8> to memref<?x?xi8, strided<[?, 1]>>
      %reinterpret_cast_1 = memref.reinterpret_cast %arg2 to offset: [0], sizes: [%arg3, %arg4], strides: [%arg4, 1] : memref<?xi32> to memref<?x?xi32, strided<[?, 1]>>
      %subview = memref.subview %reinterpret_cast_1[%4, %5] [32, 16] [1, 1] : memref<?x?xi32, strided<[?, 1]>> to memref<32x16xi32, strided<[?, 1], offset: ?>>
      %cast = memref.cast %subview : memref<32x16xi32, strided<[?, 1], offset: ?>> to memref<?x?xi32, strided<[?, 1], offset: ?>>
      %51 = arith.cmpi sle, %6, %c0 : index
      scf.if %51 {
        "instgem.config_ld"(%c0_i64, %c0_i64, %c1_i64, %c16_i64, %c1065353216_i64, %c64_i64) : (i64, i64, i64, i64, i64, i64) -> ()
        scf.for %arg7 = %c0 to %c2 step %c1 {
          %59 = arith.index_cast %arg7 : index to i64
          %60 = arith.muli %59, %c16_i64 : i64
          %61 = arith.ori %60, %c2147483648_i64 : i64
          "instgem.mvin"(%c0_i64, %61, %c16_i64, %c16_i64) : (i64, i64, i64, i64) -> ()
        } {gemmini.load_stream}
      }
      %base_buffer, %offset, %sizes:2, %strides:2 = memref.extract_strided_metadata %subview : memref<32x16xi32, strided<[?, 1], offset: ?>> -> memref<i32>, index, index, index, index, index
      %intptr = memref.extract_aligned_pointer_as_index %cast : memref<?x?xi32, strided<[?, 1], offset: ?>> -> index
      %52 = arith.index_cast %intptr : index to i64
      %53 = arith.index_cast %offset : index to i64
      %54 = arith.muli %53, %c4_i64 : i64
      %55 = arith.addi %52, %54 : i64
      %56 = arith.index_cast %strides#0 : index to i64
      %57 = arith.muli %56, %c4_i64 : i64
      "instgem.config_st"(%c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %57, %c1065353216_i64) : (i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> ()
      %58:2 = scf.for %arg7 = %c0 to %6 step %c1 iter_args(%arg8 = %c0, %arg9 = %c0) -> (index, index) {
        %59 = arith.addi %arg8, %c32 : index
        %subview_2 = memref.subview %reinterpret_cast[%4, %arg8] [32, 32] [1, 1] : memref<?x?xi8, strided<[?, 1]>> to memref<32x32xi8, strided<[?, 1], offset: ?>>
        %cast_3 = memref.cast %subview_2 : memref<32x32xi8, strided<[?, 1], offset: ?>> to memref<?x?xi8, strided<[?, 1], offset: ?>>
        %base_buffer_4, %offset_5, %sizes_6:2, %strides_7:2 = memref.extract_strided_metadata %subview_2 : memref<32x32xi8, strided<[?, 1], offset: ?>> -> memref<i8>, index, index, index, index, index
        %intptr_8 = memref.extract_aligned_pointer_as_index %cast_3 : memref<?x?xi8, strided<[?, 1], offset: ?>> -> index
        %60 = arith.index_cast %intptr_8 : index to i64
        %61 = arith.index_cast %offset_5 : index to i64
        %62 = arith.addi %60, %61 : i64
        %63 = arith.index_cast %strides_7#0 : index to i64
        "instgem.config_ld"(%c0_i64, %c0_i64, %c1_i64, %c16_i64, %c1065353216_i64, %63) : (i64, i64, i64, i64, i64, i64) -> ()
        scf.for %arg10 = %c0 to %c2 step %c1 {
          %73 = arith.index_cast %arg10 : index to i64
          %74 = arith.muli %73, %c16_i64 : i64
          %75 = arith.maxsi %74, %c0_i64 : i64
          %76 = arith.addi %74, %c16_i64 : i64
          %77 = arith.minsi %76, %c32_i64 : i64
          %78 = arith.subi %77, %75 : i64
          %79 = arith.muli %75, %63 : i64
          %80 = arith.addi %62, %79 : i64
          %81 = arith.muli %73, %c32_i64 : i64
          %82 = arith.subi %75, %74 : i64
          %83 = arith.addi %81, %82 : i64
          "instgem.mvin"(%80, %83, %c32_i64, %78) : (i64, i64, i64, i64) -> ()
        } {gemmini.load_stream}
        %64 = arith.addi %arg9, %c32 : index
        %subview_9 = memref.subview %reinterpret_cast_0[%arg9, %5] [32, 16] [1, 1] : memref<?x?xi8, strided<[?, 1]>> to memref<32x16xi8, strided<[?, 1], offset: ?>>
        %cast_10 = memref.cast %subview_9 : memref<32x16xi8, strided<[?, 1], offset: ?>> to memref<?x?xi8, strided<[?, 1], offset: ?>>
        %base_buffer_11, %offset_12, %sizes_13:2, %strides_14:2 = memref.extract_strided_metadata %subview_9 : memref<32x16xi8, strided<[?, 1], offset: ?>> -> memref<i8>, index, index, index, index, index
        %intptr_15 = memref.extract_aligned_pointer_as_index %cast_10 : memref<?x?xi8, strided<[?, 1], offset: ?>> -> index
        %65 = arith.index_cast %intptr_15 : index to i64
        %66 = arith.index_cast %offset_12 : index to i64
        %67 = arith.addi %65, %66 : i64
        %68 = arith.index_cast %strides_14#0 : index to i64
        "instgem.config_ld"(%c0_i64, %c0_i64, %c1_i64, %c16_i64, %c1065353216_i64, %68) : (i64, i64, i64, i64, i64, i64) -> ()
        scf.for %arg10 = %c0 to %c2 step %c1 {
          %73 = arith.index_cast %arg10 : index to i64
          %74 = arith.muli %73, %c16_i64 : i64
          %75 = arith.maxsi %74, %c0_i64 : i64
          %76 = arith.addi %74, %c16_i64 : i64
          %77 = arith.minsi %76, %c32_i64 : i64
          %78 = arith.subi %77, %75 : i64
          %79 = arith.muli %75, %68 : i64
          %80 = arith.addi %67, %79 : i64
          %81 = arith.addi %74, %c64_i64 : i64
          %82 = arith.subi %75, %74 : i64
          %83 = arith.addi %81, %82 : i64
          "instgem.mvin"(%80, %83, %c16_i64, %78) : (i64, i64, i64, i64) -> ()
        } {gemmini.load_stream}
        %69 = arith.addi %arg7, %c1 : index
        %70 = arith.cmpi sge, %69, %6 : index
        %71 = arith.cmpi eq, %arg7, %c0 : index
        %72 = arith.ori %71, %70 : i1
        scf.if %72 {
          scf.if %70 {
            %73 = arith.select %71, %c0_i64, %c-1_i64 : i64
            %74 = arith.cmpi eq, %73, %c0_i64 : i64
            %75 = arith.select %74, %c2147483648_i64, %c3221225472_i64 : i64
            "instgem.preload"(%c64_i64, %c16_i64, %c16_i64, %75, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
            "instgem.compute_preloaded"(%c0_i64, %c16_i64, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
            %76 = arith.ori %75, %c16_i64 : i64
            "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %76, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
            "instgem.compute_accumulated"(%c32_i64, %c16_i64, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
            "instgem.preload"(%c80_i64, %c16_i64, %c16_i64, %c3221225472_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
            "instgem.compute_preloaded"(%c16_i64, %c16_i64, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
            "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %c3221225488_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
            "instgem.compute_accumulated"(%c48_i64, %c16_i64, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
            "instgem.mvout"(%55, %c2684354560_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64) -> ()
            %77 = arith.muli %56, %c64_i64 : i64
            %78 = arith.addi %55, %77 : i64
            "instgem.mvout"(%78, %c2684354576_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64) -> ()
          } else {
            %73 = arith.select %71, %c0_i64, %c-1_i64 : i64
            %74 = arith.cmpi eq, %73, %c0_i64 : i64
            %75 = arith.select %74, %c2147483648_i64, %c3221225472_i64 : i64
            "instgem.preload"(%c64_i64, %c16_i64, %c16_i64, %75, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
            "instgem.compute_preloaded"(%c0_i64, %c16_i64, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
            %76 = arith.ori %75, %c16_i64 : i64
            "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %76, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
            "instgem.compute_accumulated"(%c32_i64, %c16_i64, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
            "instgem.preload"(%c80_i64, %c16_i64, %c16_i64, %c3221225472_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
            "instgem.compute_preloaded"(%c16_i64, %c16_i64, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
            "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %c3221225488_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
            "instgem.compute_accumulated"(%c48_i64, %c16_i64, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
          }
        } else {
          scf.for %arg10 = %c0 to %c2 step %c1 {
            %73 = arith.index_cast %arg10 : index to i64
            %74 = arith.muli %73, %c16_i64 : i64
            %75 = arith.addi %74, %c64_i64 : i64
            "instgem.preload"(%75, %c16_i64, %c16_i64, %c3221225472_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
            "instgem.compute_preloaded"(%74, %c16_i64, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
            "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %c3221225488_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
            %76 = arith.addi %74, %c32_i64 : i64
            "instgem.compute_accumulated"(%76, %c16_i64, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
          }
        }
        scf.yield %59, %64 : index, index
      }
      scf.if %51 {
        "instgem.config_st"(%c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %57, %c1065353216_i64) : (i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> ()
        scf.for %arg7 = %c0 to %c2 step %c1 {
          %59 = arith.index_cast %arg7 : index to i64
          %60 = arith.remsi %59, %c2_i64 : i64
          %61 = arith.divsi %59, %c2_i64 : i64
          %62 = arith.muli %60, %c16_i64 : i64
          %63 = arith.maxsi %62, %c0_i64 : i64
          %64 = arith.addi %62, %c16_i64 : i64
          %65 = arith.minsi %64, %c32_i64 : i64
          %66 = arith.subi %65, %63 : i64
          %67 = arith.muli %63, %57 : i64
          %68 = arith.addi %55, %67 : i64
          %69 = arith.muli %61, %c64_i64 : i64
          %70 = arith.addi %68, %69 : i64
          %71 = arith.muli %61, %c16_i64 : i64
          %72 = arith.addi %62, %71 : i64
          %73 = arith.ori %72, %c2684354560_i64 : i64
          %74 = arith.subi %63, %62 : i64
          %75 = arith.addi %73, %74 : i64
          %76 = arith.subi %c16_i64, %71 : i64
          %77 = arith.minsi %76, %c16_i64 : i64
          "instgem.mvout"(%70, %75, %77, %66) : (i64, i64, i64, i64) -> ()
        }
      }
    } else {
      %reinterpret_cast = memref.reinterpret_cast %arg0 to offset: [0], sizes: [%arg3, %arg5], strides: [%arg5, 1] : memref<?xi8> to memref<?x?xi8, strided<[?, 1]>>
      %reinterpret_cast_0 = memref.reinterpret_cast %arg1 to offset: [0], sizes: [%arg5, %arg4], strides: [%arg4, 1] : memref<?xi8> to memref<?x?xi8, strided<[?, 1]>>
      %reinterpret_cast_1 = memref.reinterpret_cast %arg2 to offset: [0], sizes: [%arg3, %arg4], strides: [%arg4, 1] : memref<?xi32> to memref<?x?xi32, strided<[?, 1]>>
      %51 = arith.maxsi %13, %c0 : index
      %52 = arith.minsi %51, %arg3 : index
      %53 = arith.maxsi %9, %c0 : index
      %54 = arith.minsi %53, %c32 : index
      %55 = arith.subi %52, %8 : index
      %56 = arith.maxsi %14, %c0 : index
      %57 = arith.minsi %56, %arg4 : index
      %58 = arith.maxsi %12, %c0 : index
      %59 = arith.minsi %58, %c16 : index
      %60 = arith.subi %57, %11 : index
      %61 = arith.cmpi sgt, %59, %c0 : index
      scf.if %61 {
        func.call @baco_boundary_error(%c48_i64, %c9_i64) : (i64, i64) -> ()
      }
      %subview = memref.subview %reinterpret_cast_1[%8, %11] [%55, %60] [1, 1] : memref<?x?xi32, strided<[?, 1]>> to memref<?x?xi32, strided<[?, 1], offset: ?>>
      %62 = arith.cmpi sle, %6, %c0 : index
      scf.if %62 {
        "instgem.config_ld"(%c0_i64, %c0_i64, %c1_i64, %c16_i64, %c1065353216_i64, %c64_i64) : (i64, i64, i64, i64, i64, i64) -> ()
        scf.for %arg7 = %c0 to %c2 step %c1 {
          %84 = arith.index_cast %arg7 : index to i64
          %85 = arith.muli %84, %c16_i64 : i64
          %86 = arith.ori %85, %c2147483648_i64 : i64
          "instgem.mvin"(%c0_i64, %86, %c16_i64, %c16_i64) : (i64, i64, i64, i64) -> ()
        } {gemmini.load_stream}
      }
      %63 = arith.index_cast %54 : index to i64
      %64 = arith.index_cast %55 : index to i64
      %65 = arith.index_cast %60 : index to i64
      %base_buffer, %offset, %sizes:2, %strides:2 = memref.extract_strided_metadata %subview : memref<?x?xi32, strided<[?, 1], offset: ?>> -> memref<i32>, index, index, index, index, index
      %intptr = memref.extract_aligned_pointer_as_index %subview : memref<?x?xi32, strided<[?, 1], offset: ?>> -> index
      %66 = arith.index_cast %intptr : index to i64
      %67 = arith.index_cast %offset : index to i64
      %68 = arith.muli %67, %c4_i64 : i64
      %69 = arith.addi %66, %68 : i64
      %70 = arith.index_cast %strides#0 : index to i64
      %71 = arith.muli %70, %c4_i64 : i64
      "instgem.config_st"(%c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %71, %c1065353216_i64) : (i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> ()
      %72 = arith.maxsi %63, %c0_i64 : i64
      %73 = arith.divui %72, %c16_i64 : i64
      %74 = arith.addi %63, %64 : i64
      %75 = arith.maxsi %74, %c0_i64 : i64
      %76 = arith.addi %75, %c15_i64 : i64
      %77 = arith.divui %76, %c16_i64 : i64
      %78 = arith.subi %77, %73 : i64
      %79 = arith.cmpi sgt, %64, %c0_i64 : i64
      %80 = arith.extui %79 : i1 to i64
      %81 = arith.muli %78, %80 : i64
      %82 = arith.ceildivsi %65, %c16_i64 : i64
      %83:2 = scf.for %arg7 = %c0 to %6 step %c1 iter_args(%arg8 = %c0, %arg9 = %c0) -> (index, index) {
        %84 = arith.maxsi %arg8, %c0 : index
        %85 = arith.minsi %84, %arg5 : index
        %86 = arith.addi %arg8, %c32 : index
        %87 = arith.maxsi %86, %c0 : index
        %88 = arith.minsi %87, %arg5 : index
        %89 = arith.subi %85, %arg8 : index
        %90 = arith.maxsi %89, %c0 : index
        %91 = arith.minsi %90, %c32 : index
        %92 = arith.subi %88, %85 : index
        %93 = arith.cmpi sgt, %91, %c0 : index
        scf.if %93 {
          func.call @baco_boundary_error(%c41_i64, %c27_i64) : (i64, i64) -> ()
        }
        %subview_2 = memref.subview %reinterpret_cast[%8, %85] [%55, %92] [1, 1] : memref<?x?xi8, strided<[?, 1]>> to memref<?x?xi8, strided<[?, 1], offset: ?>>
        %94 = arith.index_cast %92 : index to i64
        %base_buffer_3, %offset_4, %sizes_5:2, %strides_6:2 = memref.extract_strided_metadata %subview_2 : memref<?x?xi8, strided<[?, 1], offset: ?>> -> memref<i8>, index, index, index, index, index
        %intptr_7 = memref.extract_aligned_pointer_as_index %subview_2 : memref<?x?xi8, strided<[?, 1], offset: ?>> -> index
        %95 = arith.index_cast %intptr_7 : index to i64
        %96 = arith.index_cast %offset_4 : index to i64
        %97 = arith.addi %95, %96 : i64
        %98 = arith.index_cast %strides_6#0 : index to i64
        "instgem.config_ld"(%c0_i64, %c0_i64, %c1_i64, %c16_i64, %c1065353216_i64, %98) : (i64, i64, i64, i64, i64, i64) -> ()
        %99 = arith.index_cast %81 : i64 to index
        scf.for %arg10 = %c0 to %99 step %c1 {
          %162 = arith.index_cast %arg10 : index to i64
          %163 = arith.addi %73, %162 : i64
          %164 = arith.muli %163, %c16_i64 : i64
          %165 = arith.maxsi %164, %63 : i64
          %166 = arith.addi %164, %c16_i64 : i64
          %167 = arith.minsi %166, %74 : i64
          %168 = arith.subi %167, %165 : i64
          %169 = arith.subi %165, %63 : i64
          %170 = arith.muli %169, %98 : i64
          %171 = arith.addi %97, %170 : i64
          %172 = arith.muli %163, %c32_i64 : i64
          %173 = arith.subi %165, %164 : i64
          %174 = arith.addi %172, %173 : i64
          %175 = arith.minsi %94, %c64_i64 : i64
          "instgem.mvin"(%171, %174, %175, %168) : (i64, i64, i64, i64) -> ()
        } {gemmini.load_stream}
        %100 = arith.addi %72, %c15_i64 : i64
        %101 = arith.divui %100, %c16_i64 : i64
        %102 = arith.cmpi sgt, %63, %c0_i64 : i64
        %103 = arith.extui %102 : i1 to i64
        %104 = arith.muli %101, %103 : i64
        %105 = arith.index_cast %104 : i64 to index
        scf.for %arg10 = %c0 to %105 step %c1 {
          %162 = arith.index_cast %arg10 : index to i64
          %163 = arith.muli %162, %c16_i64 : i64
          %164 = arith.maxsi %163, %c0_i64 : i64
          %165 = arith.addi %163, %c16_i64 : i64
          %166 = arith.minsi %165, %63 : i64
          %167 = arith.subi %166, %164 : i64
          %168 = arith.muli %162, %c32_i64 : i64
          %169 = arith.subi %164, %163 : i64
          %170 = arith.addi %168, %169 : i64
          %171 = arith.minsi %94, %c64_i64 : i64
          "instgem.mvin"(%c0_i64, %170, %171, %167) : (i64, i64, i64, i64) -> ()
        } {gemmini.load_stream}
        %106 = arith.maxsi %arg9, %c0 : index
        %107 = arith.minsi %106, %arg5 : index
        %108 = arith.addi %arg9, %c32 : index
        %109 = arith.maxsi %108, %c0 : index
        %110 = arith.minsi %109, %arg5 : index
        %111 = arith.subi %107, %arg9 : index
        %112 = arith.maxsi %111, %c0 : index
        %113 = arith.minsi %112, %c32 : index
        %114 = arith.subi %110, %107 : index
        scf.if %61 {
          func.call @baco_boundary_error(%c41_i64, %c62_i64) : (i64, i64) -> ()
        }
        %subview_8 = memref.subview %reinterpret_cast_0[%107, %11] [%114, %60] [1, 1] : memref<?x?xi8, strided<[?, 1]>> to memref<?x?xi8, strided<[?, 1], offset: ?>>
        %115 = arith.index_cast %113 : index to i64
        %116 = arith.index_cast %114 : index to i64
        %117 = arith.addi %115, %116 : i64
        %base_buffer_9, %offset_10, %sizes_11:2, %strides_12:2 = memref.extract_strided_metadata %subview_8 : memref<?x?xi8, strided<[?, 1], offset: ?>> -> memref<i8>, index, index, index, index, index
        %intptr_13 = memref.extract_aligned_pointer_as_index %subview_8 : memref<?x?xi8, strided<[?, 1], offset: ?>> -> index
        %118 = arith.index_cast %intptr_13 : index to i64
        %119 = arith.index_cast %offset_10 : index to i64
        %120 = arith.addi %118, %119 : i64
        %121 = arith.index_cast %strides_12#0 : index to i64
        "instgem.config_ld"(%c0_i64, %c0_i64, %c1_i64, %c16_i64, %c1065353216_i64, %121) : (i64, i64, i64, i64, i64, i64) -> ()
        %122 = arith.maxsi %115, %c0_i64 : i64
        %123 = arith.divui %122, %c16_i64 : i64
        %124 = arith.maxsi %117, %c0_i64 : i64
        %125 = arith.addi %124, %c15_i64 : i64
        %126 = arith.divui %125, %c16_i64 : i64
        %127 = arith.subi %126, %123 : i64
        %128 = arith.cmpi sgt, %116, %c0_i64 : i64
        %129 = arith.extui %128 : i1 to i64
        %130 = arith.muli %127, %129 : i64
        %131 = arith.index_cast %130 : i64 to index
        scf.for %arg10 = %c0 to %131 step %c1 {
          %162 = arith.index_cast %arg10 : index to i64
          %163 = arith.addi %123, %162 : i64
          %164 = arith.muli %163, %c16_i64 : i64
          %165 = arith.maxsi %164, %115 : i64
          %166 = arith.addi %164, %c16_i64 : i64
          %167 = arith.minsi %166, %117 : i64
          %168 = arith.subi %167, %165 : i64
          %169 = arith.subi %165, %115 : i64
          %170 = arith.muli %169, %121 : i64
          %171 = arith.addi %120, %170 : i64
          %172 = arith.addi %164, %c64_i64 : i64
          %173 = arith.subi %165, %164 : i64
          %174 = arith.addi %172, %173 : i64
          %175 = arith.minsi %65, %c64_i64 : i64
          "instgem.mvin"(%171, %174, %175, %168) : (i64, i64, i64, i64) -> ()
        } {gemmini.load_stream}
        %132 = arith.addi %122, %c15_i64 : i64
        %133 = arith.divui %132, %c16_i64 : i64
        %134 = arith.cmpi sgt, %115, %c0_i64 : i64
        %135 = arith.extui %134 : i1 to i64
        %136 = arith.muli %133, %135 : i64
        %137 = arith.index_cast %136 : i64 to index
        scf.for %arg10 = %c0 to %137 step %c1 {
          %162 = arith.index_cast %arg10 : index to i64
          %163 = arith.muli %162, %c16_i64 : i64
          %164 = arith.maxsi %163, %c0_i64 : i64
          %165 = arith.addi %163, %c16_i64 : i64
          %166 = arith.minsi %165, %115 : i64
          %167 = arith.subi %166, %164 : i64
          %168 = arith.addi %163, %c64_i64 : i64
          %169 = arith.subi %164, %163 : i64
          %170 = arith.addi %168, %169 : i64
          %171 = arith.minsi %65, %c64_i64 : i64
          "instgem.mvin"(%c0_i64, %170, %171, %167) : (i64, i64, i64, i64) -> ()
        } {gemmini.load_stream}
        %138 = arith.minsi %75, %c32_i64 : i64
        %139 = arith.maxsi %94, %c0_i64 : i64
        %140 = arith.minsi %139, %c32_i64 : i64
        %141 = arith.minsi %124, %c32_i64 : i64
        %142 = arith.maxsi %65, %c0_i64 : i64
        %143 = arith.minsi %142, %c16_i64 : i64
        %144 = arith.ceildivsi %138, %c16_i64 : i64
        %145 = arith.ceildivsi %143, %c16_i64 : i64
        %146 = arith.minsi %140, %141 : i64
        %147 = arith.ceildivsi %146, %c16_i64 : i64
        %148 = arith.addi %arg7, %c1 : index
        %149 = arith.cmpi sge, %148, %6 : index
        %150 = arith.cmpi eq, %arg7, %c0 : index
        %151 = arith.cmpi sgt, %144, %c0_i64 : i64
        %152 = arith.select %151, %145, %c0_i64 : i64
        %153 = arith.index_cast %152 : i64 to index
        %154 = arith.divsi %146, %c16_i64 : i64
        %155 = arith.minsi %147, %154 : i64
        %156 = arith.maxsi %155, %c0_i64 : i64
        %157 = arith.divsi %138, %c16_i64 : i64
        %158 = arith.minsi %144, %157 : i64
        %159 = arith.maxsi %158, %c1_i64 : i64
        %160 = arith.minsi %138, %c16_i64 : i64
        %161 = arith.ori %150, %149 : i1
        scf.if %161 {
          scf.if %149 {
            %162 = arith.maxsi %147, %c1_i64 : i64
            %163 = arith.ceildivsi %81, %162 : i64
            %164 = arith.select %150, %c0_i64, %c-1_i64 : i64
            scf.for %arg10 = %c0 to %153 step %c1 {
              %174 = arith.index_cast %arg10 : index to i64
              %175 = arith.subi %174, %c1_i64 : i64
              %176 = arith.cmpi sge, %175, %c0_i64 : i64
              %177 = arith.cmpi slt, %175, %82 : i64
              %178 = arith.andi %176, %177 : i1
              %179 = arith.subi %152, %c1_i64 : i64
              %180 = arith.cmpi eq, %174, %179 : i64
              %181 = arith.cmpi slt, %174, %82 : i64
              %182 = arith.andi %180, %181 : i1
              %183 = arith.subi %147, %c1_i64 : i64
              %184 = arith.select %182, %183, %c-1_i64 : i64
              %185 = arith.muli %174, %c16_i64 : i64
              %186 = arith.subi %143, %185 : i64
              %187 = arith.minsi %186, %c16_i64 : i64
              %188 = arith.cmpi sgt, %156, %c0_i64 : i64
              scf.if %188 {
                scf.if %178 {
                  %204 = arith.minsi %81, %c0_i64 : i64
                  %205 = arith.addi %204, %163 : i64
                  %206 = arith.minsi %205, %81 : i64
                  %207 = arith.index_cast %204 : i64 to index
                  %208 = arith.index_cast %206 : i64 to index
                  scf.for %arg11 = %207 to %208 step %c1 {
                    %209 = arith.index_cast %arg11 : index to i64
                    %210 = arith.addi %73, %209 : i64
                    %211 = arith.muli %210, %c16_i64 : i64
                    %212 = arith.maxsi %211, %63 : i64
                    %213 = arith.addi %211, %c16_i64 : i64
                    %214 = arith.minsi %213, %74 : i64
                    %215 = arith.subi %214, %212 : i64
                    %216 = arith.subi %212, %63 : i64
                    %217 = arith.muli %216, %71 : i64
                    %218 = arith.addi %69, %217 : i64
                    %219 = arith.muli %175, %c64_i64 : i64
                    %220 = arith.addi %218, %219 : i64
                    %221 = arith.muli %175, %c16_i64 : i64
                    %222 = arith.addi %211, %221 : i64
                    %223 = arith.ori %222, %c2684354560_i64 : i64
                    %224 = arith.subi %212, %211 : i64
                    %225 = arith.addi %223, %224 : i64
                    %226 = arith.subi %65, %221 : i64
                    %227 = arith.minsi %226, %c16_i64 : i64
                    "instgem.mvout"(%220, %225, %227, %215) : (i64, i64, i64, i64) -> ()
                  }
                }
                %197 = arith.cmpi eq, %164, %c0_i64 : i64
                %198 = arith.select %197, %c2147483648_i64, %c3221225472_i64 : i64
                %199 = arith.ori %185, %198 : i64
                %200 = arith.select %197, %c16_i64, %160 : i64
                %201 = arith.select %197, %c16_i64, %187 : i64
                %202 = arith.addi %185, %c64_i64 : i64
                "instgem.preload"(%202, %187, %c16_i64, %199, %201, %200) : (i64, i64, i64, i64, i64, i64) -> ()
                "instgem.compute_preloaded"(%c0_i64, %c16_i64, %160, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                %203 = arith.cmpi eq, %184, %c0_i64 : i64
                scf.if %203 {
                  %204 = arith.index_cast %159 : i64 to index
                  scf.for %arg11 = %c1 to %204 step %c1 {
                    %206 = arith.index_cast %arg11 : index to i64
                    %207 = arith.muli %206, %c16_i64 : i64
                    %208 = arith.addi %207, %185 : i64
                    %209 = arith.ori %208, %198 : i64
                    "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %209, %201, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                    %210 = arith.muli %206, %c32_i64 : i64
                    "instgem.compute_accumulated"(%210, %c16_i64, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                    %211 = arith.subi %206, %c1_i64 : i64
                    %212 = arith.subi %211, %73 : i64
                    %213 = arith.cmpi sge, %212, %c0_i64 : i64
                    %214 = arith.cmpi slt, %212, %81 : i64
                    %215 = arith.andi %213, %214 : i1
                    scf.if %215 {
                      %216 = arith.muli %211, %c16_i64 : i64
                      %217 = arith.maxsi %216, %63 : i64
                      %218 = arith.addi %216, %c16_i64 : i64
                      %219 = arith.minsi %218, %74 : i64
                      %220 = arith.subi %219, %217 : i64
                      %221 = arith.subi %217, %63 : i64
                      %222 = arith.muli %221, %71 : i64
                      %223 = arith.addi %69, %222 : i64
                      %224 = arith.muli %174, %c64_i64 : i64
                      %225 = arith.addi %223, %224 : i64
                      %226 = arith.addi %216, %185 : i64
                      %227 = arith.ori %226, %c2684354560_i64 : i64
                      %228 = arith.subi %217, %216 : i64
                      %229 = arith.addi %227, %228 : i64
                      %230 = arith.subi %65, %185 : i64
                      %231 = arith.minsi %230, %c16_i64 : i64
                      "instgem.mvout"(%225, %229, %231, %220) : (i64, i64, i64, i64) -> ()
                    }
                  }
                  %205 = arith.index_cast %144 : i64 to index
                  scf.for %arg11 = %204 to %205 step %c1 {
                    %206 = arith.index_cast %arg11 : index to i64
                    %207 = arith.muli %206, %c16_i64 : i64
                    %208 = arith.subi %138, %207 : i64
                    %209 = arith.minsi %208, %c16_i64 : i64
                    %210 = arith.addi %207, %185 : i64
                    %211 = arith.ori %210, %198 : i64
                    %212 = arith.select %197, %c16_i64, %209 : i64
                    "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %211, %201, %212) : (i64, i64, i64, i64, i64, i64) -> ()
                    %213 = arith.muli %206, %c32_i64 : i64
                    "instgem.compute_accumulated"(%213, %c16_i64, %209, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                    %214 = arith.subi %206, %c1_i64 : i64
                    %215 = arith.subi %214, %73 : i64
                    %216 = arith.cmpi sge, %215, %c0_i64 : i64
                    %217 = arith.cmpi slt, %215, %81 : i64
                    %218 = arith.andi %216, %217 : i1
                    scf.if %218 {
                      %219 = arith.muli %214, %c16_i64 : i64
                      %220 = arith.maxsi %219, %63 : i64
                      %221 = arith.addi %219, %c16_i64 : i64
                      %222 = arith.minsi %221, %74 : i64
                      %223 = arith.subi %222, %220 : i64
                      %224 = arith.subi %220, %63 : i64
                      %225 = arith.muli %224, %71 : i64
                      %226 = arith.addi %69, %225 : i64
                      %227 = arith.muli %174, %c64_i64 : i64
                      %228 = arith.addi %226, %227 : i64
                      %229 = arith.addi %219, %185 : i64
                      %230 = arith.ori %229, %c2684354560_i64 : i64
                      %231 = arith.subi %220, %219 : i64
                      %232 = arith.addi %230, %231 : i64
                      %233 = arith.subi %65, %185 : i64
                      %234 = arith.minsi %233, %c16_i64 : i64
                      "instgem.mvout"(%228, %232, %234, %223) : (i64, i64, i64, i64) -> ()
                    }
                  }
                } else {
                  %204 = arith.index_cast %159 : i64 to index
                  scf.for %arg11 = %c1 to %204 step %c1 {
                    %206 = arith.index_cast %arg11 : index to i64
                    %207 = arith.muli %206, %c16_i64 : i64
                    %208 = arith.addi %207, %185 : i64
                    %209 = arith.ori %208, %198 : i64
                    "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %209, %201, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                    %210 = arith.muli %206, %c32_i64 : i64
                    "instgem.compute_accumulated"(%210, %c16_i64, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                  }
                  %205 = arith.index_cast %144 : i64 to index
                  scf.for %arg11 = %204 to %205 step %c1 {
                    %206 = arith.index_cast %arg11 : index to i64
                    %207 = arith.muli %206, %c16_i64 : i64
                    %208 = arith.subi %138, %207 : i64
                    %209 = arith.minsi %208, %c16_i64 : i64
                    %210 = arith.addi %207, %185 : i64
                    %211 = arith.ori %210, %198 : i64
                    %212 = arith.select %197, %c16_i64, %209 : i64
                    "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %211, %201, %212) : (i64, i64, i64, i64, i64, i64) -> ()
                    %213 = arith.muli %206, %c32_i64 : i64
                    "instgem.compute_accumulated"(%213, %c16_i64, %209, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                  }
                }
              }
              %189 = arith.index_cast %156 : i64 to index
              scf.for %arg11 = %c1 to %189 step %c1 {
                %197 = arith.index_cast %arg11 : index to i64
                scf.if %178 {
                  %203 = arith.muli %197, %163 : i64
                  %204 = arith.minsi %203, %81 : i64
                  %205 = arith.addi %204, %163 : i64
                  %206 = arith.minsi %205, %81 : i64
                  %207 = arith.index_cast %204 : i64 to index
                  %208 = arith.index_cast %206 : i64 to index
                  scf.for %arg12 = %207 to %208 step %c1 {
                    %209 = arith.index_cast %arg12 : index to i64
                    %210 = arith.addi %73, %209 : i64
                    %211 = arith.muli %210, %c16_i64 : i64
                    %212 = arith.maxsi %211, %63 : i64
                    %213 = arith.addi %211, %c16_i64 : i64
                    %214 = arith.minsi %213, %74 : i64
                    %215 = arith.subi %214, %212 : i64
                    %216 = arith.subi %212, %63 : i64
                    %217 = arith.muli %216, %71 : i64
                    %218 = arith.addi %69, %217 : i64
                    %219 = arith.muli %175, %c64_i64 : i64
                    %220 = arith.addi %218, %219 : i64
                    %221 = arith.muli %175, %c16_i64 : i64
                    %222 = arith.addi %211, %221 : i64
                    %223 = arith.ori %222, %c2684354560_i64 : i64
                    %224 = arith.subi %212, %211 : i64
                    %225 = arith.addi %223, %224 : i64
                    %226 = arith.subi %65, %221 : i64
                    %227 = arith.minsi %226, %c16_i64 : i64
                    "instgem.mvout"(%220, %225, %227, %215) : (i64, i64, i64, i64) -> ()
                  }
                }
                %198 = arith.ori %185, %c3221225472_i64 : i64
                %199 = arith.muli %197, %c16_i64 : i64
                %200 = arith.addi %199, %185 : i64
                %201 = arith.addi %200, %c64_i64 : i64
                "instgem.preload"(%201, %187, %c16_i64, %198, %187, %160) : (i64, i64, i64, i64, i64, i64) -> ()
                "instgem.compute_preloaded"(%199, %c16_i64, %160, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                %202 = arith.cmpi eq, %197, %184 : i64
                scf.if %202 {
                  %203 = arith.index_cast %159 : i64 to index
                  scf.for %arg12 = %c1 to %203 step %c1 {
                    %205 = arith.index_cast %arg12 : index to i64
                    %206 = arith.muli %205, %c16_i64 : i64
                    %207 = arith.addi %206, %185 : i64
                    %208 = arith.ori %207, %c3221225472_i64 : i64
                    "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %208, %187, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                    %209 = arith.muli %205, %c32_i64 : i64
                    %210 = arith.addi %209, %199 : i64
                    "instgem.compute_accumulated"(%210, %c16_i64, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                    %211 = arith.subi %205, %c1_i64 : i64
                    %212 = arith.subi %211, %73 : i64
                    %213 = arith.cmpi sge, %212, %c0_i64 : i64
                    %214 = arith.cmpi slt, %212, %81 : i64
                    %215 = arith.andi %213, %214 : i1
                    scf.if %215 {
                      %216 = arith.muli %211, %c16_i64 : i64
                      %217 = arith.maxsi %216, %63 : i64
                      %218 = arith.addi %216, %c16_i64 : i64
                      %219 = arith.minsi %218, %74 : i64
                      %220 = arith.subi %219, %217 : i64
                      %221 = arith.subi %217, %63 : i64
                      %222 = arith.muli %221, %71 : i64
                      %223 = arith.addi %69, %222 : i64
                      %224 = arith.muli %174, %c64_i64 : i64
                      %225 = arith.addi %223, %224 : i64
                      %226 = arith.addi %216, %185 : i64
                      %227 = arith.ori %226, %c2684354560_i64 : i64
                      %228 = arith.subi %217, %216 : i64
                      %229 = arith.addi %227, %228 : i64
                      %230 = arith.subi %65, %185 : i64
                      %231 = arith.minsi %230, %c16_i64 : i64
                      "instgem.mvout"(%225, %229, %231, %220) : (i64, i64, i64, i64) -> ()
                    }
                  }
                  %204 = arith.index_cast %144 : i64 to index
                  scf.for %arg12 = %203 to %204 step %c1 {
                    %205 = arith.index_cast %arg12 : index to i64
                    %206 = arith.muli %205, %c16_i64 : i64
                    %207 = arith.subi %138, %206 : i64
                    %208 = arith.minsi %207, %c16_i64 : i64
                    %209 = arith.addi %206, %185 : i64
                    %210 = arith.ori %209, %c3221225472_i64 : i64
                    "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %210, %187, %208) : (i64, i64, i64, i64, i64, i64) -> ()
                    %211 = arith.muli %205, %c32_i64 : i64
                    %212 = arith.addi %211, %199 : i64
                    "instgem.compute_accumulated"(%212, %c16_i64, %208, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                    %213 = arith.subi %205, %c1_i64 : i64
                    %214 = arith.subi %213, %73 : i64
                    %215 = arith.cmpi sge, %214, %c0_i64 : i64
                    %216 = arith.cmpi slt, %214, %81 : i64
                    %217 = arith.andi %215, %216 : i1
                    scf.if %217 {
                      %218 = arith.muli %213, %c16_i64 : i64
                      %219 = arith.maxsi %218, %63 : i64
                      %220 = arith.addi %218, %c16_i64 : i64
                      %221 = arith.minsi %220, %74 : i64
                      %222 = arith.subi %221, %219 : i64
                      %223 = arith.subi %219, %63 : i64
                      %224 = arith.muli %223, %71 : i64
                      %225 = arith.addi %69, %224 : i64
                      %226 = arith.muli %174, %c64_i64 : i64
                      %227 = arith.addi %225, %226 : i64
                      %228 = arith.addi %218, %185 : i64
                      %229 = arith.ori %228, %c2684354560_i64 : i64
                      %230 = arith.subi %219, %218 : i64
                      %231 = arith.addi %229, %230 : i64
                      %232 = arith.subi %65, %185 : i64
                      %233 = arith.minsi %232, %c16_i64 : i64
                      "instgem.mvout"(%227, %231, %233, %222) : (i64, i64, i64, i64) -> ()
                    }
                  }
                } else {
                  %203 = arith.index_cast %159 : i64 to index
                  scf.for %arg12 = %c1 to %203 step %c1 {
                    %205 = arith.index_cast %arg12 : index to i64
                    %206 = arith.muli %205, %c16_i64 : i64
                    %207 = arith.addi %206, %185 : i64
                    %208 = arith.ori %207, %c3221225472_i64 : i64
                    "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %208, %187, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                    %209 = arith.muli %205, %c32_i64 : i64
                    %210 = arith.addi %209, %199 : i64
                    "instgem.compute_accumulated"(%210, %c16_i64, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                  }
                  %204 = arith.index_cast %144 : i64 to index
                  scf.for %arg12 = %203 to %204 step %c1 {
                    %205 = arith.index_cast %arg12 : index to i64
                    %206 = arith.muli %205, %c16_i64 : i64
                    %207 = arith.subi %138, %206 : i64
                    %208 = arith.minsi %207, %c16_i64 : i64
                    %209 = arith.addi %206, %185 : i64
                    %210 = arith.ori %209, %c3221225472_i64 : i64
                    "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %210, %187, %208) : (i64, i64, i64, i64, i64, i64) -> ()
                    %211 = arith.muli %205, %c32_i64 : i64
                    %212 = arith.addi %211, %199 : i64
                    "instgem.compute_accumulated"(%212, %c16_i64, %208, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                  }
                }
              }
              %190 = arith.index_cast %147 : i64 to index
              scf.for %arg11 = %189 to %190 step %c1 {
                %197 = arith.index_cast %arg11 : index to i64
                %198 = arith.muli %197, %c16_i64 : i64
                %199 = arith.subi %140, %198 : i64
                %200 = arith.minsi %199, %c16_i64 : i64
                %201 = arith.subi %141, %198 : i64
                %202 = arith.minsi %201, %c16_i64 : i64
                scf.if %178 {
                  %211 = arith.muli %197, %163 : i64
                  %212 = arith.minsi %211, %81 : i64
                  %213 = arith.addi %212, %163 : i64
                  %214 = arith.minsi %213, %81 : i64
                  %215 = arith.index_cast %212 : i64 to index
                  %216 = arith.index_cast %214 : i64 to index
                  scf.for %arg12 = %215 to %216 step %c1 {
                    %217 = arith.index_cast %arg12 : index to i64
                    %218 = arith.addi %73, %217 : i64
                    %219 = arith.muli %218, %c16_i64 : i64
                    %220 = arith.maxsi %219, %63 : i64
                    %221 = arith.addi %219, %c16_i64 : i64
                    %222 = arith.minsi %221, %74 : i64
                    %223 = arith.subi %222, %220 : i64
                    %224 = arith.subi %220, %63 : i64
                    %225 = arith.muli %224, %71 : i64
                    %226 = arith.addi %69, %225 : i64
                    %227 = arith.muli %175, %c64_i64 : i64
                    %228 = arith.addi %226, %227 : i64
                    %229 = arith.muli %175, %c16_i64 : i64
                    %230 = arith.addi %219, %229 : i64
                    %231 = arith.ori %230, %c2684354560_i64 : i64
                    %232 = arith.subi %220, %219 : i64
                    %233 = arith.addi %231, %232 : i64
                    %234 = arith.subi %65, %229 : i64
                    %235 = arith.minsi %234, %c16_i64 : i64
                    "instgem.mvout"(%228, %233, %235, %223) : (i64, i64, i64, i64) -> ()
                  }
                }
                %203 = arith.cmpi eq, %197, %164 : i64
                %204 = arith.select %203, %c2147483648_i64, %c3221225472_i64 : i64
                %205 = arith.ori %185, %204 : i64
                %206 = arith.select %203, %c16_i64, %160 : i64
                %207 = arith.select %203, %c16_i64, %187 : i64
                %208 = arith.addi %198, %185 : i64
                %209 = arith.addi %208, %c64_i64 : i64
                "instgem.preload"(%209, %187, %202, %205, %207, %206) : (i64, i64, i64, i64, i64, i64) -> ()
                "instgem.compute_preloaded"(%198, %200, %160, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                %210 = arith.cmpi eq, %197, %184 : i64
                scf.if %210 {
                  %211 = arith.index_cast %159 : i64 to index
                  scf.for %arg12 = %c1 to %211 step %c1 {
                    %213 = arith.index_cast %arg12 : index to i64
                    %214 = arith.muli %213, %c16_i64 : i64
                    %215 = arith.addi %214, %185 : i64
                    %216 = arith.ori %215, %204 : i64
                    "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %216, %207, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                    %217 = arith.muli %213, %c32_i64 : i64
                    %218 = arith.addi %217, %198 : i64
                    "instgem.compute_accumulated"(%218, %200, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                    %219 = arith.subi %213, %c1_i64 : i64
                    %220 = arith.subi %219, %73 : i64
                    %221 = arith.cmpi sge, %220, %c0_i64 : i64
                    %222 = arith.cmpi slt, %220, %81 : i64
                    %223 = arith.andi %221, %222 : i1
                    scf.if %223 {
                      %224 = arith.muli %219, %c16_i64 : i64
                      %225 = arith.maxsi %224, %63 : i64
                      %226 = arith.addi %224, %c16_i64 : i64
                      %227 = arith.minsi %226, %74 : i64
                      %228 = arith.subi %227, %225 : i64
                      %229 = arith.subi %225, %63 : i64
                      %230 = arith.muli %229, %71 : i64
                      %231 = arith.addi %69, %230 : i64
                      %232 = arith.muli %174, %c64_i64 : i64
                      %233 = arith.addi %231, %232 : i64
                      %234 = arith.addi %224, %185 : i64
                      %235 = arith.ori %234, %c2684354560_i64 : i64
                      %236 = arith.subi %225, %224 : i64
                      %237 = arith.addi %235, %236 : i64
                      %238 = arith.subi %65, %185 : i64
                      %239 = arith.minsi %238, %c16_i64 : i64
                      "instgem.mvout"(%233, %237, %239, %228) : (i64, i64, i64, i64) -> ()
                    }
                  }
                  %212 = arith.index_cast %144 : i64 to index
                  scf.for %arg12 = %211 to %212 step %c1 {
                    %213 = arith.index_cast %arg12 : index to i64
                    %214 = arith.muli %213, %c16_i64 : i64
                    %215 = arith.subi %138, %214 : i64
                    %216 = arith.minsi %215, %c16_i64 : i64
                    %217 = arith.addi %214, %185 : i64
                    %218 = arith.ori %217, %204 : i64
                    %219 = arith.select %203, %c16_i64, %216 : i64
                    "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %218, %207, %219) : (i64, i64, i64, i64, i64, i64) -> ()
                    %220 = arith.muli %213, %c32_i64 : i64
                    %221 = arith.addi %220, %198 : i64
                    "instgem.compute_accumulated"(%221, %200, %216, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                    %222 = arith.subi %213, %c1_i64 : i64
                    %223 = arith.subi %222, %73 : i64
                    %224 = arith.cmpi sge, %223, %c0_i64 : i64
                    %225 = arith.cmpi slt, %223, %81 : i64
                    %226 = arith.andi %224, %225 : i1
                    scf.if %226 {
                      %227 = arith.muli %222, %c16_i64 : i64
                      %228 = arith.maxsi %227, %63 : i64
                      %229 = arith.addi %227, %c16_i64 : i64
                      %230 = arith.minsi %229, %74 : i64
                      %231 = arith.subi %230, %228 : i64
                      %232 = arith.subi %228, %63 : i64
                      %233 = arith.muli %232, %71 : i64
                      %234 = arith.addi %69, %233 : i64
                      %235 = arith.muli %174, %c64_i64 : i64
                      %236 = arith.addi %234, %235 : i64
                      %237 = arith.addi %227, %185 : i64
                      %238 = arith.ori %237, %c2684354560_i64 : i64
                      %239 = arith.subi %228, %227 : i64
                      %240 = arith.addi %238, %239 : i64
                      %241 = arith.subi %65, %185 : i64
                      %242 = arith.minsi %241, %c16_i64 : i64
                      "instgem.mvout"(%236, %240, %242, %231) : (i64, i64, i64, i64) -> ()
                    }
                  }
                } else {
                  %211 = arith.index_cast %159 : i64 to index
                  scf.for %arg12 = %c1 to %211 step %c1 {
                    %213 = arith.index_cast %arg12 : index to i64
                    %214 = arith.muli %213, %c16_i64 : i64
                    %215 = arith.addi %214, %185 : i64
                    %216 = arith.ori %215, %204 : i64
                    "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %216, %207, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                    %217 = arith.muli %213, %c32_i64 : i64
                    %218 = arith.addi %217, %198 : i64
                    "instgem.compute_accumulated"(%218, %200, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                  }
                  %212 = arith.index_cast %144 : i64 to index
                  scf.for %arg12 = %211 to %212 step %c1 {
                    %213 = arith.index_cast %arg12 : index to i64
                    %214 = arith.muli %213, %c16_i64 : i64
                    %215 = arith.subi %138, %214 : i64
                    %216 = arith.minsi %215, %c16_i64 : i64
                    %217 = arith.addi %214, %185 : i64
                    %218 = arith.ori %217, %204 : i64
                    %219 = arith.select %203, %c16_i64, %216 : i64
                    "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %218, %207, %219) : (i64, i64, i64, i64, i64, i64) -> ()
                    %220 = arith.muli %213, %c32_i64 : i64
                    %221 = arith.addi %220, %198 : i64
                    "instgem.compute_accumulated"(%221, %200, %216, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                  }
                }
              }
              scf.if %178 {
                %197 = arith.muli %147, %163 : i64
                %198 = arith.minsi %197, %81 : i64
                %199 = arith.index_cast %198 : i64 to index
                scf.for %arg11 = %199 to %99 step %c1 {
                  %200 = arith.index_cast %arg11 : index to i64
                  %201 = arith.addi %73, %200 : i64
                  %202 = arith.muli %201, %c16_i64 : i64
                  %203 = arith.maxsi %202, %63 : i64
                  %204 = arith.addi %202, %c16_i64 : i64
                  %205 = arith.minsi %204, %74 : i64
                  %206 = arith.subi %205, %203 : i64
                  %207 = arith.subi %203, %63 : i64
                  %208 = arith.muli %207, %71 : i64
                  %209 = arith.addi %69, %208 : i64
                  %210 = arith.muli %175, %c64_i64 : i64
                  %211 = arith.addi %209, %210 : i64
                  %212 = arith.muli %175, %c16_i64 : i64
                  %213 = arith.addi %202, %212 : i64
                  %214 = arith.ori %213, %c2684354560_i64 : i64
                  %215 = arith.subi %203, %202 : i64
                  %216 = arith.addi %214, %215 : i64
                  %217 = arith.subi %65, %212 : i64
                  %218 = arith.minsi %217, %c16_i64 : i64
                  "instgem.mvout"(%211, %216, %218, %206) : (i64, i64, i64, i64) -> ()
                }
              }
              %191 = arith.cmpi sgt, %147, %c0_i64 : i64
              %192 = arith.subi %144, %c1_i64 : i64
              %193 = arith.subi %192, %73 : i64
              %194 = arith.maxsi %193, %c0_i64 : i64
              %195 = arith.minsi %194, %81 : i64
              %196 = arith.select %191, %195, %c0_i64 : i64
              scf.if %182 {
                %197 = arith.index_cast %196 : i64 to index
                scf.for %arg11 = %197 to %99 step %c1 {
                  %198 = arith.index_cast %arg11 : index to i64
                  %199 = arith.addi %73, %198 : i64
                  %200 = arith.muli %199, %c16_i64 : i64
                  %201 = arith.maxsi %200, %63 : i64
                  %202 = arith.addi %200, %c16_i64 : i64
                  %203 = arith.minsi %202, %74 : i64
                  %204 = arith.subi %203, %201 : i64
                  %205 = arith.subi %201, %63 : i64
                  %206 = arith.muli %205, %71 : i64
                  %207 = arith.addi %69, %206 : i64
                  %208 = arith.muli %174, %c64_i64 : i64
                  %209 = arith.addi %207, %208 : i64
                  %210 = arith.addi %200, %185 : i64
                  %211 = arith.ori %210, %c2684354560_i64 : i64
                  %212 = arith.subi %201, %200 : i64
                  %213 = arith.addi %211, %212 : i64
                  %214 = arith.subi %65, %185 : i64
                  %215 = arith.minsi %214, %c16_i64 : i64
                  "instgem.mvout"(%209, %213, %215, %204) : (i64, i64, i64, i64) -> ()
                }
              }
            } {gemmini.compute_nest}
            %165 = arith.cmpi eq, %147, %c0_i64 : i64
            %166 = arith.cmpi slt, %144, %c2_i64 : i64
            %167 = arith.cmpi slt, %152, %c1_i64 : i64
            %168 = arith.ori %165, %166 : i1
            %169 = arith.ori %168, %167 : i1
            %170 = arith.andi %150, %169 : i1
            scf.if %170 {
              scf.for %arg10 = %c0 to %c2 step %c1 {
                %174 = arith.index_cast %arg10 : index to i64
                %175 = arith.muli %174, %c16_i64 : i64
                %176 = arith.ori %175, %c2147483648_i64 : i64
                %177 = arith.cmpi sge, %174, %144 : i64
                %178 = arith.cmpi sle, %152, %c0_i64 : i64
                %179 = arith.ori %165, %177 : i1
                %180 = arith.ori %179, %178 : i1
                %181 = arith.cmpi sgt, %82, %c0_i64 : i64
                %182 = arith.andi %180, %181 : i1
                scf.if %182 {
                  "instgem.mvin"(%c0_i64, %176, %c16_i64, %c16_i64) : (i64, i64, i64, i64) -> ()
                }
              }
            }
            %171 = arith.minsi %152, %82 : i64
            %172 = arith.index_cast %171 : i64 to index
            %173 = arith.index_cast %82 : i64 to index
            scf.for %arg10 = %172 to %173 step %c1 {
              %174 = arith.index_cast %arg10 : index to i64
              scf.for %arg11 = %c0 to %99 step %c1 {
                %175 = arith.index_cast %arg11 : index to i64
                %176 = arith.addi %73, %175 : i64
                %177 = arith.muli %176, %c16_i64 : i64
                %178 = arith.maxsi %177, %63 : i64
                %179 = arith.addi %177, %c16_i64 : i64
                %180 = arith.minsi %179, %74 : i64
                %181 = arith.subi %180, %178 : i64
                %182 = arith.subi %178, %63 : i64
                %183 = arith.muli %182, %71 : i64
                %184 = arith.addi %69, %183 : i64
                %185 = arith.muli %174, %c64_i64 : i64
                %186 = arith.addi %184, %185 : i64
                %187 = arith.muli %174, %c16_i64 : i64
                %188 = arith.addi %177, %187 : i64
                %189 = arith.ori %188, %c2684354560_i64 : i64
                %190 = arith.subi %178, %177 : i64
                %191 = arith.addi %189, %190 : i64
                %192 = arith.subi %65, %187 : i64
                %193 = arith.minsi %192, %c16_i64 : i64
                "instgem.mvout"(%186, %191, %193, %181) : (i64, i64, i64, i64) -> ()
              }
            }
          } else {
            %162 = arith.select %150, %c0_i64, %c-1_i64 : i64
            scf.for %arg10 = %c0 to %153 step %c1 {
              %169 = arith.index_cast %arg10 : index to i64
              %170 = arith.muli %169, %c16_i64 : i64
              %171 = arith.subi %143, %170 : i64
              %172 = arith.minsi %171, %c16_i64 : i64
              %173 = arith.cmpi sgt, %156, %c0_i64 : i64
              scf.if %173 {
                %176 = arith.cmpi eq, %162, %c0_i64 : i64
                %177 = arith.select %176, %c2147483648_i64, %c3221225472_i64 : i64
                %178 = arith.ori %170, %177 : i64
                %179 = arith.select %176, %c16_i64, %160 : i64
                %180 = arith.select %176, %c16_i64, %172 : i64
                %181 = arith.addi %170, %c64_i64 : i64
                "instgem.preload"(%181, %172, %c16_i64, %178, %180, %179) : (i64, i64, i64, i64, i64, i64) -> ()
                "instgem.compute_preloaded"(%c0_i64, %c16_i64, %160, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                %182 = arith.index_cast %159 : i64 to index
                scf.for %arg11 = %c1 to %182 step %c1 {
                  %184 = arith.index_cast %arg11 : index to i64
                  %185 = arith.muli %184, %c16_i64 : i64
                  %186 = arith.addi %185, %170 : i64
                  %187 = arith.ori %186, %177 : i64
                  "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %187, %180, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                  %188 = arith.muli %184, %c32_i64 : i64
                  "instgem.compute_accumulated"(%188, %c16_i64, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                }
                %183 = arith.index_cast %144 : i64 to index
                scf.for %arg11 = %182 to %183 step %c1 {
                  %184 = arith.index_cast %arg11 : index to i64
                  %185 = arith.muli %184, %c16_i64 : i64
                  %186 = arith.subi %138, %185 : i64
                  %187 = arith.minsi %186, %c16_i64 : i64
                  %188 = arith.addi %185, %170 : i64
                  %189 = arith.ori %188, %177 : i64
                  %190 = arith.select %176, %c16_i64, %187 : i64
                  "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %189, %180, %190) : (i64, i64, i64, i64, i64, i64) -> ()
                  %191 = arith.muli %184, %c32_i64 : i64
                  "instgem.compute_accumulated"(%191, %c16_i64, %187, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                }
              }
              %174 = arith.index_cast %156 : i64 to index
              scf.for %arg11 = %c1 to %174 step %c1 {
                %176 = arith.index_cast %arg11 : index to i64
                %177 = arith.ori %170, %c3221225472_i64 : i64
                %178 = arith.muli %176, %c16_i64 : i64
                %179 = arith.addi %178, %170 : i64
                %180 = arith.addi %179, %c64_i64 : i64
                "instgem.preload"(%180, %172, %c16_i64, %177, %172, %160) : (i64, i64, i64, i64, i64, i64) -> ()
                "instgem.compute_preloaded"(%178, %c16_i64, %160, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                %181 = arith.index_cast %159 : i64 to index
                scf.for %arg12 = %c1 to %181 step %c1 {
                  %183 = arith.index_cast %arg12 : index to i64
                  %184 = arith.muli %183, %c16_i64 : i64
                  %185 = arith.addi %184, %170 : i64
                  %186 = arith.ori %185, %c3221225472_i64 : i64
                  "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %186, %172, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                  %187 = arith.muli %183, %c32_i64 : i64
                  %188 = arith.addi %187, %178 : i64
                  "instgem.compute_accumulated"(%188, %c16_i64, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                }
                %182 = arith.index_cast %144 : i64 to index
                scf.for %arg12 = %181 to %182 step %c1 {
                  %183 = arith.index_cast %arg12 : index to i64
                  %184 = arith.muli %183, %c16_i64 : i64
                  %185 = arith.subi %138, %184 : i64
                  %186 = arith.minsi %185, %c16_i64 : i64
                  %187 = arith.addi %184, %170 : i64
                  %188 = arith.ori %187, %c3221225472_i64 : i64
                  "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %188, %172, %186) : (i64, i64, i64, i64, i64, i64) -> ()
                  %189 = arith.muli %183, %c32_i64 : i64
                  %190 = arith.addi %189, %178 : i64
                  "instgem.compute_accumulated"(%190, %c16_i64, %186, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                }
              }
              %175 = arith.index_cast %147 : i64 to index
              scf.for %arg11 = %174 to %175 step %c1 {
                %176 = arith.index_cast %arg11 : index to i64
                %177 = arith.muli %176, %c16_i64 : i64
                %178 = arith.subi %140, %177 : i64
                %179 = arith.minsi %178, %c16_i64 : i64
                %180 = arith.subi %141, %177 : i64
                %181 = arith.minsi %180, %c16_i64 : i64
                %182 = arith.cmpi eq, %176, %162 : i64
                %183 = arith.select %182, %c2147483648_i64, %c3221225472_i64 : i64
                %184 = arith.ori %170, %183 : i64
                %185 = arith.select %182, %c16_i64, %160 : i64
                %186 = arith.select %182, %c16_i64, %172 : i64
                %187 = arith.addi %177, %170 : i64
                %188 = arith.addi %187, %c64_i64 : i64
                "instgem.preload"(%188, %172, %181, %184, %186, %185) : (i64, i64, i64, i64, i64, i64) -> ()
                "instgem.compute_preloaded"(%177, %179, %160, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                %189 = arith.index_cast %159 : i64 to index
                scf.for %arg12 = %c1 to %189 step %c1 {
                  %191 = arith.index_cast %arg12 : index to i64
                  %192 = arith.muli %191, %c16_i64 : i64
                  %193 = arith.addi %192, %170 : i64
                  %194 = arith.ori %193, %183 : i64
                  "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %194, %186, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                  %195 = arith.muli %191, %c32_i64 : i64
                  %196 = arith.addi %195, %177 : i64
                  "instgem.compute_accumulated"(%196, %179, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                }
                %190 = arith.index_cast %144 : i64 to index
                scf.for %arg12 = %189 to %190 step %c1 {
                  %191 = arith.index_cast %arg12 : index to i64
                  %192 = arith.muli %191, %c16_i64 : i64
                  %193 = arith.subi %138, %192 : i64
                  %194 = arith.minsi %193, %c16_i64 : i64
                  %195 = arith.addi %192, %170 : i64
                  %196 = arith.ori %195, %183 : i64
                  %197 = arith.select %182, %c16_i64, %194 : i64
                  "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %196, %186, %197) : (i64, i64, i64, i64, i64, i64) -> ()
                  %198 = arith.muli %191, %c32_i64 : i64
                  %199 = arith.addi %198, %177 : i64
                  "instgem.compute_accumulated"(%199, %179, %194, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                }
              }
            } {gemmini.compute_nest}
            %163 = arith.cmpi eq, %147, %c0_i64 : i64
            %164 = arith.cmpi slt, %144, %c2_i64 : i64
            %165 = arith.cmpi slt, %152, %c1_i64 : i64
            %166 = arith.ori %163, %164 : i1
            %167 = arith.ori %166, %165 : i1
            %168 = arith.andi %150, %167 : i1
            scf.if %168 {
              scf.for %arg10 = %c0 to %c2 step %c1 {
                %169 = arith.index_cast %arg10 : index to i64
                %170 = arith.muli %169, %c16_i64 : i64
                %171 = arith.ori %170, %c2147483648_i64 : i64
                %172 = arith.cmpi sge, %169, %144 : i64
                %173 = arith.cmpi sle, %152, %c0_i64 : i64
                %174 = arith.ori %163, %172 : i1
                %175 = arith.ori %174, %173 : i1
                %176 = arith.cmpi sgt, %82, %c0_i64 : i64
                %177 = arith.andi %175, %176 : i1
                scf.if %177 {
                  "instgem.mvin"(%c0_i64, %171, %c16_i64, %c16_i64) : (i64, i64, i64, i64) -> ()
                }
              }
            }
          }
        } else {
          scf.for %arg10 = %c0 to %153 step %c1 {
            %162 = arith.index_cast %arg10 : index to i64
            %163 = arith.muli %162, %c16_i64 : i64
            %164 = arith.subi %143, %163 : i64
            %165 = arith.minsi %164, %c16_i64 : i64
            %166 = arith.index_cast %156 : i64 to index
            scf.for %arg11 = %c0 to %166 step %c1 {
              %168 = arith.index_cast %arg11 : index to i64
              %169 = arith.ori %163, %c3221225472_i64 : i64
              %170 = arith.muli %168, %c16_i64 : i64
              %171 = arith.addi %170, %163 : i64
              %172 = arith.addi %171, %c64_i64 : i64
              "instgem.preload"(%172, %165, %c16_i64, %169, %165, %160) : (i64, i64, i64, i64, i64, i64) -> ()
              "instgem.compute_preloaded"(%170, %c16_i64, %160, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
              %173 = arith.index_cast %159 : i64 to index
              scf.for %arg12 = %c1 to %173 step %c1 {
                %175 = arith.index_cast %arg12 : index to i64
                %176 = arith.muli %175, %c16_i64 : i64
                %177 = arith.addi %176, %163 : i64
                %178 = arith.ori %177, %c3221225472_i64 : i64
                "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %178, %165, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                %179 = arith.muli %175, %c32_i64 : i64
                %180 = arith.addi %179, %170 : i64
                "instgem.compute_accumulated"(%180, %c16_i64, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
              }
              %174 = arith.index_cast %144 : i64 to index
              scf.for %arg12 = %173 to %174 step %c1 {
                %175 = arith.index_cast %arg12 : index to i64
                %176 = arith.muli %175, %c16_i64 : i64
                %177 = arith.subi %138, %176 : i64
                %178 = arith.minsi %177, %c16_i64 : i64
                %179 = arith.addi %176, %163 : i64
                %180 = arith.ori %179, %c3221225472_i64 : i64
                "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %180, %165, %178) : (i64, i64, i64, i64, i64, i64) -> ()
                %181 = arith.muli %175, %c32_i64 : i64
                %182 = arith.addi %181, %170 : i64
                "instgem.compute_accumulated"(%182, %c16_i64, %178, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
              }
            }
            %167 = arith.index_cast %147 : i64 to index
            scf.for %arg11 = %166 to %167 step %c1 {
              %168 = arith.index_cast %arg11 : index to i64
              %169 = arith.muli %168, %c16_i64 : i64
              %170 = arith.subi %140, %169 : i64
              %171 = arith.minsi %170, %c16_i64 : i64
              %172 = arith.subi %141, %169 : i64
              %173 = arith.minsi %172, %c16_i64 : i64
              %174 = arith.ori %163, %c3221225472_i64 : i64
              %175 = arith.addi %169, %163 : i64
              %176 = arith.addi %175, %c64_i64 : i64
              "instgem.preload"(%176, %165, %173, %174, %165, %160) : (i64, i64, i64, i64, i64, i64) -> ()
              "instgem.compute_preloaded"(%169, %171, %160, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
              %177 = arith.index_cast %159 : i64 to index
              scf.for %arg12 = %c1 to %177 step %c1 {
                %179 = arith.index_cast %arg12 : index to i64
                %180 = arith.muli %179, %c16_i64 : i64
                %181 = arith.addi %180, %163 : i64
                %182 = arith.ori %181, %c3221225472_i64 : i64
                "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %182, %165, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                %183 = arith.muli %179, %c32_i64 : i64
                %184 = arith.addi %183, %169 : i64
                "instgem.compute_accumulated"(%184, %171, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
              }
              %178 = arith.index_cast %144 : i64 to index
              scf.for %arg12 = %177 to %178 step %c1 {
                %179 = arith.index_cast %arg12 : index to i64
                %180 = arith.muli %179, %c16_i64 : i64
                %181 = arith.subi %138, %180 : i64
                %182 = arith.minsi %181, %c16_i64 : i64
                %183 = arith.addi %180, %163 : i64
                %184 = arith.ori %183, %c3221225472_i64 : i64
                "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %184, %165, %182) : (i64, i64, i64, i64, i64, i64) -> ()
                %185 = arith.muli %179, %c32_i64 : i64
                %186 = arith.addi %185, %169 : i64
                "instgem.compute_accumulated"(%186, %171, %182, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
              }
            }
          } {gemmini.compute_nest}
        }
        scf.yield %86, %108 : index, index
      }
      scf.if %62 {
        "instgem.config_st"(%c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %71, %c1065353216_i64) : (i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> ()
        %84 = arith.muli %81, %82 : i64
        %85 = arith.index_cast %84 : i64 to index
        scf.for %arg7 = %c0 to %85 step %c1 {
          %86 = arith.index_cast %arg7 : index to i64
          %87 = arith.remsi %86, %81 : i64
          %88 = arith.divsi %86, %81 : i64
          %89 = arith.addi %73, %87 : i64
          %90 = arith.muli %89, %c16_i64 : i64
          %91 = arith.maxsi %90, %63 : i64
          %92 = arith.addi %90, %c16_i64 : i64
          %93 = arith.minsi %92, %74 : i64
          %94 = arith.subi %93, %91 : i64
          %95 = arith.subi %91, %63 : i64
          %96 = arith.muli %95, %71 : i64
          %97 = arith.addi %69, %96 : i64
          %98 = arith.muli %88, %c64_i64 : i64
          %99 = arith.addi %97, %98 : i64
          %100 = arith.muli %88, %c16_i64 : i64
          %101 = arith.addi %90, %100 : i64
          %102 = arith.ori %101, %c2684354560_i64 : i64
          %103 = arith.subi %91, %90 : i64
          %104 = arith.addi %102, %103 : i64
          %105 = arith.subi %65, %100 : i64
          %106 = arith.minsi %105, %c16_i64 : i64
          "instgem.mvout"(%99, %104, %106, %94) : (i64, i64, i64, i64) -> ()
        }
      }
    }
    return
  }
}
