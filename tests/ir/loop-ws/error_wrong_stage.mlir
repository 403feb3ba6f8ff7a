// RUN: not baco opt --pass loop-ws %s 2>&1 | FileCheck %s
// Input of stage config-elimination: the pass refuses it before running.
// CHECK: baco opt: this IR is the input of stage 'config-elimination', not the input of stage 'loop-ws'

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
    %17 = arith.cmpi sge, %4, %c0 : index
    %18 = arith.cmpi sle, %4, %arg3 : index
    %19 = arith.cmpi sge, %13, %c0 : index
    %20 = arith.cmpi sle, %13, %arg3 : index
    %21 = arith.cmpi sge, %9, %c0 : index
    %22 = arith.cmpi sle, %9, %c32 : index
    %23 = arith.cmpi sge, %5, %c0 : index
    %24 = arith.cmpi sle, %5, %arg4 : index
    %25 = arith.cmpi sge, %14, %c0 : index
    %26 = arith.cmpi sle, %14, %arg4 : index
    %27 = arith.cmpi sge, %12, %c0 : index
    %28 = arith.cmpi sle, %12, %c16 : index
    %29 = arith.cmpi sle, %16, %arg5 : index
    %30 = arith.andi %17, %18 : i1
    %31 = arith.andi %30, %19 : i1
    %32 = arith.andi %31, %20 : i1
    %33 = arith.andi %32, %21 : i1
    %34 = arith.andi %33, %22 : i1
    %35 = arith.andi %34, %23 : i1
    %36 = arith.andi %35, %24 : i1
    %37 = arith.andi %36, %25 : i1
    %38 = arith.andi %37, %26 : i1
    %39 = arith.andi %38, %27 : i1
    %40 = arith.andi %39, %28 : i1
    %41 = arith.andi %40, %19 : i1
    %42 = arith.andi %41, %20 : i1
    %43 = arith.andi %42, %29 : i1
    %44 = arith.andi %43, %29 : i1
    %45 = arith.andi %44, %25 : i1
    %46 = arith.andi %45, %26 : i1
    scf.if %46 {
      %47 = arith.addi %16, %c32 : index
      %48 = arith.cmpi sle, %47, %arg5 : index
      %49 = arith.andi %48, %48 : i1
      scf.if %49 {
        %reinterpret_cast = memref.reinterpret_cast %arg0 to offset: [0], sizes: [%arg3, %arg5], strides: [%arg5, 1] : memref<?xi8> to memref<?x?xi8, strided<[?, 1]>>
        %reinterpret_cast_0 = memref.reinterpret_cast %arg1 to offset: [0], sizes: [%arg5, %arg4], strides: [%arg4, 1] : memref<?xi8> to memref<?x?xi8, strided<[?, 1]>>
        %reinterpret_cast_1 = memref.reinterpret_cast %arg2 to offset: [0], sizes: [%arg3, %arg4], strides: [%arg4, 1] : memref<?xi32> to memref<?x?xi32, strided<[?, 1]>>
        %subview = memref.subview %reinterpret_cast_1[%4, %5] [32, 16] [1, 1] : memref<?x?xi32, strided<[?, 1]>> to memref<32x16xi32, strided<[?, 1], offset: ?>>
        %cast = memref.cast %subview : memref<32x16xi32, strided<[?, 1], offset: ?>> to memref<?x?xi32, strided<[?, 1], offset: ?>>
        %50 = arith.cmpi sle, %6, %c0 : index
        scf.if %50 {
          "instgem.config_ld"(%c0_i64, %c0_i64, %c1_i64, %c16_i64, %c1065353216_i64, %c64_i64) : (i64, i64, i64, i64, i64, i64) -> ()
          scf.for %arg7 = %c0 to %c2 step %c1 {
            %58 = arith.index_cast %arg7 : index to i64
            %59 = arith.muli %58, %c16_i64 : i64
            %60 = arith.ori %59, %c2147483648_i64 : i64
            "instgem.mvin"(%c0_i64, %60, %c16_i64, %c16_i64) : (i64, i64, i64, i64) -> ()
          } {gemmini.load_stream}
        }
        %base_buffer, %offset, %sizes:2, %strides:2 = memref.extract_strided_metadata %subview : memref<32x16xi32, strided<[?, 1], offset: ?>> -> memref<i32>, index, index, index, index, index
        %intptr = memref.extract_aligned_pointer_as_index %cast : memref<?x?xi32, strided<[?, 1], offset: ?>> -> index
        %51 = arith.index_cast %intptr : index to i64
        %52 = arith.index_cast %offset : index to i64
        %53 = arith.muli %52, %c4_i64 : i64
        %54 = arith.addi %51, %53 : i64
        %55 = arith.index_cast %strides#0 : index to i64
        %56 = arith.muli %55, %c4_i64 : i64
        "instgem.config_st"(%c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %56, %c1065353216_i64) : (i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> ()
        %57:2 = scf.for %arg7 = %c0 to %6 step %c1 iter_args(%arg8 = %c0, %arg9 = %c0) -> (index, index) {
          %58 = arith.addi %arg8, %c32 : index
          %subview_2 = memref.subview %reinterpret_cast[%4, %arg8] [32, 32] [1, 1] : memref<?x?xi8, strided<[?, 1]>> to memref<32x32xi8, strided<[?, 1], offset: ?>>
          %cast_3 = memref.cast %subview_2 : memref<32x32xi8, strided<[?, 1], offset: ?>> to memref<?x?xi8, strided<[?, 1], offset: ?>>
          %base_buffer_4, %offset_5, %sizes_6:2, %strides_7:2 = memref.extract_strided_metadata %subview_2 : memref<32x32xi8, strided<[?, 1], offset: ?>> -> memref<i8>, index, index, index, index, index
          %intptr_8 = memref.extract_aligned_pointer_as_index %cast_3 : memref<?x?xi8, strided<[?, 1], offset: ?>> -> index
          %59 = arith.index_cast %intptr_8 : index to i64
          %60 = arith.index_cast %offset_5 : index to i64
          %61 = arith.addi %59, %60 : i64
          %62 = arith.index_cast %strides_7#0 : index to i64
          "instgem.config_ld"(%c0_i64, %c0_i64, %c1_i64, %c16_i64, %c1065353216_i64, %62) : (i64, i64, i64, i64, i64, i64) -> ()
          scf.for %arg10 = %c0 to %c2 step %c1 {
            %72 = arith.index_cast %arg10 : index to i64
            %73 = arith.muli %72, %c16_i64 : i64
            %74 = arith.maxsi %73, %c0_i64 : i64
            %75 = arith.addi %73, %c16_i64 : i64
            %76 = arith.minsi %75, %c32_i64 : i64
            %77 = arith.subi %76, %74 : i64
            %78 = arith.muli %74, %62 : i64
            %79 = arith.addi %61, %78 : i64
            %80 = arith.muli %72, %c32_i64 : i64
            %81 = arith.subi %74, %73 : i64
            %82 = arith.addi %80, %81 : i64
            "instgem.mvin"(%79, %82, %c32_i64, %77) : (i64, i64, i64, i64) -> ()
          } {gemmini.load_stream}
          %63 = arith.addi %arg9, %c32 : index
          %subview_9 = memref.subview %reinterpret_cast_0[%arg9, %5] [32, 16] [1, 1] : memref<?x?xi8, strided<[?, 1]>> to memref<32x16xi8, strided<[?, 1], offset: ?>>
          %cast_10 = memref.cast %subview_9 : memref<32x16xi8, strided<[?, 1], offset: ?>> to memref<?x?xi8, strided<[?, 1], offset: ?>>
          %base_buffer_11, %offset_12, %sizes_13:2, %strides_14:2 = memref.extract_strided_metadata %subview_9 : memref<32x16xi8, strided<[?, 1], offset: ?>> -> memref<i8>, index, index, index, index, index
          %intptr_15 = memref.extract_aligned_pointer_as_index %cast_10 : memref<?x?xi8, strided<[?, 1], offset: ?>> -> index
          %64 = arith.index_cast %intptr_15 : index to i64
          %65 = arith.index_cast %offset_12 : index to i64
          %66 = arith.addi %64, %65 : i64
          %67 = arith.index_cast %strides_14#0 : index to i64
          "instgem.config_ld"(%c0_i64, %c0_i64, %c1_i64, %c16_i64, %c1065353216_i64, %67) : (i64, i64, i64, i64, i64, i64) -> ()
          scf.for %arg10 = %c0 to %c2 step %c1 {
            %72 = arith.index_cast %arg10 : index to i64
            %73 = arith.muli %72, %c16_i64 : i64
            %74 = arith.maxsi %73, %c0_i64 : i64
            %75 = arith.addi %73, %c16_i64 : i64
            %76 = arith.minsi %75, %c32_i64 : i64
            %77 = arith.subi %76, %74 : i64
            %78 = arith.muli %74, %67 : i64
            %79 = arith.addi %66, %78 : i64
            %80 = arith.addi %73, %c64_i64 : i64
            %81 = arith.subi %74, %73 : i64
            %82 = arith.addi %80, %81 : i64
            "instgem.mvin"(%79, %82, %c16_i64, %77) : (i64, i64, i64, i64) -> ()
          } {gemmini.load_stream}
          %68 = arith.addi %arg7, %c1 : index
          %69 = arith.cmpi sge, %68, %6 : index
          %70 = arith.cmpi eq, %arg7, %c0 : index
          %71 = arith.ori %70, %69 : i1
          scf.if %71 {
            scf.if %69 {
              %72 = arith.select %70, %c0_i64, %c-1_i64 : i64
              %73 = arith.cmpi eq, %72, %c0_i64 : i64
              %74 = arith.select %73, %c2147483648_i64, %c3221225472_i64 : i64
              "instgem.preload"(%c64_i64, %c16_i64, %c16_i64, %74, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
              "instgem.compute_preloaded"(%c0_i64, %c16_i64, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
              %75 = arith.ori %74, %c16_i64 : i64
              "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %75, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
              "instgem.compute_accumulated"(%c32_i64, %c16_i64, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
              "instgem.preload"(%c80_i64, %c16_i64, %c16_i64, %c3221225472_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
              "instgem.compute_preloaded"(%c16_i64, %c16_i64, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
              "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %c3221225488_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
              "instgem.compute_accumulated"(%c48_i64, %c16_i64, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
              "instgem.mvout"(%54, %c2684354560_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64) -> ()
              %76 = arith.muli %55, %c64_i64 : i64
              %77 = arith.addi %54, %76 : i64
              "instgem.mvout"(%77, %c2684354576_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64) -> ()
            } else {
              %72 = arith.select %70, %c0_i64, %c-1_i64 : i64
              %73 = arith.cmpi eq, %72, %c0_i64 : i64
              %74 = arith.select %73, %c2147483648_i64, %c3221225472_i64 : i64
              "instgem.preload"(%c64_i64, %c16_i64, %c16_i64, %74, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
              "instgem.compute_preloaded"(%c0_i64, %c16_i64, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
              %75 = arith.ori %74, %c16_i64 : i64
              "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %75, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
              "instgem.compute_accumulated"(%c32_i64, %c16_i64, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
              "instgem.preload"(%c80_i64, %c16_i64, %c16_i64, %c3221225472_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
              "instgem.compute_preloaded"(%c16_i64, %c16_i64, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
              "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %c3221225488_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
              "instgem.compute_accumulated"(%c48_i64, %c16_i64, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
            }
          } else {
            scf.for %arg10 = %c0 to %c2 step %c1 {
              %72 = arith.index_cast %arg10 : index to i64
              %73 = arith.muli %72, %c16_i64 : i64
              %74 = arith.addi %73, %c64_i64 : i64
              "instgem.preload"(%74, %c16_i64, %c16_i64, %c3221225472_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
              "instgem.compute_preloaded"(%73, %c16_i64, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
              "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %c3221225488_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
              %75 = arith.addi %73, %c32_i64 : i64
              "instgem.compute_accumulated"(%75, %c16_i64, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
            }
          }
          scf.yield %58, %63 : index, index
        }
        scf.if %50 {
          "instgem.config_st"(%c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %56, %c1065353216_i64) : (i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> ()
          scf.for %arg7 = %c0 to %c2 step %c1 {
            %58 = arith.index_cast %arg7 : index to i64
            %59 = arith.remsi %58, %c2_i64 : i64
            %60 = arith.divsi %58, %c2_i64 : i64
            %61 = arith.muli %59, %c16_i64 : i64
            %62 = arith.maxsi %61, %c0_i64 : i64
            %63 = arith.addi %61, %c16_i64 : i64
            %64 = arith.minsi %63, %c32_i64 : i64
            %65 = arith.subi %64, %62 : i64
            %66 = arith.muli %62, %56 : i64
            %67 = arith.addi %54, %66 : i64
            %68 = arith.muli %60, %c64_i64 : i64
            %69 = arith.addi %67, %68 : i64
            %70 = arith.muli %60, %c16_i64 : i64
            %71 = arith.addi %61, %70 : i64
            %72 = arith.ori %71, %c2684354560_i64 : i64
            %73 = arith.subi %62, %61 : i64
            %74 = arith.addi %72, %73 : i64
            %75 = arith.subi %c16_i64, %70 : i64
            %76 = arith.minsi %75, %c16_i64 : i64
            "instgem.mvout"(%69, %74, %76, %65) : (i64, i64, i64, i64) -> ()
          }
        }
      } else {
        %reinterpret_cast = memref.reinterpret_cast %arg0 to offset: [0], sizes: [%arg3, %arg5], strides: [%arg5, 1] : memref<?xi8> to memref<?x?xi8, strided<[?, 1]>>
        %reinterpret_cast_0 = memref.reinterpret_cast %arg1 to offset: [0], sizes: [%arg5, %arg4], strides: [%arg4, 1] : memref<?xi8> to memref<?x?xi8, strided<[?, 1]>>
        %reinterpret_cast_1 = memref.reinterpret_cast %arg2 to offset: [0], sizes: [%arg3, %arg4], strides: [%arg4, 1] : memref<?xi32> to memref<?x?xi32, strided<[?, 1]>>
        %subview = memref.subview %reinterpret_cast_1[%4, %5] [32, 16] [1, 1] : memref<?x?xi32, strided<[?, 1]>> to memref<32x16xi32, strided<[?, 1], offset: ?>>
        %cast = memref.cast %subview : memref<32x16xi32, strided<[?, 1], offset: ?>> to memref<?x?xi32, strided<[?, 1], offset: ?>>
        %50 = arith.cmpi sle, %6, %c0 : index
        scf.if %50 {
          "instgem.config_ld"(%c0_i64, %c0_i64, %c1_i64, %c16_i64, %c1065353216_i64, %c64_i64) : (i64, i64, i64, i64, i64, i64) -> ()
          scf.for %arg7 = %c0 to %c2 step %c1 {
            %58 = arith.index_cast %arg7 : index to i64
            %59 = arith.muli %58, %c16_i64 : i64
            %60 = arith.ori %59, %c2147483648_i64 : i64
            "instgem.mvin"(%c0_i64, %60, %c16_i64, %c16_i64) : (i64, i64, i64, i64) -> ()
          } {gemmini.load_stream}
        }
        %base_buffer, %offset, %sizes:2, %strides:2 = memref.extract_strided_metadata %subview : memref<32x16xi32, strided<[?, 1], offset: ?>> -> memref<i32>, index, index, index, index, index
        %intptr = memref.extract_aligned_pointer_as_index %cast : memref<?x?xi32, strided<[?, 1], offset: ?>> -> index
        %51 = arith.index_cast %intptr : index to i64
        %52 = arith.index_cast %offset : index to i64
        %53 = arith.muli %52, %c4_i64 : i64
        %54 = arith.addi %51, %53 : i64
        %55 = arith.index_cast %strides#0 : index to i64
        %56 = arith.muli %55, %c4_i64 : i64
        "instgem.config_st"(%c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %56, %c1065353216_i64) : (i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> ()
        %57:2 = scf.for %arg7 = %c0 to %6 step %c1 iter_args(%arg8 = %c0, %arg9 = %c0) -> (index, index) {
          %58 = arith.addi %arg8, %c32 : index
          %59 = arith.minsi %58, %arg5 : index
          %60 = arith.subi %59, %arg8 : index
          %subview_2 = memref.subview %reinterpret_cast[%4, %arg8] [32, %60] [1, 1] : memref<?x?xi8, strided<[?, 1]>> to memref<32x?xi8, strided<[?, 1], offset: ?>>
          %cast_3 = memref.cast %subview_2 : memref<32x?xi8, strided<[?, 1], offset: ?>> to memref<?x?xi8, strided<[?, 1], offset: ?>>
          %61 = arith.index_cast %60 : index to i64
          %base_buffer_4, %offset_5, %sizes_6:2, %strides_7:2 = memref.extract_strided_metadata %subview_2 : memref<32x?xi8, strided<[?, 1], offset: ?>> -> memref<i8>, index, index, index, index, index
          %intptr_8 = memref.extract_aligned_pointer_as_index %cast_3 : memref<?x?xi8, strided<[?, 1], offset: ?>> -> index
          %62 = arith.index_cast %intptr_8 : index to i64
          %63 = arith.index_cast %offset_5 : index to i64
          %64 = arith.addi %62, %63 : i64
          %65 = arith.index_cast %strides_7#0 : index to i64
          "instgem.config_ld"(%c0_i64, %c0_i64, %c1_i64, %c16_i64, %c1065353216_i64, %65) : (i64, i64, i64, i64, i64, i64) -> ()
          scf.for %arg10 = %c0 to %c2 step %c1 {
            %93 = arith.index_cast %arg10 : index to i64
            %94 = arith.muli %93, %c16_i64 : i64
            %95 = arith.maxsi %94, %c0_i64 : i64
            %96 = arith.addi %94, %c16_i64 : i64
            %97 = arith.minsi %96, %c32_i64 : i64
            %98 = arith.subi %97, %95 : i64
            %99 = arith.muli %95, %65 : i64
            %100 = arith.addi %64, %99 : i64
            %101 = arith.muli %93, %c32_i64 : i64
            %102 = arith.subi %95, %94 : i64
            %103 = arith.addi %101, %102 : i64
            %104 = arith.minsi %61, %c64_i64 : i64
            "instgem.mvin"(%100, %103, %104, %98) : (i64, i64, i64, i64) -> ()
          } {gemmini.load_stream}
          %66 = arith.addi %arg9, %c32 : index
          %67 = arith.minsi %66, %arg5 : index
          %68 = arith.subi %67, %arg9 : index
          %subview_9 = memref.subview %reinterpret_cast_0[%arg9, %5] [%68, 16] [1, 1] : memref<?x?xi8, strided<[?, 1]>> to memref<?x16xi8, strided<[?, 1], offset: ?>>
          %cast_10 = memref.cast %subview_9 : memref<?x16xi8, strided<[?, 1], offset: ?>> to memref<?x?xi8, strided<[?, 1], offset: ?>>
          %69 = arith.index_cast %68 : index to i64
          %base_buffer_11, %offset_12, %sizes_13:2, %strides_14:2 = memref.extract_strided_metadata %subview_9 : memref<?x16xi8, strided<[?, 1], offset: ?>> -> memref<i8>, index, index, index, index, index
          %intptr_15 = memref.extract_aligned_pointer_as_index %cast_10 : memref<?x?xi8, strided<[?, 1], offset: ?>> -> index
          %70 = arith.index_cast %intptr_15 : index to i64
          %71 = arith.index_cast %offset_12 : index to i64
          %72 = arith.addi %70, %71 : i64
          %73 = arith.index_cast %strides_14#0 : index to i64
          "instgem.config_ld"(%c0_i64, %c0_i64, %c1_i64, %c16_i64, %c1065353216_i64, %73) : (i64, i64, i64, i64, i64, i64) -> ()
          %74 = arith.maxsi %69, %c0_i64 : i64
          %75 = arith.addi %74, %c15_i64 : i64
          %76 = arith.divui %75, %c16_i64 : i64
          %77 = arith.cmpi sgt, %69, %c0_i64 : i64
          %78 = arith.extui %77 : i1 to i64
          %79 = arith.muli %76, %78 : i64
          %80 = arith.index_cast %79 : i64 to index
          scf.for %arg10 = %c0 to %80 step %c1 {
            %93 = arith.index_cast %arg10 : index to i64
            %94 = arith.muli %93, %c16_i64 : i64
            %95 = arith.maxsi %94, %c0_i64 : i64
            %96 = arith.addi %94, %c16_i64 : i64
            %97 = arith.minsi %96, %69 : i64
            %98 = arith.subi %97, %95 : i64
            %99 = arith.muli %95, %73 : i64
            %100 = arith.addi %72, %99 : i64
            %101 = arith.addi %94, %c64_i64 : i64
            %102 = arith.subi %95, %94 : i64
            %103 = arith.addi %101, %102 : i64
            "instgem.mvin"(%100, %103, %c16_i64, %98) : (i64, i64, i64, i64) -> ()
          } {gemmini.load_stream}
          %81 = arith.maxsi %61, %c0_i64 : i64
          %82 = arith.minsi %81, %c32_i64 : i64
          %83 = arith.minsi %74, %c32_i64 : i64
          %84 = arith.minsi %82, %83 : i64
          %85 = arith.ceildivsi %84, %c16_i64 : i64
          %86 = arith.addi %arg7, %c1 : index
          %87 = arith.cmpi sge, %86, %6 : index
          %88 = arith.cmpi eq, %arg7, %c0 : index
          %89 = arith.divsi %84, %c16_i64 : i64
          %90 = arith.minsi %85, %89 : i64
          %91 = arith.maxsi %90, %c0_i64 : i64
          %92 = arith.ori %88, %87 : i1
          scf.if %92 {
            scf.if %87 {
              %93 = arith.select %88, %c0_i64, %c-1_i64 : i64
              %94 = arith.subi %85, %c1_i64 : i64
              %95 = arith.cmpi sgt, %91, %c0_i64 : i64
              scf.if %95 {
                %103 = arith.cmpi eq, %93, %c0_i64 : i64
                %104 = arith.select %103, %c2147483648_i64, %c3221225472_i64 : i64
                "instgem.preload"(%c64_i64, %c16_i64, %c16_i64, %104, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                "instgem.compute_preloaded"(%c0_i64, %c16_i64, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                %105 = arith.cmpi eq, %94, %c0_i64 : i64
                scf.if %105 {
                  %106 = arith.ori %104, %c16_i64 : i64
                  "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %106, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                  "instgem.compute_accumulated"(%c32_i64, %c16_i64, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                  "instgem.mvout"(%54, %c2684354560_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64) -> ()
                } else {
                  %106 = arith.ori %104, %c16_i64 : i64
                  "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %106, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                  "instgem.compute_accumulated"(%c32_i64, %c16_i64, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                }
              }
              %96 = arith.index_cast %91 : i64 to index
              scf.for %arg10 = %c1 to %96 step %c1 {
                %103 = arith.index_cast %arg10 : index to i64
                %104 = arith.muli %103, %c16_i64 : i64
                %105 = arith.addi %104, %c64_i64 : i64
                "instgem.preload"(%105, %c16_i64, %c16_i64, %c3221225472_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                "instgem.compute_preloaded"(%104, %c16_i64, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                %106 = arith.cmpi eq, %103, %94 : i64
                scf.if %106 {
                  "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %c3221225488_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                  %107 = arith.addi %104, %c32_i64 : i64
                  "instgem.compute_accumulated"(%107, %c16_i64, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                  "instgem.mvout"(%54, %c2684354560_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64) -> ()
                } else {
                  "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %c3221225488_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                  %107 = arith.addi %104, %c32_i64 : i64
                  "instgem.compute_accumulated"(%107, %c16_i64, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                }
              }
              %97 = arith.index_cast %85 : i64 to index
              scf.for %arg10 = %96 to %97 step %c1 {
                %103 = arith.index_cast %arg10 : index to i64
                %104 = arith.muli %103, %c16_i64 : i64
                %105 = arith.subi %82, %104 : i64
                %106 = arith.minsi %105, %c16_i64 : i64
                %107 = arith.subi %83, %104 : i64
                %108 = arith.minsi %107, %c16_i64 : i64
                %109 = arith.cmpi eq, %103, %93 : i64
                %110 = arith.select %109, %c2147483648_i64, %c3221225472_i64 : i64
                %111 = arith.addi %104, %c64_i64 : i64
                "instgem.preload"(%111, %c16_i64, %108, %110, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                "instgem.compute_preloaded"(%104, %106, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                %112 = arith.cmpi eq, %103, %94 : i64
                scf.if %112 {
                  %113 = arith.ori %110, %c16_i64 : i64
                  "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %113, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                  %114 = arith.addi %104, %c32_i64 : i64
                  "instgem.compute_accumulated"(%114, %106, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                  "instgem.mvout"(%54, %c2684354560_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64) -> ()
                } else {
                  %113 = arith.ori %110, %c16_i64 : i64
                  "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %113, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                  %114 = arith.addi %104, %c32_i64 : i64
                  "instgem.compute_accumulated"(%114, %106, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                }
              }
              %98 = arith.cmpi sgt, %85, %c0_i64 : i64
              %99 = arith.extui %98 : i1 to i64
              %100 = arith.index_cast %99 : i64 to index
              scf.for %arg10 = %100 to %c2 step %c1 {
                %103 = arith.index_cast %arg10 : index to i64
                %104 = arith.muli %103, %c16_i64 : i64
                %105 = arith.maxsi %104, %c0_i64 : i64
                %106 = arith.addi %104, %c16_i64 : i64
                %107 = arith.minsi %106, %c32_i64 : i64
                %108 = arith.subi %107, %105 : i64
                %109 = arith.muli %105, %56 : i64
                %110 = arith.addi %54, %109 : i64
                %111 = arith.ori %104, %c2684354560_i64 : i64
                %112 = arith.subi %105, %104 : i64
                %113 = arith.addi %111, %112 : i64
                "instgem.mvout"(%110, %113, %c16_i64, %108) : (i64, i64, i64, i64) -> ()
              }
              %101 = arith.cmpi eq, %85, %c0_i64 : i64
              %102 = arith.andi %88, %101 : i1
              scf.if %102 {
                scf.for %arg10 = %c0 to %c2 step %c1 {
                  %103 = arith.index_cast %arg10 : index to i64
                  %104 = arith.muli %103, %c16_i64 : i64
                  %105 = arith.ori %104, %c2147483648_i64 : i64
                  %106 = arith.cmpi sge, %103, %c2_i64 : i64
                  %107 = arith.ori %101, %106 : i1
                  scf.if %107 {
                    "instgem.mvin"(%c0_i64, %105, %c16_i64, %c16_i64) : (i64, i64, i64, i64) -> ()
                  }
                }
              }
            } else {
              %93 = arith.select %88, %c0_i64, %c-1_i64 : i64
              %94 = arith.cmpi sgt, %91, %c0_i64 : i64
              scf.if %94 {
                %99 = arith.cmpi eq, %93, %c0_i64 : i64
                %100 = arith.select %99, %c2147483648_i64, %c3221225472_i64 : i64
                "instgem.preload"(%c64_i64, %c16_i64, %c16_i64, %100, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                "instgem.compute_preloaded"(%c0_i64, %c16_i64, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                %101 = arith.ori %100, %c16_i64 : i64
                "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %101, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                "instgem.compute_accumulated"(%c32_i64, %c16_i64, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
              }
              %95 = arith.index_cast %91 : i64 to index
              scf.for %arg10 = %c1 to %95 step %c1 {
                %99 = arith.index_cast %arg10 : index to i64
                %100 = arith.muli %99, %c16_i64 : i64
                %101 = arith.addi %100, %c64_i64 : i64
                "instgem.preload"(%101, %c16_i64, %c16_i64, %c3221225472_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                "instgem.compute_preloaded"(%100, %c16_i64, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %c3221225488_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                %102 = arith.addi %100, %c32_i64 : i64
                "instgem.compute_accumulated"(%102, %c16_i64, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
              }
              %96 = arith.index_cast %85 : i64 to index
              scf.for %arg10 = %95 to %96 step %c1 {
                %99 = arith.index_cast %arg10 : index to i64
                %100 = arith.muli %99, %c16_i64 : i64
                %101 = arith.subi %82, %100 : i64
                %102 = arith.minsi %101, %c16_i64 : i64
                %103 = arith.subi %83, %100 : i64
                %104 = arith.minsi %103, %c16_i64 : i64
                %105 = arith.cmpi eq, %99, %93 : i64
                %106 = arith.select %105, %c2147483648_i64, %c3221225472_i64 : i64
                %107 = arith.addi %100, %c64_i64 : i64
                "instgem.preload"(%107, %c16_i64, %104, %106, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                "instgem.compute_preloaded"(%100, %102, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                %108 = arith.ori %106, %c16_i64 : i64
                "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %108, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                %109 = arith.addi %100, %c32_i64 : i64
                "instgem.compute_accumulated"(%109, %102, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
              }
              %97 = arith.cmpi eq, %85, %c0_i64 : i64
              %98 = arith.andi %88, %97 : i1
              scf.if %98 {
                scf.for %arg10 = %c0 to %c2 step %c1 {
                  %99 = arith.index_cast %arg10 : index to i64
                  %100 = arith.muli %99, %c16_i64 : i64
                  %101 = arith.ori %100, %c2147483648_i64 : i64
                  %102 = arith.cmpi sge, %99, %c2_i64 : i64
                  %103 = arith.ori %97, %102 : i1
                  scf.if %103 {
                    "instgem.mvin"(%c0_i64, %101, %c16_i64, %c16_i64) : (i64, i64, i64, i64) -> ()
                  }
                }
              }
            }
          } else {
            %93 = arith.index_cast %91 : i64 to index
            scf.for %arg10 = %c0 to %93 step %c1 {
              %95 = arith.index_cast %arg10 : index to i64
              %96 = arith.muli %95, %c16_i64 : i64
              %97 = arith.addi %96, %c64_i64 : i64
              "instgem.preload"(%97, %c16_i64, %c16_i64, %c3221225472_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
              "instgem.compute_preloaded"(%96, %c16_i64, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
              "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %c3221225488_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
              %98 = arith.addi %96, %c32_i64 : i64
              "instgem.compute_accumulated"(%98, %c16_i64, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
            }
            %94 = arith.index_cast %85 : i64 to index
            scf.for %arg10 = %93 to %94 step %c1 {
              %95 = arith.index_cast %arg10 : index to i64
              %96 = arith.muli %95, %c16_i64 : i64
              %97 = arith.subi %82, %96 : i64
              %98 = arith.minsi %97, %c16_i64 : i64
              %99 = arith.subi %83, %96 : i64
              %100 = arith.minsi %99, %c16_i64 : i64
              %101 = arith.addi %96, %c64_i64 : i64
              "instgem.preload"(%101, %c16_i64, %100, %c3221225472_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
              "instgem.compute_preloaded"(%96, %98, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
              "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %c3221225488_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
              %102 = arith.addi %96, %c32_i64 : i64
              "instgem.compute_accumulated"(%102, %98, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
            }
          }
          scf.yield %58, %66 : index, index
        }
        scf.if %50 {
          "instgem.config_st"(%c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %56, %c1065353216_i64) : (i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> ()
          scf.for %arg7 = %c0 to %c2 step %c1 {
            %58 = arith.index_cast %arg7 : index to i64
            %59 = arith.remsi %58, %c2_i64 : i64
            %60 = arith.divsi %58, %c2_i64 : i64
            %61 = arith.muli %59, %c16_i64 : i64
            %62 = arith.maxsi %61, %c0_i64 : i64
            %63 = arith.addi %61, %c16_i64 : i64
            %64 = arith.minsi %63, %c32_i64 : i64
            %65 = arith.subi %64, %62 : i64
            %66 = arith.muli %62, %56 : i64
            %67 = arith.addi %54, %66 : i64
            %68 = arith.muli %60, %c64_i64 : i64
            %69 = arith.addi %67, %68 : i64
            %70 = arith.muli %60, %c16_i64 : i64
            %71 = arith.addi %61, %70 : i64
            %72 = arith.ori %71, %c2684354560_i64 : i64
            %73 = arith.subi %62, %61 : i64
            %74 = arith.addi %72, %73 : i64
            %75 = arith.subi %c16_i64, %70 : i64
            %76 = arith.minsi %75, %c16_i64 : i64
            "instgem.mvout"(%69, %74, %76, %65) : (i64, i64, i64, i64) -> ()
          }
        }
      }
    } else {
      %reinterpret_cast = memref.reinterpret_cast %arg0 to offset: [0], sizes: [%arg3, %arg5], strides: [%arg5, 1] : memref<?xi8> to memref<?x?xi8, strided<[?, 1]>>
      %reinterpret_cast_0 = memref.reinterpret_cast %arg1 to offset: [0], sizes: [%arg5, %arg4], strides: [%arg4, 1] : memref<?xi8> to memref<?x?xi8, strided<[?, 1]>>
      %reinterpret_cast_1 = memref.reinterpret_cast %arg2 to offset: [0], sizes: [%arg3, %arg4], strides: [%arg4, 1] : memref<?xi32> to memref<?x?xi32, strided<[?, 1]>>
      %47 = arith.maxsi %13, %c0 : index
      %48 = arith.minsi %47, %arg3 : index
      %49 = arith.maxsi %9, %c0 : index
      %50 = arith.minsi %49, %c32 : index
      %51 = arith.subi %48, %8 : index
      %52 = arith.maxsi %14, %c0 : index
      %53 = arith.minsi %52, %arg4 : index
      %54 = arith.maxsi %12, %c0 : index
      %55 = arith.minsi %54, %c16 : index
      %56 = arith.subi %53, %11 : index
      %57 = arith.cmpi sgt, %55, %c0 : index
      scf.if %57 {
        func.call @baco_boundary_error(%c48_i64, %c9_i64) : (i64, i64) -> ()
      }
      %subview = memref.subview %reinterpret_cast_1[%8, %11] [%51, %56] [1, 1] : memref<?x?xi32, strided<[?, 1]>> to memref<?x?xi32, strided<[?, 1], offset: ?>>
      %58 = arith.cmpi sle, %6, %c0 : index
      scf.if %58 {
        "instgem.config_ld"(%c0_i64, %c0_i64, %c1_i64, %c16_i64, %c1065353216_i64, %c64_i64) : (i64, i64, i64, i64, i64, i64) -> ()
        scf.for %arg7 = %c0 to %c2 step %c1 {
          %80 = arith.index_cast %arg7 : index to i64
          %81 = arith.muli %80, %c16_i64 : i64
          %82 = arith.ori %81, %c2147483648_i64 : i64
          "instgem.mvin"(%c0_i64, %82, %c16_i64, %c16_i64) : (i64, i64, i64, i64) -> ()
        } {gemmini.load_stream}
      }
      %59 = arith.index_cast %50 : index to i64
      %60 = arith.index_cast %51 : index to i64
      %61 = arith.index_cast %56 : index to i64
      %base_buffer, %offset, %sizes:2, %strides:2 = memref.extract_strided_metadata %subview : memref<?x?xi32, strided<[?, 1], offset: ?>> -> memref<i32>, index, index, index, index, index
      %intptr = memref.extract_aligned_pointer_as_index %subview : memref<?x?xi32, strided<[?, 1], offset: ?>> -> index
      %62 = arith.index_cast %intptr : index to i64
      %63 = arith.index_cast %offset : index to i64
      %64 = arith.muli %63, %c4_i64 : i64
      %65 = arith.addi %62, %64 : i64
      %66 = arith.index_cast %strides#0 : index to i64
      %67 = arith.muli %66, %c4_i64 : i64
      "instgem.config_st"(%c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %67, %c1065353216_i64) : (i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> ()
      %68 = arith.maxsi %59, %c0_i64 : i64
      %69 = arith.divui %68, %c16_i64 : i64
      %70 = arith.addi %59, %60 : i64
      %71 = arith.maxsi %70, %c0_i64 : i64
      %72 = arith.addi %71, %c15_i64 : i64
      %73 = arith.divui %72, %c16_i64 : i64
      %74 = arith.subi %73, %69 : i64
      %75 = arith.cmpi sgt, %60, %c0_i64 : i64
      %76 = arith.extui %75 : i1 to i64
      %77 = arith.muli %74, %76 : i64
      %78 = arith.ceildivsi %61, %c16_i64 : i64
      %79:2 = scf.for %arg7 = %c0 to %6 step %c1 iter_args(%arg8 = %c0, %arg9 = %c0) -> (index, index) {
        %80 = arith.maxsi %arg8, %c0 : index
        %81 = arith.minsi %80, %arg5 : index
        %82 = arith.addi %arg8, %c32 : index
        %83 = arith.maxsi %82, %c0 : index
        %84 = arith.minsi %83, %arg5 : index
        %85 = arith.subi %81, %arg8 : index
        %86 = arith.maxsi %85, %c0 : index
        %87 = arith.minsi %86, %c32 : index
        %88 = arith.subi %84, %81 : index
        %89 = arith.cmpi sgt, %87, %c0 : index
        scf.if %89 {
          func.call @baco_boundary_error(%c41_i64, %c27_i64) : (i64, i64) -> ()
        }
        %subview_2 = memref.subview %reinterpret_cast[%8, %81] [%51, %88] [1, 1] : memref<?x?xi8, strided<[?, 1]>> to memref<?x?xi8, strided<[?, 1], offset: ?>>
        %90 = arith.index_cast %88 : index to i64
        %base_buffer_3, %offset_4, %sizes_5:2, %strides_6:2 = memref.extract_strided_metadata %subview_2 : memref<?x?xi8, strided<[?, 1], offset: ?>> -> memref<i8>, index, index, index, index, index
        %intptr_7 = memref.extract_aligned_pointer_as_index %subview_2 : memref<?x?xi8, strided<[?, 1], offset: ?>> -> index
        %91 = arith.index_cast %intptr_7 : index to i64
        %92 = arith.index_cast %offset_4 : index to i64
        %93 = arith.addi %91, %92 : i64
        %94 = arith.index_cast %strides_6#0 : index to i64
        "instgem.config_ld"(%c0_i64, %c0_i64, %c1_i64, %c16_i64, %c1065353216_i64, %94) : (i64, i64, i64, i64, i64, i64) -> ()
        %95 = arith.index_cast %77 : i64 to index
        scf.for %arg10 = %c0 to %95 step %c1 {
          %158 = arith.index_cast %arg10 : index to i64
          %159 = arith.addi %69, %158 : i64
          %160 = arith.muli %159, %c16_i64 : i64
          %161 = arith.maxsi %160, %59 : i64
          %162 = arith.addi %160, %c16_i64 : i64
          %163 = arith.minsi %162, %70 : i64
          %164 = arith.subi %163, %161 : i64
          %165 = arith.subi %161, %59 : i64
          %166 = arith.muli %165, %94 : i64
          %167 = arith.addi %93, %166 : i64
          %168 = arith.muli %159, %c32_i64 : i64
          %169 = arith.subi %161, %160 : i64
          %170 = arith.addi %168, %169 : i64
          %171 = arith.minsi %90, %c64_i64 : i64
          "instgem.mvin"(%167, %170, %171, %164) : (i64, i64, i64, i64) -> ()
        } {gemmini.load_stream}
        %96 = arith.addi %68, %c15_i64 : i64
        %97 = arith.divui %96, %c16_i64 : i64
        %98 = arith.cmpi sgt, %59, %c0_i64 : i64
        %99 = arith.extui %98 : i1 to i64
        %100 = arith.muli %97, %99 : i64
        %101 = arith.index_cast %100 : i64 to index
        scf.for %arg10 = %c0 to %101 step %c1 {
          %158 = arith.index_cast %arg10 : index to i64
          %159 = arith.muli %158, %c16_i64 : i64
          %160 = arith.maxsi %159, %c0_i64 : i64
          %161 = arith.addi %159, %c16_i64 : i64
          %162 = arith.minsi %161, %59 : i64
          %163 = arith.subi %162, %160 : i64
          %164 = arith.muli %158, %c32_i64 : i64
          %165 = arith.subi %160, %159 : i64
          %166 = arith.addi %164, %165 : i64
          %167 = arith.minsi %90, %c64_i64 : i64
          "instgem.mvin"(%c0_i64, %166, %167, %163) : (i64, i64, i64, i64) -> ()
        } {gemmini.load_stream}
        %102 = arith.maxsi %arg9, %c0 : index
        %103 = arith.minsi %102, %arg5 : index
        %104 = arith.addi %arg9, %c32 : index
        %105 = arith.maxsi %104, %c0 : index
        %106 = arith.minsi %105, %arg5 : index
        %107 = arith.subi %103, %arg9 : index
        %108 = arith.maxsi %107, %c0 : index
        %109 = arith.minsi %108, %c32 : index
        %110 = arith.subi %106, %103 : index
        scf.if %57 {
          func.call @baco_boundary_error(%c41_i64, %c62_i64) : (i64, i64) -> ()
        }
        %subview_8 = memref.subview %reinterpret_cast_0[%103, %11] [%110, %56] [1, 1] : memref<?x?xi8, strided<[?, 1]>> to memref<?x?xi8, strided<[?, 1], offset: ?>>
        %111 = arith.index_cast %109 : index to i64
        %112 = arith.index_cast %110 : index to i64
        %113 = arith.addi %111, %112 : i64
        %base_buffer_9, %offset_10, %sizes_11:2, %strides_12:2 = memref.extract_strided_metadata %subview_8 : memref<?x?xi8, strided<[?, 1], offset: ?>> -> memref<i8>, index, index, index, index, index
        %intptr_13 = memref.extract_aligned_pointer_as_index %subview_8 : memref<?x?xi8, strided<[?, 1], offset: ?>> -> index
        %114 = arith.index_cast %intptr_13 : index to i64
        %115 = arith.index_cast %offset_10 : index to i64
        %116 = arith.addi %114, %115 : i64
        %117 = arith.index_cast %strides_12#0 : index to i64
        "instgem.config_ld"(%c0_i64, %c0_i64, %c1_i64, %c16_i64, %c1065353216_i64, %117) : (i64, i64, i64, i64, i64, i64) -> ()
        %118 = arith.maxsi %111, %c0_i64 : i64
        %119 = arith.divui %118, %c16_i64 : i64
        %120 = arith.maxsi %113, %c0_i64 : i64
        %121 = arith.addi %120, %c15_i64 : i64
        %122 = arith.divui %121, %c16_i64 : i64
        %123 = arith.subi %122, %119 : i64
        %124 = arith.cmpi sgt, %112, %c0_i64 : i64
        %125 = arith.extui %124 : i1 to i64
        %126 = arith.muli %123, %125 : i64
        %127 = arith.index_cast %126 : i64 to index
        scf.for %arg10 = %c0 to %127 step %c1 {
          %158 = arith.index_cast %arg10 : index to i64
          %159 = arith.addi %119, %158 : i64
          %160 = arith.muli %159, %c16_i64 : i64
          %161 = arith.maxsi %160, %111 : i64
          %162 = arith.addi %160, %c16_i64 : i64
          %163 = arith.minsi %162, %113 : i64
          %164 = arith.subi %163, %161 : i64
          %165 = arith.subi %161, %111 : i64
          %166 = arith.muli %165, %117 : i64
          %167 = arith.addi %116, %166 : i64
          %168 = arith.addi %160, %c64_i64 : i64
          %169 = arith.subi %161, %160 : i64
          %170 = arith.addi %168, %169 : i64
          %171 = arith.minsi %61, %c64_i64 : i64
          "instgem.mvin"(%167, %170, %171, %164) : (i64, i64, i64, i64) -> ()
        } {gemmini.load_stream}
        %128 = arith.addi %118, %c15_i64 : i64
        %129 = arith.divui %128, %c16_i64 : i64
        %130 = arith.cmpi sgt, %111, %c0_i64 : i64
        %131 = arith.extui %130 : i1 to i64
        %132 = arith.muli %129, %131 : i64
        %133 = arith.index_cast %132 : i64 to index
        scf.for %arg10 = %c0 to %133 step %c1 {
          %158 = arith.index_cast %arg10 : index to i64
          %159 = arith.muli %158, %c16_i64 : i64
          %160 = arith.maxsi %159, %c0_i64 : i64
          %161 = arith.addi %159, %c16_i64 : i64
          %162 = arith.minsi %161, %111 : i64
          %163 = arith.subi %162, %160 : i64
          %164 = arith.addi %159, %c64_i64 : i64
          %165 = arith.subi %160, %159 : i64
          %166 = arith.addi %164, %165 : i64
          %167 = arith.minsi %61, %c64_i64 : i64
          "instgem.mvin"(%c0_i64, %166, %167, %163) : (i64, i64, i64, i64) -> ()
        } {gemmini.load_stream}
        %134 = arith.minsi %71, %c32_i64 : i64
        %135 = arith.maxsi %90, %c0_i64 : i64
        %136 = arith.minsi %135, %c32_i64 : i64
        %137 = arith.minsi %120, %c32_i64 : i64
        %138 = arith.maxsi %61, %c0_i64 : i64
        %139 = arith.minsi %138, %c16_i64 : i64
        %140 = arith.ceildivsi %134, %c16_i64 : i64
        %141 = arith.ceildivsi %139, %c16_i64 : i64
        %142 = arith.minsi %136, %137 : i64
        %143 = arith.ceildivsi %142, %c16_i64 : i64
        %144 = arith.addi %arg7, %c1 : index
        %145 = arith.cmpi sge, %144, %6 : index
        %146 = arith.cmpi eq, %arg7, %c0 : index
        %147 = arith.cmpi sgt, %140, %c0_i64 : i64
        %148 = arith.select %147, %141, %c0_i64 : i64
        %149 = arith.index_cast %148 : i64 to index
        %150 = arith.divsi %142, %c16_i64 : i64
        %151 = arith.minsi %143, %150 : i64
        %152 = arith.maxsi %151, %c0_i64 : i64
        %153 = arith.divsi %134, %c16_i64 : i64
        %154 = arith.minsi %140, %153 : i64
        %155 = arith.maxsi %154, %c1_i64 : i64
        %156 = arith.minsi %134, %c16_i64 : i64
        %157 = arith.ori %146, %145 : i1
        scf.if %157 {
          scf.if %145 {
            %158 = arith.maxsi %143, %c1_i64 : i64
            %159 = arith.ceildivsi %77, %158 : i64
            %160 = arith.select %146, %c0_i64, %c-1_i64 : i64
            scf.for %arg10 = %c0 to %149 step %c1 {
              %170 = arith.index_cast %arg10 : index to i64
              %171 = arith.subi %170, %c1_i64 : i64
              %172 = arith.cmpi sge, %171, %c0_i64 : i64
              %173 = arith.cmpi slt, %171, %78 : i64
              %174 = arith.andi %172, %173 : i1
              %175 = arith.subi %148, %c1_i64 : i64
              %176 = arith.cmpi eq, %170, %175 : i64
              %177 = arith.cmpi slt, %170, %78 : i64
              %178 = arith.andi %176, %177 : i1
              %179 = arith.subi %143, %c1_i64 : i64
              %180 = arith.select %178, %179, %c-1_i64 : i64
              %181 = arith.muli %170, %c16_i64 : i64
              %182 = arith.subi %139, %181 : i64
              %183 = arith.minsi %182, %c16_i64 : i64
              %184 = arith.cmpi sgt, %152, %c0_i64 : i64
              scf.if %184 {
                scf.if %174 {
                  %200 = arith.minsi %77, %c0_i64 : i64
                  %201 = arith.addi %200, %159 : i64
                  %202 = arith.minsi %201, %77 : i64
                  %203 = arith.index_cast %200 : i64 to index
                  %204 = arith.index_cast %202 : i64 to index
                  scf.for %arg11 = %203 to %204 step %c1 {
                    %205 = arith.index_cast %arg11 : index to i64
                    %206 = arith.addi %69, %205 : i64
                    %207 = arith.muli %206, %c16_i64 : i64
                    %208 = arith.maxsi %207, %59 : i64
                    %209 = arith.addi %207, %c16_i64 : i64
                    %210 = arith.minsi %209, %70 : i64
                    %211 = arith.subi %210, %208 : i64
                    %212 = arith.subi %208, %59 : i64
                    %213 = arith.muli %212, %67 : i64
                    %214 = arith.addi %65, %213 : i64
                    %215 = arith.muli %171, %c64_i64 : i64
                    %216 = arith.addi %214, %215 : i64
                    %217 = arith.muli %171, %c16_i64 : i64
                    %218 = arith.addi %207, %217 : i64
                    %219 = arith.ori %218, %c2684354560_i64 : i64
                    %220 = arith.subi %208, %207 : i64
                    %221 = arith.addi %219, %220 : i64
                    %222 = arith.subi %61, %217 : i64
                    %223 = arith.minsi %222, %c16_i64 : i64
                    "instgem.mvout"(%216, %221, %223, %211) : (i64, i64, i64, i64) -> ()
                  }
                }
                %193 = arith.cmpi eq, %160, %c0_i64 : i64
                %194 = arith.select %193, %c2147483648_i64, %c3221225472_i64 : i64
                %195 = arith.ori %181, %194 : i64
                %196 = arith.select %193, %c16_i64, %156 : i64
                %197 = arith.select %193, %c16_i64, %183 : i64
                %198 = arith.addi %181, %c64_i64 : i64
                "instgem.preload"(%198, %183, %c16_i64, %195, %197, %196) : (i64, i64, i64, i64, i64, i64) -> ()
                "instgem.compute_preloaded"(%c0_i64, %c16_i64, %156, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                %199 = arith.cmpi eq, %180, %c0_i64 : i64
                scf.if %199 {
                  %200 = arith.index_cast %155 : i64 to index
                  scf.for %arg11 = %c1 to %200 step %c1 {
                    %202 = arith.index_cast %arg11 : index to i64
                    %203 = arith.muli %202, %c16_i64 : i64
                    %204 = arith.addi %203, %181 : i64
                    %205 = arith.ori %204, %194 : i64
                    "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %205, %197, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                    %206 = arith.muli %202, %c32_i64 : i64
                    "instgem.compute_accumulated"(%206, %c16_i64, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                    %207 = arith.subi %202, %c1_i64 : i64
                    %208 = arith.subi %207, %69 : i64
                    %209 = arith.cmpi sge, %208, %c0_i64 : i64
                    %210 = arith.cmpi slt, %208, %77 : i64
                    %211 = arith.andi %209, %210 : i1
                    scf.if %211 {
                      %212 = arith.muli %207, %c16_i64 : i64
                      %213 = arith.maxsi %212, %59 : i64
                      %214 = arith.addi %212, %c16_i64 : i64
                      %215 = arith.minsi %214, %70 : i64
                      %216 = arith.subi %215, %213 : i64
                      %217 = arith.subi %213, %59 : i64
                      %218 = arith.muli %217, %67 : i64
                      %219 = arith.addi %65, %218 : i64
                      %220 = arith.muli %170, %c64_i64 : i64
                      %221 = arith.addi %219, %220 : i64
                      %222 = arith.addi %212, %181 : i64
                      %223 = arith.ori %222, %c2684354560_i64 : i64
                      %224 = arith.subi %213, %212 : i64
                      %225 = arith.addi %223, %224 : i64
                      %226 = arith.subi %61, %181 : i64
                      %227 = arith.minsi %226, %c16_i64 : i64
                      "instgem.mvout"(%221, %225, %227, %216) : (i64, i64, i64, i64) -> ()
                    }
                  }
                  %201 = arith.index_cast %140 : i64 to index
                  scf.for %arg11 = %200 to %201 step %c1 {
                    %202 = arith.index_cast %arg11 : index to i64
                    %203 = arith.muli %202, %c16_i64 : i64
                    %204 = arith.subi %134, %203 : i64
                    %205 = arith.minsi %204, %c16_i64 : i64
                    %206 = arith.addi %203, %181 : i64
                    %207 = arith.ori %206, %194 : i64
                    %208 = arith.select %193, %c16_i64, %205 : i64
                    "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %207, %197, %208) : (i64, i64, i64, i64, i64, i64) -> ()
                    %209 = arith.muli %202, %c32_i64 : i64
                    "instgem.compute_accumulated"(%209, %c16_i64, %205, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                    %210 = arith.subi %202, %c1_i64 : i64
                    %211 = arith.subi %210, %69 : i64
                    %212 = arith.cmpi sge, %211, %c0_i64 : i64
                    %213 = arith.cmpi slt, %211, %77 : i64
                    %214 = arith.andi %212, %213 : i1
                    scf.if %214 {
                      %215 = arith.muli %210, %c16_i64 : i64
                      %216 = arith.maxsi %215, %59 : i64
                      %217 = arith.addi %215, %c16_i64 : i64
                      %218 = arith.minsi %217, %70 : i64
                      %219 = arith.subi %218, %216 : i64
                      %220 = arith.subi %216, %59 : i64
                      %221 = arith.muli %220, %67 : i64
                      %222 = arith.addi %65, %221 : i64
                      %223 = arith.muli %170, %c64_i64 : i64
                      %224 = arith.addi %222, %223 : i64
                      %225 = arith.addi %215, %181 : i64
                      %226 = arith.ori %225, %c2684354560_i64 : i64
                      %227 = arith.subi %216, %215 : i64
                      %228 = arith.addi %226, %227 : i64
                      %229 = arith.subi %61, %181 : i64
                      %230 = arith.minsi %229, %c16_i64 : i64
                      "instgem.mvout"(%224, %228, %230, %219) : (i64, i64, i64, i64) -> ()
                    }
                  }
                } else {
                  %200 = arith.index_cast %155 : i64 to index
                  scf.for %arg11 = %c1 to %200 step %c1 {
                    %202 = arith.index_cast %arg11 : index to i64
                    %203 = arith.muli %202, %c16_i64 : i64
                    %204 = arith.addi %203, %181 : i64
                    %205 = arith.ori %204, %194 : i64
                    "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %205, %197, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                    %206 = arith.muli %202, %c32_i64 : i64
                    "instgem.compute_accumulated"(%206, %c16_i64, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                  }
                  %201 = arith.index_cast %140 : i64 to index
                  scf.for %arg11 = %200 to %201 step %c1 {
                    %202 = arith.index_cast %arg11 : index to i64
                    %203 = arith.muli %202, %c16_i64 : i64
                    %204 = arith.subi %134, %203 : i64
                    %205 = arith.minsi %204, %c16_i64 : i64
                    %206 = arith.addi %203, %181 : i64
                    %207 = arith.ori %206, %194 : i64
                    %208 = arith.select %193, %c16_i64, %205 : i64
                    "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %207, %197, %208) : (i64, i64, i64, i64, i64, i64) -> ()
                    %209 = arith.muli %202, %c32_i64 : i64
                    "instgem.compute_accumulated"(%209, %c16_i64, %205, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                  }
                }
              }
              %185 = arith.index_cast %152 : i64 to index
              scf.for %arg11 = %c1 to %185 step %c1 {
                %193 = arith.index_cast %arg11 : index to i64
                scf.if %174 {
                  %199 = arith.muli %193, %159 : i64
                  %200 = arith.minsi %199, %77 : i64
                  %201 = arith.addi %200, %159 : i64
                  %202 = arith.minsi %201, %77 : i64
                  %203 = arith.index_cast %200 : i64 to index
                  %204 = arith.index_cast %202 : i64 to index
                  scf.for %arg12 = %203 to %204 step %c1 {
                    %205 = arith.index_cast %arg12 : index to i64
                    %206 = arith.addi %69, %205 : i64
                    %207 = arith.muli %206, %c16_i64 : i64
                    %208 = arith.maxsi %207, %59 : i64
                    %209 = arith.addi %207, %c16_i64 : i64
                    %210 = arith.minsi %209, %70 : i64
                    %211 = arith.subi %210, %208 : i64
                    %212 = arith.subi %208, %59 : i64
                    %213 = arith.muli %212, %67 : i64
                    %214 = arith.addi %65, %213 : i64
                    %215 = arith.muli %171, %c64_i64 : i64
                    %216 = arith.addi %214, %215 : i64
                    %217 = arith.muli %171, %c16_i64 : i64
                    %218 = arith.addi %207, %217 : i64
                    %219 = arith.ori %218, %c2684354560_i64 : i64
                    %220 = arith.subi %208, %207 : i64
                    %221 = arith.addi %219, %220 : i64
                    %222 = arith.subi %61, %217 : i64
                    %223 = arith.minsi %222, %c16_i64 : i64
                    "instgem.mvout"(%216, %221, %223, %211) : (i64, i64, i64, i64) -> ()
                  }
                }
                %194 = arith.ori %181, %c3221225472_i64 : i64
                %195 = arith.muli %193, %c16_i64 : i64
                %196 = arith.addi %195, %181 : i64
                %197 = arith.addi %196, %c64_i64 : i64
                "instgem.preload"(%197, %183, %c16_i64, %194, %183, %156) : (i64, i64, i64, i64, i64, i64) -> ()
                "instgem.compute_preloaded"(%195, %c16_i64, %156, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                %198 = arith.cmpi eq, %193, %180 : i64
                scf.if %198 {
                  %199 = arith.index_cast %155 : i64 to index
                  scf.for %arg12 = %c1 to %199 step %c1 {
                    %201 = arith.index_cast %arg12 : index to i64
                    %202 = arith.muli %201, %c16_i64 : i64
                    %203 = arith.addi %202, %181 : i64
                    %204 = arith.ori %203, %c3221225472_i64 : i64
                    "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %204, %183, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                    %205 = arith.muli %201, %c32_i64 : i64
                    %206 = arith.addi %205, %195 : i64
                    "instgem.compute_accumulated"(%206, %c16_i64, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                    %207 = arith.subi %201, %c1_i64 : i64
                    %208 = arith.subi %207, %69 : i64
                    %209 = arith.cmpi sge, %208, %c0_i64 : i64
                    %210 = arith.cmpi slt, %208, %77 : i64
                    %211 = arith.andi %209, %210 : i1
                    scf.if %211 {
                      %212 = arith.muli %207, %c16_i64 : i64
                      %213 = arith.maxsi %212, %59 : i64
                      %214 = arith.addi %212, %c16_i64 : i64
                      %215 = arith.minsi %214, %70 : i64
                      %216 = arith.subi %215, %213 : i64
                      %217 = arith.subi %213, %59 : i64
                      %218 = arith.muli %217, %67 : i64
                      %219 = arith.addi %65, %218 : i64
                      %220 = arith.muli %170, %c64_i64 : i64
                      %221 = arith.addi %219, %220 : i64
                      %222 = arith.addi %212, %181 : i64
                      %223 = arith.ori %222, %c2684354560_i64 : i64
                      %224 = arith.subi %213, %212 : i64
                      %225 = arith.addi %223, %224 : i64
                      %226 = arith.subi %61, %181 : i64
                      %227 = arith.minsi %226, %c16_i64 : i64
                      "instgem.mvout"(%221, %225, %227, %216) : (i64, i64, i64, i64) -> ()
                    }
                  }
                  %200 = arith.index_cast %140 : i64 to index
                  scf.for %arg12 = %199 to %200 step %c1 {
                    %201 = arith.index_cast %arg12 : index to i64
                    %202 = arith.muli %201, %c16_i64 : i64
                    %203 = arith.subi %134, %202 : i64
                    %204 = arith.minsi %203, %c16_i64 : i64
                    %205 = arith.addi %202, %181 : i64
                    %206 = arith.ori %205, %c3221225472_i64 : i64
                    "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %206, %183, %204) : (i64, i64, i64, i64, i64, i64) -> ()
                    %207 = arith.muli %201, %c32_i64 : i64
                    %208 = arith.addi %207, %195 : i64
                    "instgem.compute_accumulated"(%208, %c16_i64, %204, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                    %209 = arith.subi %201, %c1_i64 : i64
                    %210 = arith.subi %209, %69 : i64
                    %211 = arith.cmpi sge, %210, %c0_i64 : i64
                    %212 = arith.cmpi slt, %210, %77 : i64
                    %213 = arith.andi %211, %212 : i1
                    scf.if %213 {
                      %214 = arith.muli %209, %c16_i64 : i64
                      %215 = arith.maxsi %214, %59 : i64
                      %216 = arith.addi %214, %c16_i64 : i64
                      %217 = arith.minsi %216, %70 : i64
                      %218 = arith.subi %217, %215 : i64
                      %219 = arith.subi %215, %59 : i64
                      %220 = arith.muli %219, %67 : i64
                      %221 = arith.addi %65, %220 : i64
                      %222 = arith.muli %170, %c64_i64 : i64
                      %223 = arith.addi %221, %222 : i64
                      %224 = arith.addi %214, %181 : i64
                      %225 = arith.ori %224, %c2684354560_i64 : i64
                      %226 = arith.subi %215, %214 : i64
                      %227 = arith.addi %225, %226 : i64
                      %228 = arith.subi %61, %181 : i64
                      %229 = arith.minsi %228, %c16_i64 : i64
                      "instgem.mvout"(%223, %227, %229, %218) : (i64, i64, i64, i64) -> ()
                    }
                  }
                } else {
                  %199 = arith.index_cast %155 : i64 to index
                  scf.for %arg12 = %c1 to %199 step %c1 {
                    %201 = arith.index_cast %arg12 : index to i64
                    %202 = arith.muli %201, %c16_i64 : i64
                    %203 = arith.addi %202, %181 : i64
                    %204 = arith.ori %203, %c3221225472_i64 : i64
                    "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %204, %183, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                    %205 = arith.muli %201, %c32_i64 : i64
                    %206 = arith.addi %205, %195 : i64
                    "instgem.compute_accumulated"(%206, %c16_i64, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                  }
                  %200 = arith.index_cast %140 : i64 to index
                  scf.for %arg12 = %199 to %200 step %c1 {
                    %201 = arith.index_cast %arg12 : index to i64
                    %202 = arith.muli %201, %c16_i64 : i64
                    %203 = arith.subi %134, %202 : i64
                    %204 = arith.minsi %203, %c16_i64 : i64
                    %205 = arith.addi %202, %181 : i64
                    %206 = arith.ori %205, %c3221225472_i64 : i64
                    "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %206, %183, %204) : (i64, i64, i64, i64, i64, i64) -> ()
                    %207 = arith.muli %201, %c32_i64 : i64
                    %208 = arith.addi %207, %195 : i64
                    "instgem.compute_accumulated"(%208, %c16_i64, %204, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                  }
                }
              }
              %186 = arith.index_cast %143 : i64 to index
              scf.for %arg11 = %185 to %186 step %c1 {
                %193 = arith.index_cast %arg11 : index to i64
                %194 = arith.muli %193, %c16_i64 : i64
                %195 = arith.subi %136, %194 : i64
                %196 = arith.minsi %195, %c16_i64 : i64
                %197 = arith.subi %137, %194 : i64
                %198 = arith.minsi %197, %c16_i64 : i64
                scf.if %174 {
                  %207 = arith.muli %193, %159 : i64
                  %208 = arith.minsi %207, %77 : i64
                  %209 = arith.addi %208, %159 : i64
                  %210 = arith.minsi %209, %77 : i64
                  %211 = arith.index_cast %208 : i64 to index
                  %212 = arith.index_cast %210 : i64 to index
                  scf.for %arg12 = %211 to %212 step %c1 {
                    %213 = arith.index_cast %arg12 : index to i64
                    %214 = arith.addi %69, %213 : i64
                    %215 = arith.muli %214, %c16_i64 : i64
                    %216 = arith.maxsi %215, %59 : i64
                    %217 = arith.addi %215, %c16_i64 : i64
                    %218 = arith.minsi %217, %70 : i64
                    %219 = arith.subi %218, %216 : i64
                    %220 = arith.subi %216, %59 : i64
                    %221 = arith.muli %220, %67 : i64
                    %222 = arith.addi %65, %221 : i64
                    %223 = arith.muli %171, %c64_i64 : i64
                    %224 = arith.addi %222, %223 : i64
                    %225 = arith.muli %171, %c16_i64 : i64
                    %226 = arith.addi %215, %225 : i64
                    %227 = arith.ori %226, %c2684354560_i64 : i64
                    %228 = arith.subi %216, %215 : i64
                    %229 = arith.addi %227, %228 : i64
                    %230 = arith.subi %61, %225 : i64
                    %231 = arith.minsi %230, %c16_i64 : i64
                    "instgem.mvout"(%224, %229, %231, %219) : (i64, i64, i64, i64) -> ()
                  }
                }
                %199 = arith.cmpi eq, %193, %160 : i64
                %200 = arith.select %199, %c2147483648_i64, %c3221225472_i64 : i64
                %201 = arith.ori %181, %200 : i64
                %202 = arith.select %199, %c16_i64, %156 : i64
                %203 = arith.select %199, %c16_i64, %183 : i64
                %204 = arith.addi %194, %181 : i64
                %205 = arith.addi %204, %c64_i64 : i64
                "instgem.preload"(%205, %183, %198, %201, %203, %202) : (i64, i64, i64, i64, i64, i64) -> ()
                "instgem.compute_preloaded"(%194, %196, %156, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                %206 = arith.cmpi eq, %193, %180 : i64
                scf.if %206 {
                  %207 = arith.index_cast %155 : i64 to index
                  scf.for %arg12 = %c1 to %207 step %c1 {
                    %209 = arith.index_cast %arg12 : index to i64
                    %210 = arith.muli %209, %c16_i64 : i64
                    %211 = arith.addi %210, %181 : i64
                    %212 = arith.ori %211, %200 : i64
                    "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %212, %203, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                    %213 = arith.muli %209, %c32_i64 : i64
                    %214 = arith.addi %213, %194 : i64
                    "instgem.compute_accumulated"(%214, %196, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                    %215 = arith.subi %209, %c1_i64 : i64
                    %216 = arith.subi %215, %69 : i64
                    %217 = arith.cmpi sge, %216, %c0_i64 : i64
                    %218 = arith.cmpi slt, %216, %77 : i64
                    %219 = arith.andi %217, %218 : i1
                    scf.if %219 {
                      %220 = arith.muli %215, %c16_i64 : i64
                      %221 = arith.maxsi %220, %59 : i64
                      %222 = arith.addi %220, %c16_i64 : i64
                      %223 = arith.minsi %222, %70 : i64
                      %224 = arith.subi %223, %221 : i64
                      %225 = arith.subi %221, %59 : i64
                      %226 = arith.muli %225, %67 : i64
                      %227 = arith.addi %65, %226 : i64
                      %228 = arith.muli %170, %c64_i64 : i64
                      %229 = arith.addi %227, %228 : i64
                      %230 = arith.addi %220, %181 : i64
                      %231 = arith.ori %230, %c2684354560_i64 : i64
                      %232 = arith.subi %221, %220 : i64
                      %233 = arith.addi %231, %232 : i64
                      %234 = arith.subi %61, %181 : i64
                      %235 = arith.minsi %234, %c16_i64 : i64
                      "instgem.mvout"(%229, %233, %235, %224) : (i64, i64, i64, i64) -> ()
                    }
                  }
                  %208 = arith.index_cast %140 : i64 to index
                  scf.for %arg12 = %207 to %208 step %c1 {
                    %209 = arith.index_cast %arg12 : index to i64
                    %210 = arith.muli %209, %c16_i64 : i64
                    %211 = arith.subi %134, %210 : i64
                    %212 = arith.minsi %211, %c16_i64 : i64
                    %213 = arith.addi %210, %181 : i64
                    %214 = arith.ori %213, %200 : i64
                    %215 = arith.select %199, %c16_i64, %212 : i64
                    "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %214, %203, %215) : (i64, i64, i64, i64, i64, i64) -> ()
                    %216 = arith.muli %209, %c32_i64 : i64
                    %217 = arith.addi %216, %194 : i64
                    "instgem.compute_accumulated"(%217, %196, %212, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                    %218 = arith.subi %209, %c1_i64 : i64
                    %219 = arith.subi %218, %69 : i64
                    %220 = arith.cmpi sge, %219, %c0_i64 : i64
                    %221 = arith.cmpi slt, %219, %77 : i64
                    %222 = arith.andi %220, %221 : i1
                    scf.if %222 {
                      %223 = arith.muli %218, %c16_i64 : i64
                      %224 = arith.maxsi %223, %59 : i64
                      %225 = arith.addi %223, %c16_i64 : i64
                      %226 = arith.minsi %225, %70 : i64
                      %227 = arith.subi %226, %224 : i64
                      %228 = arith.subi %224, %59 : i64
                      %229 = arith.muli %228, %67 : i64
                      %230 = arith.addi %65, %229 : i64
                      %231 = arith.muli %170, %c64_i64 : i64
                      %232 = arith.addi %230, %231 : i64
                      %233 = arith.addi %223, %181 : i64
                      %234 = arith.ori %233, %c2684354560_i64 : i64
                      %235 = arith.subi %224, %223 : i64
                      %236 = arith.addi %234, %235 : i64
                      %237 = arith.subi %61, %181 : i64
                      %238 = arith.minsi %237, %c16_i64 : i64
                      "instgem.mvout"(%232, %236, %238, %227) : (i64, i64, i64, i64) -> ()
                    }
                  }
                } else {
                  %207 = arith.index_cast %155 : i64 to index
                  scf.for %arg12 = %c1 to %207 step %c1 {
                    %209 = arith.index_cast %arg12 : index to i64
                    %210 = arith.muli %209, %c16_i64 : i64
                    %211 = arith.addi %210, %181 : i64
                    %212 = arith.ori %211, %200 : i64
                    "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %212, %203, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                    %213 = arith.muli %209, %c32_i64 : i64
                    %214 = arith.addi %213, %194 : i64
                    "instgem.compute_accumulated"(%214, %196, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                  }
                  %208 = arith.index_cast %140 : i64 to index
                  scf.for %arg12 = %207 to %208 step %c1 {
                    %209 = arith.index_cast %arg12 : index to i64
                    %210 = arith.muli %209, %c16_i64 : i64
                    %211 = arith.subi %134, %210 : i64
                    %212 = arith.minsi %211, %c16_i64 : i64
                    %213 = arith.addi %210, %181 : i64
                    %214 = arith.ori %213, %200 : i64
                    %215 = arith.select %199, %c16_i64, %212 : i64
                    "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %214, %203, %215) : (i64, i64, i64, i64, i64, i64) -> ()
                    %216 = arith.muli %209, %c32_i64 : i64
                    %217 = arith.addi %216, %194 : i64
                    "instgem.compute_accumulated"(%217, %196, %212, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                  }
                }
              }
              scf.if %174 {
                %193 = arith.muli %143, %159 : i64
                %194 = arith.minsi %193, %77 : i64
                %195 = arith.index_cast %194 : i64 to index
                scf.for %arg11 = %195 to %95 step %c1 {
                  %196 = arith.index_cast %arg11 : index to i64
                  %197 = arith.addi %69, %196 : i64
                  %198 = arith.muli %197, %c16_i64 : i64
                  %199 = arith.maxsi %198, %59 : i64
                  %200 = arith.addi %198, %c16_i64 : i64
                  %201 = arith.minsi %200, %70 : i64
                  %202 = arith.subi %201, %199 : i64
                  %203 = arith.subi %199, %59 : i64
                  %204 = arith.muli %203, %67 : i64
                  %205 = arith.addi %65, %204 : i64
                  %206 = arith.muli %171, %c64_i64 : i64
                  %207 = arith.addi %205, %206 : i64
                  %208 = arith.muli %171, %c16_i64 : i64
                  %209 = arith.addi %198, %208 : i64
                  %210 = arith.ori %209, %c2684354560_i64 : i64
                  %211 = arith.subi %199, %198 : i64
                  %212 = arith.addi %210, %211 : i64
                  %213 = arith.subi %61, %208 : i64
                  %214 = arith.minsi %213, %c16_i64 : i64
                  "instgem.mvout"(%207, %212, %214, %202) : (i64, i64, i64, i64) -> ()
                }
              }
              %187 = arith.cmpi sgt, %143, %c0_i64 : i64
              %188 = arith.subi %140, %c1_i64 : i64
              %189 = arith.subi %188, %69 : i64
              %190 = arith.maxsi %189, %c0_i64 : i64
              %191 = arith.minsi %190, %77 : i64
              %192 = arith.select %187, %191, %c0_i64 : i64
              scf.if %178 {
                %193 = arith.index_cast %192 : i64 to index
                scf.for %arg11 = %193 to %95 step %c1 {
                  %194 = arith.index_cast %arg11 : index to i64
                  %195 = arith.addi %69, %194 : i64
                  %196 = arith.muli %195, %c16_i64 : i64
                  %197 = arith.maxsi %196, %59 : i64
                  %198 = arith.addi %196, %c16_i64 : i64
                  %199 = arith.minsi %198, %70 : i64
                  %200 = arith.subi %199, %197 : i64
                  %201 = arith.subi %197, %59 : i64
                  %202 = arith.muli %201, %67 : i64
                  %203 = arith.addi %65, %202 : i64
                  %204 = arith.muli %170, %c64_i64 : i64
                  %205 = arith.addi %203, %204 : i64
                  %206 = arith.addi %196, %181 : i64
                  %207 = arith.ori %206, %c2684354560_i64 : i64
                  %208 = arith.subi %197, %196 : i64
                  %209 = arith.addi %207, %208 : i64
                  %210 = arith.subi %61, %181 : i64
                  %211 = arith.minsi %210, %c16_i64 : i64
                  "instgem.mvout"(%205, %209, %211, %200) : (i64, i64, i64, i64) -> ()
                }
              }
            } {gemmini.compute_nest}
            %161 = arith.cmpi eq, %143, %c0_i64 : i64
            %162 = arith.cmpi slt, %140, %c2_i64 : i64
            %163 = arith.cmpi slt, %148, %c1_i64 : i64
            %164 = arith.ori %161, %162 : i1
            %165 = arith.ori %164, %163 : i1
            %166 = arith.andi %146, %165 : i1
            scf.if %166 {
              scf.for %arg10 = %c0 to %c2 step %c1 {
                %170 = arith.index_cast %arg10 : index to i64
                %171 = arith.muli %170, %c16_i64 : i64
                %172 = arith.ori %171, %c2147483648_i64 : i64
                %173 = arith.cmpi sge, %170, %140 : i64
                %174 = arith.cmpi sle, %148, %c0_i64 : i64
                %175 = arith.ori %161, %173 : i1
                %176 = arith.ori %175, %174 : i1
                %177 = arith.cmpi sgt, %78, %c0_i64 : i64
                %178 = arith.andi %176, %177 : i1
                scf.if %178 {
                  "instgem.mvin"(%c0_i64, %172, %c16_i64, %c16_i64) : (i64, i64, i64, i64) -> ()
                }
              }
            }
            %167 = arith.minsi %148, %78 : i64
            %168 = arith.index_cast %167 : i64 to index
            %169 = arith.index_cast %78 : i64 to index
            scf.for %arg10 = %168 to %169 step %c1 {
              %170 = arith.index_cast %arg10 : index to i64
              scf.for %arg11 = %c0 to %95 step %c1 {
                %171 = arith.index_cast %arg11 : index to i64
                %172 = arith.addi %69, %171 : i64
                %173 = arith.muli %172, %c16_i64 : i64
                %174 = arith.maxsi %173, %59 : i64
                %175 = arith.addi %173, %c16_i64 : i64
                %176 = arith.minsi %175, %70 : i64
                %177 = arith.subi %176, %174 : i64
                %178 = arith.subi %174, %59 : i64
                %179 = arith.muli %178, %67 : i64
                %180 = arith.addi %65, %179 : i64
                %181 = arith.muli %170, %c64_i64 : i64
                %182 = arith.addi %180, %181 : i64
                %183 = arith.muli %170, %c16_i64 : i64
                %184 = arith.addi %173, %183 : i64
                %185 = arith.ori %184, %c2684354560_i64 : i64
                %186 = arith.subi %174, %173 : i64
                %187 = arith.addi %185, %186 : i64
                %188 = arith.subi %61, %183 : i64
                %189 = arith.minsi %188, %c16_i64 : i64
                "instgem.mvout"(%182, %187, %189, %177) : (i64, i64, i64, i64) -> ()
              }
            }
          } else {
            %158 = arith.select %146, %c0_i64, %c-1_i64 : i64
            scf.for %arg10 = %c0 to %149 step %c1 {
              %165 = arith.index_cast %arg10 : index to i64
              %166 = arith.muli %165, %c16_i64 : i64
              %167 = arith.subi %139, %166 : i64
              %168 = arith.minsi %167, %c16_i64 : i64
              %169 = arith.cmpi sgt, %152, %c0_i64 : i64
              scf.if %169 {
                %172 = arith.cmpi eq, %158, %c0_i64 : i64
                %173 = arith.select %172, %c2147483648_i64, %c3221225472_i64 : i64
                %174 = arith.ori %166, %173 : i64
                %175 = arith.select %172, %c16_i64, %156 : i64
                %176 = arith.select %172, %c16_i64, %168 : i64
                %177 = arith.addi %166, %c64_i64 : i64
                "instgem.preload"(%177, %168, %c16_i64, %174, %176, %175) : (i64, i64, i64, i64, i64, i64) -> ()
                "instgem.compute_preloaded"(%c0_i64, %c16_i64, %156, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                %178 = arith.index_cast %155 : i64 to index
                scf.for %arg11 = %c1 to %178 step %c1 {
                  %180 = arith.index_cast %arg11 : index to i64
                  %181 = arith.muli %180, %c16_i64 : i64
                  %182 = arith.addi %181, %166 : i64
                  %183 = arith.ori %182, %173 : i64
                  "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %183, %176, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                  %184 = arith.muli %180, %c32_i64 : i64
                  "instgem.compute_accumulated"(%184, %c16_i64, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                }
                %179 = arith.index_cast %140 : i64 to index
                scf.for %arg11 = %178 to %179 step %c1 {
                  %180 = arith.index_cast %arg11 : index to i64
                  %181 = arith.muli %180, %c16_i64 : i64
                  %182 = arith.subi %134, %181 : i64
                  %183 = arith.minsi %182, %c16_i64 : i64
                  %184 = arith.addi %181, %166 : i64
                  %185 = arith.ori %184, %173 : i64
                  %186 = arith.select %172, %c16_i64, %183 : i64
                  "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %185, %176, %186) : (i64, i64, i64, i64, i64, i64) -> ()
                  %187 = arith.muli %180, %c32_i64 : i64
                  "instgem.compute_accumulated"(%187, %c16_i64, %183, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                }
              }
              %170 = arith.index_cast %152 : i64 to index
              scf.for %arg11 = %c1 to %170 step %c1 {
                %172 = arith.index_cast %arg11 : index to i64
                %173 = arith.ori %166, %c3221225472_i64 : i64
                %174 = arith.muli %172, %c16_i64 : i64
                %175 = arith.addi %174, %166 : i64
                %176 = arith.addi %175, %c64_i64 : i64
                "instgem.preload"(%176, %168, %c16_i64, %173, %168, %156) : (i64, i64, i64, i64, i64, i64) -> ()
                "instgem.compute_preloaded"(%174, %c16_i64, %156, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                %177 = arith.index_cast %155 : i64 to index
                scf.for %arg12 = %c1 to %177 step %c1 {
                  %179 = arith.index_cast %arg12 : index to i64
                  %180 = arith.muli %179, %c16_i64 : i64
                  %181 = arith.addi %180, %166 : i64
                  %182 = arith.ori %181, %c3221225472_i64 : i64
                  "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %182, %168, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                  %183 = arith.muli %179, %c32_i64 : i64
                  %184 = arith.addi %183, %174 : i64
                  "instgem.compute_accumulated"(%184, %c16_i64, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                }
                %178 = arith.index_cast %140 : i64 to index
                scf.for %arg12 = %177 to %178 step %c1 {
                  %179 = arith.index_cast %arg12 : index to i64
                  %180 = arith.muli %179, %c16_i64 : i64
                  %181 = arith.subi %134, %180 : i64
                  %182 = arith.minsi %181, %c16_i64 : i64
                  %183 = arith.addi %180, %166 : i64
                  %184 = arith.ori %183, %c3221225472_i64 : i64
                  "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %184, %168, %182) : (i64, i64, i64, i64, i64, i64) -> ()
                  %185 = arith.muli %179, %c32_i64 : i64
                  %186 = arith.addi %185, %174 : i64
                  "instgem.compute_accumulated"(%186, %c16_i64, %182, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                }
              }
              %171 = arith.index_cast %143 : i64 to index
              scf.for %arg11 = %170 to %171 step %c1 {
                %172 = arith.index_cast %arg11 : index to i64
                %173 = arith.muli %172, %c16_i64 : i64
                %174 = arith.subi %136, %173 : i64
                %175 = arith.minsi %174, %c16_i64 : i64
                %176 = arith.subi %137, %173 : i64
                %177 = arith.minsi %176, %c16_i64 : i64
                %178 = arith.cmpi eq, %172, %158 : i64
                %179 = arith.select %178, %c2147483648_i64, %c3221225472_i64 : i64
                %180 = arith.ori %166, %179 : i64
                %181 = arith.select %178, %c16_i64, %156 : i64
                %182 = arith.select %178, %c16_i64, %168 : i64
                %183 = arith.addi %173, %166 : i64
                %184 = arith.addi %183, %c64_i64 : i64
                "instgem.preload"(%184, %168, %177, %180, %182, %181) : (i64, i64, i64, i64, i64, i64) -> ()
                "instgem.compute_preloaded"(%173, %175, %156, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                %185 = arith.index_cast %155 : i64 to index
                scf.for %arg12 = %c1 to %185 step %c1 {
                  %187 = arith.index_cast %arg12 : index to i64
                  %188 = arith.muli %187, %c16_i64 : i64
                  %189 = arith.addi %188, %166 : i64
                  %190 = arith.ori %189, %179 : i64
                  "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %190, %182, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                  %191 = arith.muli %187, %c32_i64 : i64
                  %192 = arith.addi %191, %173 : i64
                  "instgem.compute_accumulated"(%192, %175, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                }
                %186 = arith.index_cast %140 : i64 to index
                scf.for %arg12 = %185 to %186 step %c1 {
                  %187 = arith.index_cast %arg12 : index to i64
                  %188 = arith.muli %187, %c16_i64 : i64
                  %189 = arith.subi %134, %188 : i64
                  %190 = arith.minsi %189, %c16_i64 : i64
                  %191 = arith.addi %188, %166 : i64
                  %192 = arith.ori %191, %179 : i64
                  %193 = arith.select %178, %c16_i64, %190 : i64
                  "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %192, %182, %193) : (i64, i64, i64, i64, i64, i64) -> ()
                  %194 = arith.muli %187, %c32_i64 : i64
                  %195 = arith.addi %194, %173 : i64
                  "instgem.compute_accumulated"(%195, %175, %190, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                }
              }
            } {gemmini.compute_nest}
            %159 = arith.cmpi eq, %143, %c0_i64 : i64
            %160 = arith.cmpi slt, %140, %c2_i64 : i64
            %161 = arith.cmpi slt, %148, %c1_i64 : i64
            %162 = arith.ori %159, %160 : i1
            %163 = arith.ori %162, %161 : i1
            %164 = arith.andi %146, %163 : i1
            scf.if %164 {
              scf.for %arg10 = %c0 to %c2 step %c1 {
                %165 = arith.index_cast %arg10 : index to i64
                %166 = arith.muli %165, %c16_i64 : i64
                %167 = arith.ori %166, %c2147483648_i64 : i64
                %168 = arith.cmpi sge, %165, %140 : i64
                %169 = arith.cmpi sle, %148, %c0_i64 : i64
                %170 = arith.ori %159, %168 : i1
                %171 = arith.ori %170, %169 : i1
                %172 = arith.cmpi sgt, %78, %c0_i64 : i64
                %173 = arith.andi %171, %172 : i1
                scf.if %173 {
                  "instgem.mvin"(%c0_i64, %167, %c16_i64, %c16_i64) : (i64, i64, i64, i64) -> ()
                }
              }
            }
          }
        } else {
          scf.for %arg10 = %c0 to %149 step %c1 {
            %158 = arith.index_cast %arg10 : index to i64
            %159 = arith.muli %158, %c16_i64 : i64
            %160 = arith.subi %139, %159 : i64
            %161 = arith.minsi %160, %c16_i64 : i64
            %162 = arith.index_cast %152 : i64 to index
            scf.for %arg11 = %c0 to %162 step %c1 {
              %164 = arith.index_cast %arg11 : index to i64
              %165 = arith.ori %159, %c3221225472_i64 : i64
              %166 = arith.muli %164, %c16_i64 : i64
              %167 = arith.addi %166, %159 : i64
              %168 = arith.addi %167, %c64_i64 : i64
              "instgem.preload"(%168, %161, %c16_i64, %165, %161, %156) : (i64, i64, i64, i64, i64, i64) -> ()
              "instgem.compute_preloaded"(%166, %c16_i64, %156, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
              %169 = arith.index_cast %155 : i64 to index
              scf.for %arg12 = %c1 to %169 step %c1 {
                %171 = arith.index_cast %arg12 : index to i64
                %172 = arith.muli %171, %c16_i64 : i64
                %173 = arith.addi %172, %159 : i64
                %174 = arith.ori %173, %c3221225472_i64 : i64
                "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %174, %161, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                %175 = arith.muli %171, %c32_i64 : i64
                %176 = arith.addi %175, %166 : i64
                "instgem.compute_accumulated"(%176, %c16_i64, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
              }
              %170 = arith.index_cast %140 : i64 to index
              scf.for %arg12 = %169 to %170 step %c1 {
                %171 = arith.index_cast %arg12 : index to i64
                %172 = arith.muli %171, %c16_i64 : i64
                %173 = arith.subi %134, %172 : i64
                %174 = arith.minsi %173, %c16_i64 : i64
                %175 = arith.addi %172, %159 : i64
                %176 = arith.ori %175, %c3221225472_i64 : i64
                "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %176, %161, %174) : (i64, i64, i64, i64, i64, i64) -> ()
                %177 = arith.muli %171, %c32_i64 : i64
                %178 = arith.addi %177, %166 : i64
                "instgem.compute_accumulated"(%178, %c16_i64, %174, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
              }
            }
            %163 = arith.index_cast %143 : i64 to index
            scf.for %arg11 = %162 to %163 step %c1 {
              %164 = arith.index_cast %arg11 : index to i64
              %165 = arith.muli %164, %c16_i64 : i64
              %166 = arith.subi %136, %165 : i64
              %167 = arith.minsi %166, %c16_i64 : i64
              %168 = arith.subi %137, %165 : i64
              %169 = arith.minsi %168, %c16_i64 : i64
              %170 = arith.ori %159, %c3221225472_i64 : i64
              %171 = arith.addi %165, %159 : i64
              %172 = arith.addi %171, %c64_i64 : i64
              "instgem.preload"(%172, %161, %169, %170, %161, %156) : (i64, i64, i64, i64, i64, i64) -> ()
              "instgem.compute_preloaded"(%165, %167, %156, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
              %173 = arith.index_cast %155 : i64 to index
              scf.for %arg12 = %c1 to %173 step %c1 {
                %175 = arith.index_cast %arg12 : index to i64
                %176 = arith.muli %175, %c16_i64 : i64
                %177 = arith.addi %176, %159 : i64
                %178 = arith.ori %177, %c3221225472_i64 : i64
                "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %178, %161, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                %179 = arith.muli %175, %c32_i64 : i64
                %180 = arith.addi %179, %165 : i64
                "instgem.compute_accumulated"(%180, %167, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
              }
              %174 = arith.index_cast %140 : i64 to index
              scf.for %arg12 = %173 to %174 step %c1 {
                %175 = arith.index_cast %arg12 : index to i64
                %176 = arith.muli %175, %c16_i64 : i64
                %177 = arith.subi %134, %176 : i64
                %178 = arith.minsi %177, %c16_i64 : i64
                %179 = arith.addi %176, %159 : i64
                %180 = arith.ori %179, %c3221225472_i64 : i64
                "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %180, %161, %178) : (i64, i64, i64, i64, i64, i64) -> ()
                %181 = arith.muli %175, %c32_i64 : i64
                %182 = arith.addi %181, %165 : i64
                "instgem.compute_accumulated"(%182, %167, %178, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
              }
            }
          } {gemmini.compute_nest}
        }
        scf.yield %82, %104 : index, index
      }
      scf.if %58 {
        "instgem.config_st"(%c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %67, %c1065353216_i64) : (i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> ()
        %80 = arith.muli %77, %78 : i64
        %81 = arith.index_cast %80 : i64 to index
        scf.for %arg7 = %c0 to %81 step %c1 {
          %82 = arith.index_cast %arg7 : index to i64
          %83 = arith.remsi %82, %77 : i64
          %84 = arith.divsi %82, %77 : i64
          %85 = arith.addi %69, %83 : i64
          %86 = arith.muli %85, %c16_i64 : i64
          %87 = arith.maxsi %86, %59 : i64
          %88 = arith.addi %86, %c16_i64 : i64
          %89 = arith.minsi %88, %70 : i64
          %90 = arith.subi %89, %87 : i64
          %91 = arith.subi %87, %59 : i64
          %92 = arith.muli %91, %67 : i64
          %93 = arith.addi %65, %92 : i64
          %94 = arith.muli %84, %c64_i64 : i64
          %95 = arith.addi %93, %94 : i64
          %96 = arith.muli %84, %c16_i64 : i64
          %97 = arith.addi %86, %96 : i64
          %98 = arith.ori %97, %c2684354560_i64 : i64
          %99 = arith.subi %87, %86 : i64
          %100 = arith.addi %98, %99 : i64
          %101 = arith.subi %61, %96 : i64
          %102 = arith.minsi %101, %c16_i64 : i64
          "instgem.mvout"(%95, %100, %102, %90) : (i64, i64, i64, i64) -> ()
        }
      }
    }
    return
  }
}
