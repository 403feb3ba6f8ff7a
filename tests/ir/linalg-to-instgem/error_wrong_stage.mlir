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
      %51 = arith.andi %45, %30 : i1
      %52 = arith.andi %51, %26 : i1
      %53 = arith.andi %52, %27 : i1
      scf.if %53 {
        %reinterpret_cast = memref.reinterpret_cast %arg0 to offset: [0], sizes: [%arg3, %arg5], strides: [%arg5, 1] : memref<?xi8> to memref<?x?xi8, strided<[?, 1]>>
        %reinterpret_cast_0 = memref.reinterpret_cast %arg1 to offset: [0], sizes: [%arg5, %arg4], strides: [%arg4, 1] : memref<?xi8> to memref<?x?xi8, strided<[?, 1]>>
        %reinterpret_cast_1 = memref.reinterpret_cast %arg2 to offset: [0], sizes: [%arg3, %arg4], strides: [%arg4, 1] : memref<?xi32> to memref<?x?xi32, strided<[?, 1]>>
        %subview = memref.subview %reinterpret_cast_1[%4, %5] [32, 16] [1, 1] : memref<?x?xi32, strided<[?, 1]>> to memref<32x16xi32, strided<[?, 1], offset: ?>>
        %cast = memref.cast %subview : memref<32x16xi32, strided<[?, 1], offset: ?>> to memref<?x?xi32, strided<[?, 1], offset: ?>>
        %54 = arith.cmpi sle, %6, %c0 : index
        scf.if %54 {
          "instgem.config_ld"(%c0_i64, %c0_i64, %c1_i64, %c16_i64, %c1065353216_i64, %c64_i64) : (i64, i64, i64, i64, i64, i64) -> ()
          scf.for %arg7 = %c0 to %c2 step %c1 {
            %62 = arith.index_cast %arg7 : index to i64
            %63 = arith.muli %62, %c16_i64 : i64
            %64 = arith.ori %63, %c2147483648_i64 : i64
            "instgem.mvin"(%c0_i64, %64, %c16_i64, %c16_i64) : (i64, i64, i64, i64) -> ()
          } {gemmini.load_stream}
        }
        %base_buffer, %offset, %sizes:2, %strides:2 = memref.extract_strided_metadata %subview : memref<32x16xi32, strided<[?, 1], offset: ?>> -> memref<i32>, index, index, index, index, index
        %intptr = memref.extract_aligned_pointer_as_index %cast : memref<?x?xi32, strided<[?, 1], offset: ?>> -> index
        %55 = arith.index_cast %intptr : index to i64
        %56 = arith.index_cast %offset : index to i64
        %57 = arith.muli %56, %c4_i64 : i64
        %58 = arith.addi %55, %57 : i64
        %59 = arith.index_cast %strides#0 : index to i64
        %60 = arith.muli %59, %c4_i64 : i64
        "instgem.config_st"(%c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %60, %c1065353216_i64) : (i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> ()
        %61:2 = scf.for %arg7 = %c0 to %6 step %c1 iter_args(%arg8 = %c0, %arg9 = %c0) -> (index, index) {
          %62 = arith.addi %arg8, %c32 : index
          %63 = arith.minsi %62, %arg5 : index
          %64 = arith.subi %63, %arg8 : index
          %subview_2 = memref.subview %reinterpret_cast[%4, %arg8] [32, %64] [1, 1] : memref<?x?xi8, strided<[?, 1]>> to memref<32x?xi8, strided<[?, 1], offset: ?>>
          %cast_3 = memref.cast %subview_2 : memref<32x?xi8, strided<[?, 1], offset: ?>> to memref<?x?xi8, strided<[?, 1], offset: ?>>
          %65 = arith.index_cast %64 : index to i64
          %base_buffer_4, %offset_5, %sizes_6:2, %strides_7:2 = memref.extract_strided_metadata %subview_2 : memref<32x?xi8, strided<[?, 1], offset: ?>> -> memref<i8>, index, index, index, index, index
          %intptr_8 = memref.extract_aligned_pointer_as_index %cast_3 : memref<?x?xi8, strided<[?, 1], offset: ?>> -> index
          %66 = arith.index_cast %intptr_8 : index to i64
          %67 = arith.index_cast %offset_5 : index to i64
          %68 = arith.addi %66, %67 : i64
          %69 = arith.index_cast %strides_7#0 : index to i64
          "instgem.config_ld"(%c0_i64, %c0_i64, %c1_i64, %c16_i64, %c1065353216_i64, %69) : (i64, i64, i64, i64, i64, i64) -> ()
          scf.for %arg10 = %c0 to %c2 step %c1 {
            %97 = arith.index_cast %arg10 : index to i64
            %98 = arith.muli %97, %c16_i64 : i64
            %99 = arith.maxsi %98, %c0_i64 : i64
            %100 = arith.addi %98, %c16_i64 : i64
            %101 = arith.minsi %100, %c32_i64 : i64
            %102 = arith.subi %101, %99 : i64
            %103 = arith.muli %99, %69 : i64
            %104 = arith.addi %68, %103 : i64
            %105 = arith.muli %97, %c32_i64 : i64
            %106 = arith.subi %99, %98 : i64
            %107 = arith.addi %105, %106 : i64
            %108 = arith.minsi %65, %c64_i64 : i64
            "instgem.mvin"(%104, %107, %108, %102) : (i64, i64, i64, i64) -> ()
          } {gemmini.load_stream}
          %70 = arith.addi %arg9, %c32 : index
          %71 = arith.minsi %70, %arg5 : index
          %72 = arith.subi %71, %arg9 : index
          %subview_9 = memref.subview %reinterpret_cast_0[%arg9, %5] [%72, 16] [1, 1] : memref<?x?xi8, strided<[?, 1]>> to memref<?x16xi8, strided<[?, 1], offset: ?>>
          %cast_10 = memref.cast %subview_9 : memref<?x16xi8, strided<[?, 1], offset: ?>> to memref<?x?xi8, strided<[?, 1], offset: ?>>
          %73 = arith.index_cast %72 : index to i64
          %base_buffer_11, %offset_12, %sizes_13:2, %strides_14:2 = memref.extract_strided_metadata %subview_9 : memref<?x16xi8, strided<[?, 1], offset: ?>> -> memref<i8>, index, index, index, index, index
          %intptr_15 = memref.extract_aligned_pointer_as_index %cast_10 : memref<?x?xi8, strided<[?, 1], offset: ?>> -> index
          %74 = arith.index_cast %intptr_15 : index to i64
          %75 = arith.index_cast %offset_12 : index to i64
          %76 = arith.addi %74, %75 : i64
          %77 = arith.index_cast %strides_14#0 : index to i64
          "instgem.config_ld"(%c0_i64, %c0_i64, %c1_i64, %c16_i64, %c1065353216_i64, %77) : (i64, i64, i64, i64, i64, i64) -> ()
          %78 = arith.maxsi %73, %c0_i64 : i64
          %79 = arith.addi %78, %c15_i64 : i64
          %80 = arith.divui %79, %c16_i64 : i64
          %81 = arith.cmpi sgt, %73, %c0_i64 : i64
          %82 = arith.extui %81 : i1 to i64
          %83 = arith.muli %80, %82 : i64
          %84 = arith.index_cast %83 : i64 to index
          scf.for %arg10 = %c0 to %84 step %c1 {
            %97 = arith.index_cast %arg10 : index to i64
            %98 = arith.muli %97, %c16_i64 : i64
            %99 = arith.maxsi %98, %c0_i64 : i64
            %100 = arith.addi %98, %c16_i64 : i64
            %101 = arith.minsi %100, %73 : i64
            %102 = arith.subi %101, %99 : i64
            %103 = arith.muli %99, %77 : i64
            %104 = arith.addi %76, %103 : i64
            %105 = arith.addi %98, %c64_i64 : i64
            %106 = arith.subi %99, %98 : i64
            %107 = arith.addi %105, %106 : i64
            "instgem.mvin"(%104, %107, %c16_i64, %102) : (i64, i64, i64, i64) -> ()
          } {gemmini.load_stream}
          %85 = arith.maxsi %65, %c0_i64 : i64
          %86 = arith.minsi %85, %c32_i64 : i64
          %87 = arith.minsi %78, %c32_i64 : i64
          %88 = arith.minsi %86, %87 : i64
          %89 = arith.ceildivsi %88, %c16_i64 : i64
          %90 = arith.addi %arg7, %c1 : index
          %91 = arith.cmpi sge, %90, %6 : index
          %92 = arith.cmpi eq, %arg7, %c0 : index
          %93 = arith.divsi %88, %c16_i64 : i64
          %94 = arith.minsi %89, %93 : i64
          %95 = arith.maxsi %94, %c0_i64 : i64
          %96 = arith.ori %92, %91 : i1
          scf.if %96 {
            scf.if %91 {
              %97 = arith.select %92, %c0_i64, %c-1_i64 : i64
              %98 = arith.subi %89, %c1_i64 : i64
              %99 = arith.cmpi sgt, %95, %c0_i64 : i64
              scf.if %99 {
                %107 = arith.cmpi eq, %97, %c0_i64 : i64
                %108 = arith.select %107, %c2147483648_i64, %c3221225472_i64 : i64
                "instgem.preload"(%c64_i64, %c16_i64, %c16_i64, %108, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                "instgem.compute_preloaded"(%c0_i64, %c16_i64, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                %109 = arith.cmpi eq, %98, %c0_i64 : i64
                scf.if %109 {
                  %110 = arith.ori %108, %c16_i64 : i64
                  "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %110, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                  "instgem.compute_accumulated"(%c32_i64, %c16_i64, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                  "instgem.mvout"(%58, %c2684354560_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64) -> ()
                } else {
                  %110 = arith.ori %108, %c16_i64 : i64
                  "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %110, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                  "instgem.compute_accumulated"(%c32_i64, %c16_i64, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                }
              }
              %100 = arith.index_cast %95 : i64 to index
              scf.for %arg10 = %c1 to %100 step %c1 {
                %107 = arith.index_cast %arg10 : index to i64
                %108 = arith.muli %107, %c16_i64 : i64
                %109 = arith.addi %108, %c64_i64 : i64
                "instgem.preload"(%109, %c16_i64, %c16_i64, %c3221225472_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                "instgem.compute_preloaded"(%108, %c16_i64, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                %110 = arith.cmpi eq, %107, %98 : i64
                scf.if %110 {
                  "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %c3221225488_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                  %111 = arith.addi %108, %c32_i64 : i64
                  "instgem.compute_accumulated"(%111, %c16_i64, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                  "instgem.mvout"(%58, %c2684354560_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64) -> ()
                } else {
                  "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %c3221225488_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                  %111 = arith.addi %108, %c32_i64 : i64
                  "instgem.compute_accumulated"(%111, %c16_i64, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                }
              }
              %101 = arith.index_cast %89 : i64 to index
              scf.for %arg10 = %100 to %101 step %c1 {
                %107 = arith.index_cast %arg10 : index to i64
                %108 = arith.muli %107, %c16_i64 : i64
                %109 = arith.subi %86, %108 : i64
                %110 = arith.minsi %109, %c16_i64 : i64
                %111 = arith.subi %87, %108 : i64
                %112 = arith.minsi %111, %c16_i64 : i64
                %113 = arith.cmpi eq, %107, %97 : i64
                %114 = arith.select %113, %c2147483648_i64, %c3221225472_i64 : i64
                %115 = arith.addi %108, %c64_i64 : i64
                "instgem.preload"(%115, %c16_i64, %112, %114, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                "instgem.compute_preloaded"(%108, %110, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                %116 = arith.cmpi eq, %107, %98 : i64
                scf.if %116 {
                  %117 = arith.ori %114, %c16_i64 : i64
                  "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %117, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                  %118 = arith.addi %108, %c32_i64 : i64
                  "instgem.compute_accumulated"(%118, %110, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                  "instgem.mvout"(%58, %c2684354560_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64) -> ()
                } else {
                  %117 = arith.ori %114, %c16_i64 : i64
                  "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %117, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                  %118 = arith.addi %108, %c32_i64 : i64
                  "instgem.compute_accumulated"(%118, %110, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                }
              }
              %102 = arith.cmpi sgt, %89, %c0_i64 : i64
              %103 = arith.extui %102 : i1 to i64
              %104 = arith.index_cast %103 : i64 to index
              scf.for %arg10 = %104 to %c2 step %c1 {
                %107 = arith.index_cast %arg10 : index to i64
                %108 = arith.muli %107, %c16_i64 : i64
                %109 = arith.maxsi %108, %c0_i64 : i64
                %110 = arith.addi %108, %c16_i64 : i64
                %111 = arith.minsi %110, %c32_i64 : i64
                %112 = arith.subi %111, %109 : i64
                %113 = arith.muli %109, %60 : i64
                %114 = arith.addi %58, %113 : i64
                %115 = arith.ori %108, %c2684354560_i64 : i64
                %116 = arith.subi %109, %108 : i64
                %117 = arith.addi %115, %116 : i64
                "instgem.mvout"(%114, %117, %c16_i64, %112) : (i64, i64, i64, i64) -> ()
              }
              %105 = arith.cmpi eq, %89, %c0_i64 : i64
              %106 = arith.andi %92, %105 : i1
              scf.if %106 {
                scf.for %arg10 = %c0 to %c2 step %c1 {
                  %107 = arith.index_cast %arg10 : index to i64
                  %108 = arith.muli %107, %c16_i64 : i64
                  %109 = arith.ori %108, %c2147483648_i64 : i64
                  %110 = arith.cmpi sge, %107, %c2_i64 : i64
                  %111 = arith.ori %105, %110 : i1
                  scf.if %111 {
                    "instgem.mvin"(%c0_i64, %109, %c16_i64, %c16_i64) : (i64, i64, i64, i64) -> ()
                  }
                }
              }
            } else {
              %97 = arith.select %92, %c0_i64, %c-1_i64 : i64
              %98 = arith.cmpi sgt, %95, %c0_i64 : i64
              scf.if %98 {
                %103 = arith.cmpi eq, %97, %c0_i64 : i64
                %104 = arith.select %103, %c2147483648_i64, %c3221225472_i64 : i64
                "instgem.preload"(%c64_i64, %c16_i64, %c16_i64, %104, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                "instgem.compute_preloaded"(%c0_i64, %c16_i64, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                %105 = arith.ori %104, %c16_i64 : i64
                "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %105, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                "instgem.compute_accumulated"(%c32_i64, %c16_i64, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
              }
              %99 = arith.index_cast %95 : i64 to index
              scf.for %arg10 = %c1 to %99 step %c1 {
                %103 = arith.index_cast %arg10 : index to i64
                %104 = arith.muli %103, %c16_i64 : i64
                %105 = arith.addi %104, %c64_i64 : i64
                "instgem.preload"(%105, %c16_i64, %c16_i64, %c3221225472_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                "instgem.compute_preloaded"(%104, %c16_i64, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %c3221225488_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                %106 = arith.addi %104, %c32_i64 : i64
                "instgem.compute_accumulated"(%106, %c16_i64, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
              }
              %100 = arith.index_cast %89 : i64 to index
              scf.for %arg10 = %99 to %100 step %c1 {
                %103 = arith.index_cast %arg10 : index to i64
                %104 = arith.muli %103, %c16_i64 : i64
                %105 = arith.subi %86, %104 : i64
                %106 = arith.minsi %105, %c16_i64 : i64
                %107 = arith.subi %87, %104 : i64
                %108 = arith.minsi %107, %c16_i64 : i64
                %109 = arith.cmpi eq, %103, %97 : i64
                %110 = arith.select %109, %c2147483648_i64, %c3221225472_i64 : i64
                %111 = arith.addi %104, %c64_i64 : i64
                "instgem.preload"(%111, %c16_i64, %108, %110, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                "instgem.compute_preloaded"(%104, %106, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                %112 = arith.ori %110, %c16_i64 : i64
                "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %112, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                %113 = arith.addi %104, %c32_i64 : i64
                "instgem.compute_accumulated"(%113, %106, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
              }
              %101 = arith.cmpi eq, %89, %c0_i64 : i64
              %102 = arith.andi %92, %101 : i1
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
            }
          } else {
            %97 = arith.index_cast %95 : i64 to index
            scf.for %arg10 = %c0 to %97 step %c1 {
              %99 = arith.index_cast %arg10 : index to i64
              %100 = arith.muli %99, %c16_i64 : i64
              %101 = arith.addi %100, %c64_i64 : i64
              "instgem.preload"(%101, %c16_i64, %c16_i64, %c3221225472_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
              "instgem.compute_preloaded"(%100, %c16_i64, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
              "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %c3221225488_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
              %102 = arith.addi %100, %c32_i64 : i64
              "instgem.compute_accumulated"(%102, %c16_i64, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
            }
            %98 = arith.index_cast %89 : i64 to index
            scf.for %arg10 = %97 to %98 step %c1 {
              %99 = arith.index_cast %arg10 : index to i64
              %100 = arith.muli %99, %c16_i64 : i64
              %101 = arith.subi %86, %100 : i64
              %102 = arith.minsi %101, %c16_i64 : i64
              %103 = arith.subi %87, %100 : i64
              %104 = arith.minsi %103, %c16_i64 : i64
              %105 = arith.addi %100, %c64_i64 : i64
              "instgem.preload"(%105, %c16_i64, %104, %c3221225472_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
              "instgem.compute_preloaded"(%100, %102, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
              "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %c3221225488_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
              %106 = arith.addi %100, %c32_i64 : i64
              "instgem.compute_accumulated"(%106, %102, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
            }
          }
          scf.yield %62, %70 : index, index
        }
        scf.if %54 {
          "instgem.config_st"(%c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %60, %c1065353216_i64) : (i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> ()
          scf.for %arg7 = %c0 to %c2 step %c1 {
            %62 = arith.index_cast %arg7 : index to i64
            %63 = arith.remsi %62, %c2_i64 : i64
            %64 = arith.divsi %62, %c2_i64 : i64
            %65 = arith.muli %63, %c16_i64 : i64
            %66 = arith.maxsi %65, %c0_i64 : i64
            %67 = arith.addi %65, %c16_i64 : i64
            %68 = arith.minsi %67, %c32_i64 : i64
            %69 = arith.subi %68, %66 : i64
            %70 = arith.muli %66, %60 : i64
            %71 = arith.addi %58, %70 : i64
            %72 = arith.muli %64, %c64_i64 : i64
            %73 = arith.addi %71, %72 : i64
            %74 = arith.muli %64, %c16_i64 : i64
            %75 = arith.addi %65, %74 : i64
            %76 = arith.ori %75, %c2684354560_i64 : i64
            %77 = arith.subi %66, %65 : i64
            %78 = arith.addi %76, %77 : i64
            %79 = arith.subi %c16_i64, %74 : i64
            %80 = arith.minsi %79, %c16_i64 : i64
            "instgem.mvout"(%73, %78, %80, %69) : (i64, i64, i64, i64) -> ()
          }
        }
      } else {
        %reinterpret_cast = memref.reinterpret_cast %arg0 to offset: [0], sizes: [%arg3, %arg5], strides: [%arg5, 1] : memref<?xi8> to memref<?x?xi8, strided<[?, 1]>>
        %reinterpret_cast_0 = memref.reinterpret_cast %arg1 to offset: [0], sizes: [%arg5, %arg4], strides: [%arg4, 1] : memref<?xi8> to memref<?x?xi8, strided<[?, 1]>>
        %reinterpret_cast_1 = memref.reinterpret_cast %arg2 to offset: [0], sizes: [%arg3, %arg4], strides: [%arg4, 1] : memref<?xi32> to memref<?x?xi32, strided<[?, 1]>>
        %54 = arith.maxsi %13, %c0 : index
        %55 = arith.minsi %54, %arg3 : index
        %56 = arith.maxsi %9, %c0 : index
        %57 = arith.minsi %56, %c32 : index
        %58 = arith.subi %55, %8 : index
        %59 = arith.maxsi %14, %c0 : index
        %60 = arith.minsi %59, %arg4 : index
        %61 = arith.maxsi %12, %c0 : index
        %62 = arith.minsi %61, %c16 : index
        %63 = arith.subi %60, %11 : index
        %64 = arith.cmpi sgt, %62, %c0 : index
        scf.if %64 {
          func.call @baco_boundary_error(%c48_i64, %c9_i64) : (i64, i64) -> ()
        }
        %subview = memref.subview %reinterpret_cast_1[%8, %11] [%58, %63] [1, 1] : memref<?x?xi32, strided<[?, 1]>> to memref<?x?xi32, strided<[?, 1], offset: ?>>
        %65 = arith.cmpi sle, %6, %c0 : index
        scf.if %65 {
          "instgem.config_ld"(%c0_i64, %c0_i64, %c1_i64, %c16_i64, %c1065353216_i64, %c64_i64) : (i64, i64, i64, i64, i64, i64) -> ()
          scf.for %arg7 = %c0 to %c2 step %c1 {
            %87 = arith.index_cast %arg7 : index to i64
            %88 = arith.muli %87, %c16_i64 : i64
            %89 = arith.ori %88, %c2147483648_i64 : i64
            "instgem.mvin"(%c0_i64, %89, %c16_i64, %c16_i64) : (i64, i64, i64, i64) -> ()
          } {gemmini.load_stream}
        }
        %66 = arith.index_cast %57 : index to i64
        %67 = arith.index_cast %58 : index to i64
        %68 = arith.index_cast %63 : index to i64
        %base_buffer, %offset, %sizes:2, %strides:2 = memref.extract_strided_metadata %subview : memref<?x?xi32, strided<[?, 1], offset: ?>> -> memref<i32>, index, index, index, index, index
        %intptr = memref.extract_aligned_pointer_as_index %subview : memref<?x?xi32, strided<[?, 1], offset: ?>> -> index
        %69 = arith.index_cast %intptr : index to i64
        %70 = arith.index_cast %offset : index to i64
        %71 = arith.muli %70, %c4_i64 : i64
        %72 = arith.addi %69, %71 : i64
        %73 = arith.index_cast %strides#0 : index to i64
        %74 = arith.muli %73, %c4_i64 : i64
        "instgem.config_st"(%c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %74, %c1065353216_i64) : (i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> ()
        %75 = arith.maxsi %66, %c0_i64 : i64
        %76 = arith.divui %75, %c16_i64 : i64
        %77 = arith.addi %66, %67 : i64
        %78 = arith.maxsi %77, %c0_i64 : i64
        %79 = arith.addi %78, %c15_i64 : i64
        %80 = arith.divui %79, %c16_i64 : i64
        %81 = arith.subi %80, %76 : i64
        %82 = arith.cmpi sgt, %67, %c0_i64 : i64
        %83 = arith.extui %82 : i1 to i64
        %84 = arith.muli %81, %83 : i64
        %85 = arith.ceildivsi %68, %c16_i64 : i64
        %86:2 = scf.for %arg7 = %c0 to %6 step %c1 iter_args(%arg8 = %c0, %arg9 = %c0) -> (index, index) {
          %87 = arith.maxsi %arg8, %c0 : index
          %88 = arith.minsi %87, %arg5 : index
          %89 = arith.addi %arg8, %c32 : index
          %90 = arith.maxsi %89, %c0 : index
          %91 = arith.minsi %90, %arg5 : index
          %92 = arith.subi %88, %arg8 : index
          %93 = arith.maxsi %92, %c0 : index
          %94 = arith.minsi %93, %c32 : index
          %95 = arith.subi %91, %88 : index
          %96 = arith.cmpi sgt, %94, %c0 : index
          scf.if %96 {
            func.call @baco_boundary_error(%c41_i64, %c27_i64) : (i64, i64) -> ()
          }
          %subview_2 = memref.subview %reinterpret_cast[%8, %88] [%58, %95] [1, 1] : memref<?x?xi8, strided<[?, 1]>> to memref<?x?xi8, strided<[?, 1], offset: ?>>
          %97 = arith.index_cast %95 : index to i64
          %base_buffer_3, %offset_4, %sizes_5:2, %strides_6:2 = memref.extract_strided_metadata %subview_2 : memref<?x?xi8, strided<[?, 1], offset: ?>> -> memref<i8>, index, index, index, index, index
          %intptr_7 = memref.extract_aligned_pointer_as_index %subview_2 : memref<?x?xi8, strided<[?, 1], offset: ?>> -> index
          %98 = arith.index_cast %intptr_7 : index to i64
          %99 = arith.index_cast %offset_4 : index to i64
          %100 = arith.addi %98, %99 : i64
          %101 = arith.index_cast %strides_6#0 : index to i64
          "instgem.config_ld"(%c0_i64, %c0_i64, %c1_i64, %c16_i64, %c1065353216_i64, %101) : (i64, i64, i64, i64, i64, i64) -> ()
          %102 = arith.index_cast %84 : i64 to index
          scf.for %arg10 = %c0 to %102 step %c1 {
            %165 = arith.index_cast %arg10 : index to i64
            %166 = arith.addi %76, %165 : i64
            %167 = arith.muli %166, %c16_i64 : i64
            %168 = arith.maxsi %167, %66 : i64
            %169 = arith.addi %167, %c16_i64 : i64
            %170 = arith.minsi %169, %77 : i64
            %171 = arith.subi %170, %168 : i64
            %172 = arith.subi %168, %66 : i64
            %173 = arith.muli %172, %101 : i64
            %174 = arith.addi %100, %173 : i64
            %175 = arith.muli %166, %c32_i64 : i64
            %176 = arith.subi %168, %167 : i64
            %177 = arith.addi %175, %176 : i64
            %178 = arith.minsi %97, %c64_i64 : i64
            "instgem.mvin"(%174, %177, %178, %171) : (i64, i64, i64, i64) -> ()
          } {gemmini.load_stream}
          %103 = arith.addi %75, %c15_i64 : i64
          %104 = arith.divui %103, %c16_i64 : i64
          %105 = arith.cmpi sgt, %66, %c0_i64 : i64
          %106 = arith.extui %105 : i1 to i64
          %107 = arith.muli %104, %106 : i64
          %108 = arith.index_cast %107 : i64 to index
          scf.for %arg10 = %c0 to %108 step %c1 {
            %165 = arith.index_cast %arg10 : index to i64
            %166 = arith.muli %165, %c16_i64 : i64
            %167 = arith.maxsi %166, %c0_i64 : i64
            %168 = arith.addi %166, %c16_i64 : i64
            %169 = arith.minsi %168, %66 : i64
            %170 = arith.subi %169, %167 : i64
            %171 = arith.muli %165, %c32_i64 : i64
            %172 = arith.subi %167, %166 : i64
            %173 = arith.addi %171, %172 : i64
            %174 = arith.minsi %97, %c64_i64 : i64
            "instgem.mvin"(%c0_i64, %173, %174, %170) : (i64, i64, i64, i64) -> ()
          } {gemmini.load_stream}
          %109 = arith.maxsi %arg9, %c0 : index
          %110 = arith.minsi %109, %arg5 : index
          %111 = arith.addi %arg9, %c32 : index
          %112 = arith.maxsi %111, %c0 : index
          %113 = arith.minsi %112, %arg5 : index
          %114 = arith.subi %110, %arg9 : index
          %115 = arith.maxsi %114, %c0 : index
          %116 = arith.minsi %115, %c32 : index
          %117 = arith.subi %113, %110 : index
          scf.if %64 {
            func.call @baco_boundary_error(%c41_i64, %c62_i64) : (i64, i64) -> ()
          }
          %subview_8 = memref.subview %reinterpret_cast_0[%110, %11] [%117, %63] [1, 1] : memref<?x?xi8, strided<[?, 1]>> to memref<?x?xi8, strided<[?, 1], offset: ?>>
          %118 = arith.index_cast %116 : index to i64
          %119 = arith.index_cast %117 : index to i64
          %120 = arith.addi %118, %119 : i64
          %base_buffer_9, %offset_10, %sizes_11:2, %strides_12:2 = memref.extract_strided_metadata %subview_8 : memref<?x?xi8, strided<[?, 1], offset: ?>> -> memref<i8>, index, index, index, index, index
          %intptr_13 = memref.extract_aligned_pointer_as_index %subview_8 : memref<?x?xi8, strided<[?, 1], offset: ?>> -> index
          %121 = arith.index_cast %intptr_13 : index to i64
          %122 = arith.index_cast %offset_10 : index to i64
          %123 = arith.addi %121, %122 : i64
          %124 = arith.index_cast %strides_12#0 : index to i64
          "instgem.config_ld"(%c0_i64, %c0_i64, %c1_i64, %c16_i64, %c1065353216_i64, %124) : (i64, i64, i64, i64, i64, i64) -> ()
          %125 = arith.maxsi %118, %c0_i64 : i64
          %126 = arith.divui %125, %c16_i64 : i64
          %127 = arith.maxsi %120, %c0_i64 : i64
          %128 = arith.addi %127, %c15_i64 : i64
          %129 = arith.divui %128, %c16_i64 : i64
          %130 = arith.subi %129, %126 : i64
          %131 = arith.cmpi sgt, %119, %c0_i64 : i64
          %132 = arith.extui %131 : i1 to i64
          %133 = arith.muli %130, %132 : i64
          %134 = arith.index_cast %133 : i64 to index
          scf.for %arg10 = %c0 to %134 step %c1 {
            %165 = arith.index_cast %arg10 : index to i64
            %166 = arith.addi %126, %165 : i64
            %167 = arith.muli %166, %c16_i64 : i64
            %168 = arith.maxsi %167, %118 : i64
            %169 = arith.addi %167, %c16_i64 : i64
            %170 = arith.minsi %169, %120 : i64
            %171 = arith.subi %170, %168 : i64
            %172 = arith.subi %168, %118 : i64
            %173 = arith.muli %172, %124 : i64
            %174 = arith.addi %123, %173 : i64
            %175 = arith.addi %167, %c64_i64 : i64
            %176 = arith.subi %168, %167 : i64
            %177 = arith.addi %175, %176 : i64
            %178 = arith.minsi %68, %c64_i64 : i64
            "instgem.mvin"(%174, %177, %178, %171) : (i64, i64, i64, i64) -> ()
          } {gemmini.load_stream}
          %135 = arith.addi %125, %c15_i64 : i64
          %136 = arith.divui %135, %c16_i64 : i64
          %137 = arith.cmpi sgt, %118, %c0_i64 : i64
          %138 = arith.extui %137 : i1 to i64
          %139 = arith.muli %136, %138 : i64
          %140 = arith.index_cast %139 : i64 to index
          scf.for %arg10 = %c0 to %140 step %c1 {
            %165 = arith.index_cast %arg10 : index to i64
            %166 = arith.muli %165, %c16_i64 : i64
            %167 = arith.maxsi %166, %c0_i64 : i64
            %168 = arith.addi %166, %c16_i64 : i64
            %169 = arith.minsi %168, %118 : i64
            %170 = arith.subi %169, %167 : i64
            %171 = arith.addi %166, %c64_i64 : i64
            %172 = arith.subi %167, %166 : i64
            %173 = arith.addi %171, %172 : i64
            %174 = arith.minsi %68, %c64_i64 : i64
            "instgem.mvin"(%c0_i64, %173, %174, %170) : (i64, i64, i64, i64) -> ()
          } {gemmini.load_stream}
          %141 = arith.minsi %78, %c32_i64 : i64
          %142 = arith.maxsi %97, %c0_i64 : i64
          %143 = arith.minsi %142, %c32_i64 : i64
          %144 = arith.minsi %127, %c32_i64 : i64
          %145 = arith.maxsi %68, %c0_i64 : i64
          %146 = arith.minsi %145, %c16_i64 : i64
          %147 = arith.ceildivsi %141, %c16_i64 : i64
          %148 = arith.ceildivsi %146, %c16_i64 : i64
          %149 = arith.minsi %143, %144 : i64
          %150 = arith.ceildivsi %149, %c16_i64 : i64
          %151 = arith.addi %arg7, %c1 : index
          %152 = arith.cmpi sge, %151, %6 : index
          %153 = arith.cmpi eq, %arg7, %c0 : index
          %154 = arith.cmpi sgt, %147, %c0_i64 : i64
          %155 = arith.select %154, %148, %c0_i64 : i64
          %156 = arith.index_cast %155 : i64 to index
          %157 = arith.divsi %149, %c16_i64 : i64
          %158 = arith.minsi %150, %157 : i64
          %159 = arith.maxsi %158, %c0_i64 : i64
          %160 = arith.divsi %141, %c16_i64 : i64
          %161 = arith.minsi %147, %160 : i64
          %162 = arith.maxsi %161, %c1_i64 : i64
          %163 = arith.minsi %141, %c16_i64 : i64
          %164 = arith.ori %153, %152 : i1
          scf.if %164 {
            scf.if %152 {
              %165 = arith.maxsi %150, %c1_i64 : i64
              %166 = arith.ceildivsi %84, %165 : i64
              %167 = arith.select %153, %c0_i64, %c-1_i64 : i64
              scf.for %arg10 = %c0 to %156 step %c1 {
                %177 = arith.index_cast %arg10 : index to i64
                %178 = arith.subi %177, %c1_i64 : i64
                %179 = arith.cmpi sge, %178, %c0_i64 : i64
                %180 = arith.cmpi slt, %178, %85 : i64
                %181 = arith.andi %179, %180 : i1
                %182 = arith.subi %155, %c1_i64 : i64
                %183 = arith.cmpi eq, %177, %182 : i64
                %184 = arith.cmpi slt, %177, %85 : i64
                %185 = arith.andi %183, %184 : i1
                %186 = arith.subi %150, %c1_i64 : i64
                %187 = arith.select %185, %186, %c-1_i64 : i64
                %188 = arith.muli %177, %c16_i64 : i64
                %189 = arith.subi %146, %188 : i64
                %190 = arith.minsi %189, %c16_i64 : i64
                %191 = arith.cmpi sgt, %159, %c0_i64 : i64
                scf.if %191 {
                  scf.if %181 {
                    %207 = arith.minsi %84, %c0_i64 : i64
                    %208 = arith.addi %207, %166 : i64
                    %209 = arith.minsi %208, %84 : i64
                    %210 = arith.index_cast %207 : i64 to index
                    %211 = arith.index_cast %209 : i64 to index
                    scf.for %arg11 = %210 to %211 step %c1 {
                      %212 = arith.index_cast %arg11 : index to i64
                      %213 = arith.addi %76, %212 : i64
                      %214 = arith.muli %213, %c16_i64 : i64
                      %215 = arith.maxsi %214, %66 : i64
                      %216 = arith.addi %214, %c16_i64 : i64
                      %217 = arith.minsi %216, %77 : i64
                      %218 = arith.subi %217, %215 : i64
                      %219 = arith.subi %215, %66 : i64
                      %220 = arith.muli %219, %74 : i64
                      %221 = arith.addi %72, %220 : i64
                      %222 = arith.muli %178, %c64_i64 : i64
                      %223 = arith.addi %221, %222 : i64
                      %224 = arith.muli %178, %c16_i64 : i64
                      %225 = arith.addi %214, %224 : i64
                      %226 = arith.ori %225, %c2684354560_i64 : i64
                      %227 = arith.subi %215, %214 : i64
                      %228 = arith.addi %226, %227 : i64
                      %229 = arith.subi %68, %224 : i64
                      %230 = arith.minsi %229, %c16_i64 : i64
                      "instgem.mvout"(%223, %228, %230, %218) : (i64, i64, i64, i64) -> ()
                    }
                  }
                  %200 = arith.cmpi eq, %167, %c0_i64 : i64
                  %201 = arith.select %200, %c2147483648_i64, %c3221225472_i64 : i64
                  %202 = arith.ori %188, %201 : i64
                  %203 = arith.select %200, %c16_i64, %163 : i64
                  %204 = arith.select %200, %c16_i64, %190 : i64
                  %205 = arith.addi %188, %c64_i64 : i64
                  "instgem.preload"(%205, %190, %c16_i64, %202, %204, %203) : (i64, i64, i64, i64, i64, i64) -> ()
                  "instgem.compute_preloaded"(%c0_i64, %c16_i64, %163, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                  %206 = arith.cmpi eq, %187, %c0_i64 : i64
                  scf.if %206 {
                    %207 = arith.index_cast %162 : i64 to index
                    scf.for %arg11 = %c1 to %207 step %c1 {
                      %209 = arith.index_cast %arg11 : index to i64
                      %210 = arith.muli %209, %c16_i64 : i64
                      %211 = arith.addi %210, %188 : i64
                      %212 = arith.ori %211, %201 : i64
                      "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %212, %204, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                      %213 = arith.muli %209, %c32_i64 : i64
                      "instgem.compute_accumulated"(%213, %c16_i64, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                      %214 = arith.subi %209, %c1_i64 : i64
                      %215 = arith.subi %214, %76 : i64
                      %216 = arith.cmpi sge, %215, %c0_i64 : i64
                      %217 = arith.cmpi slt, %215, %84 : i64
                      %218 = arith.andi %216, %217 : i1
                      scf.if %218 {
                        %219 = arith.muli %214, %c16_i64 : i64
                        %220 = arith.maxsi %219, %66 : i64
                        %221 = arith.addi %219, %c16_i64 : i64
                        %222 = arith.minsi %221, %77 : i64
                        %223 = arith.subi %222, %220 : i64
                        %224 = arith.subi %220, %66 : i64
                        %225 = arith.muli %224, %74 : i64
                        %226 = arith.addi %72, %225 : i64
                        %227 = arith.muli %177, %c64_i64 : i64
                        %228 = arith.addi %226, %227 : i64
                        %229 = arith.addi %219, %188 : i64
                        %230 = arith.ori %229, %c2684354560_i64 : i64
                        %231 = arith.subi %220, %219 : i64
                        %232 = arith.addi %230, %231 : i64
                        %233 = arith.subi %68, %188 : i64
                        %234 = arith.minsi %233, %c16_i64 : i64
                        "instgem.mvout"(%228, %232, %234, %223) : (i64, i64, i64, i64) -> ()
                      }
                    }
                    %208 = arith.index_cast %147 : i64 to index
                    scf.for %arg11 = %207 to %208 step %c1 {
                      %209 = arith.index_cast %arg11 : index to i64
                      %210 = arith.muli %209, %c16_i64 : i64
                      %211 = arith.subi %141, %210 : i64
                      %212 = arith.minsi %211, %c16_i64 : i64
                      %213 = arith.addi %210, %188 : i64
                      %214 = arith.ori %213, %201 : i64
                      %215 = arith.select %200, %c16_i64, %212 : i64
                      "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %214, %204, %215) : (i64, i64, i64, i64, i64, i64) -> ()
                      %216 = arith.muli %209, %c32_i64 : i64
                      "instgem.compute_accumulated"(%216, %c16_i64, %212, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                      %217 = arith.subi %209, %c1_i64 : i64
                      %218 = arith.subi %217, %76 : i64
                      %219 = arith.cmpi sge, %218, %c0_i64 : i64
                      %220 = arith.cmpi slt, %218, %84 : i64
                      %221 = arith.andi %219, %220 : i1
                      scf.if %221 {
                        %222 = arith.muli %217, %c16_i64 : i64
                        %223 = arith.maxsi %222, %66 : i64
                        %224 = arith.addi %222, %c16_i64 : i64
                        %225 = arith.minsi %224, %77 : i64
                        %226 = arith.subi %225, %223 : i64
                        %227 = arith.subi %223, %66 : i64
                        %228 = arith.muli %227, %74 : i64
                        %229 = arith.addi %72, %228 : i64
                        %230 = arith.muli %177, %c64_i64 : i64
                        %231 = arith.addi %229, %230 : i64
                        %232 = arith.addi %222, %188 : i64
                        %233 = arith.ori %232, %c2684354560_i64 : i64
                        %234 = arith.subi %223, %222 : i64
                        %235 = arith.addi %233, %234 : i64
                        %236 = arith.subi %68, %188 : i64
                        %237 = arith.minsi %236, %c16_i64 : i64
                        "instgem.mvout"(%231, %235, %237, %226) : (i64, i64, i64, i64) -> ()
                      }
                    }
                  } else {
                    %207 = arith.index_cast %162 : i64 to index
                    scf.for %arg11 = %c1 to %207 step %c1 {
                      %209 = arith.index_cast %arg11 : index to i64
                      %210 = arith.muli %209, %c16_i64 : i64
                      %211 = arith.addi %210, %188 : i64
                      %212 = arith.ori %211, %201 : i64
                      "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %212, %204, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                      %213 = arith.muli %209, %c32_i64 : i64
                      "instgem.compute_accumulated"(%213, %c16_i64, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                    }
                    %208 = arith.index_cast %147 : i64 to index
                    scf.for %arg11 = %207 to %208 step %c1 {
                      %209 = arith.index_cast %arg11 : index to i64
                      %210 = arith.muli %209, %c16_i64 : i64
                      %211 = arith.subi %141, %210 : i64
                      %212 = arith.minsi %211, %c16_i64 : i64
                      %213 = arith.addi %210, %188 : i64
                      %214 = arith.ori %213, %201 : i64
                      %215 = arith.select %200, %c16_i64, %212 : i64
                      "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %214, %204, %215) : (i64, i64, i64, i64, i64, i64) -> ()
                      %216 = arith.muli %209, %c32_i64 : i64
                      "instgem.compute_accumulated"(%216, %c16_i64, %212, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                    }
                  }
                }
                %192 = arith.index_cast %159 : i64 to index
                scf.for %arg11 = %c1 to %192 step %c1 {
                  %200 = arith.index_cast %arg11 : index to i64
                  scf.if %181 {
                    %206 = arith.muli %200, %166 : i64
                    %207 = arith.minsi %206, %84 : i64
                    %208 = arith.addi %207, %166 : i64
                    %209 = arith.minsi %208, %84 : i64
                    %210 = arith.index_cast %207 : i64 to index
                    %211 = arith.index_cast %209 : i64 to index
                    scf.for %arg12 = %210 to %211 step %c1 {
                      %212 = arith.index_cast %arg12 : index to i64
                      %213 = arith.addi %76, %212 : i64
                      %214 = arith.muli %213, %c16_i64 : i64
                      %215 = arith.maxsi %214, %66 : i64
                      %216 = arith.addi %214, %c16_i64 : i64
                      %217 = arith.minsi %216, %77 : i64
                      %218 = arith.subi %217, %215 : i64
                      %219 = arith.subi %215, %66 : i64
                      %220 = arith.muli %219, %74 : i64
                      %221 = arith.addi %72, %220 : i64
                      %222 = arith.muli %178, %c64_i64 : i64
                      %223 = arith.addi %221, %222 : i64
                      %224 = arith.muli %178, %c16_i64 : i64
                      %225 = arith.addi %214, %224 : i64
                      %226 = arith.ori %225, %c2684354560_i64 : i64
                      %227 = arith.subi %215, %214 : i64
                      %228 = arith.addi %226, %227 : i64
                      %229 = arith.subi %68, %224 : i64
                      %230 = arith.minsi %229, %c16_i64 : i64
                      "instgem.mvout"(%223, %228, %230, %218) : (i64, i64, i64, i64) -> ()
                    }
                  }
                  %201 = arith.ori %188, %c3221225472_i64 : i64
                  %202 = arith.muli %200, %c16_i64 : i64
                  %203 = arith.addi %202, %188 : i64
                  %204 = arith.addi %203, %c64_i64 : i64
                  "instgem.preload"(%204, %190, %c16_i64, %201, %190, %163) : (i64, i64, i64, i64, i64, i64) -> ()
                  "instgem.compute_preloaded"(%202, %c16_i64, %163, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                  %205 = arith.cmpi eq, %200, %187 : i64
                  scf.if %205 {
                    %206 = arith.index_cast %162 : i64 to index
                    scf.for %arg12 = %c1 to %206 step %c1 {
                      %208 = arith.index_cast %arg12 : index to i64
                      %209 = arith.muli %208, %c16_i64 : i64
                      %210 = arith.addi %209, %188 : i64
                      %211 = arith.ori %210, %c3221225472_i64 : i64
                      "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %211, %190, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                      %212 = arith.muli %208, %c32_i64 : i64
                      %213 = arith.addi %212, %202 : i64
                      "instgem.compute_accumulated"(%213, %c16_i64, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                      %214 = arith.subi %208, %c1_i64 : i64
                      %215 = arith.subi %214, %76 : i64
                      %216 = arith.cmpi sge, %215, %c0_i64 : i64
                      %217 = arith.cmpi slt, %215, %84 : i64
                      %218 = arith.andi %216, %217 : i1
                      scf.if %218 {
                        %219 = arith.muli %214, %c16_i64 : i64
                        %220 = arith.maxsi %219, %66 : i64
                        %221 = arith.addi %219, %c16_i64 : i64
                        %222 = arith.minsi %221, %77 : i64
                        %223 = arith.subi %222, %220 : i64
                        %224 = arith.subi %220, %66 : i64
                        %225 = arith.muli %224, %74 : i64
                        %226 = arith.addi %72, %225 : i64
                        %227 = arith.muli %177, %c64_i64 : i64
                        %228 = arith.addi %226, %227 : i64
                        %229 = arith.addi %219, %188 : i64
                        %230 = arith.ori %229, %c2684354560_i64 : i64
                        %231 = arith.subi %220, %219 : i64
                        %232 = arith.addi %230, %231 : i64
                        %233 = arith.subi %68, %188 : i64
                        %234 = arith.minsi %233, %c16_i64 : i64
                        "instgem.mvout"(%228, %232, %234, %223) : (i64, i64, i64, i64) -> ()
                      }
                    }
                    %207 = arith.index_cast %147 : i64 to index
                    scf.for %arg12 = %206 to %207 step %c1 {
                      %208 = arith.index_cast %arg12 : index to i64
                      %209 = arith.muli %208, %c16_i64 : i64
                      %210 = arith.subi %141, %209 : i64
                      %211 = arith.minsi %210, %c16_i64 : i64
                      %212 = arith.addi %209, %188 : i64
                      %213 = arith.ori %212, %c3221225472_i64 : i64
                      "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %213, %190, %211) : (i64, i64, i64, i64, i64, i64) -> ()
                      %214 = arith.muli %208, %c32_i64 : i64
                      %215 = arith.addi %214, %202 : i64
                      "instgem.compute_accumulated"(%215, %c16_i64, %211, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                      %216 = arith.subi %208, %c1_i64 : i64
                      %217 = arith.subi %216, %76 : i64
                      %218 = arith.cmpi sge, %217, %c0_i64 : i64
                      %219 = arith.cmpi slt, %217, %84 : i64
                      %220 = arith.andi %218, %219 : i1
                      scf.if %220 {
                        %221 = arith.muli %216, %c16_i64 : i64
                        %222 = arith.maxsi %221, %66 : i64
                        %223 = arith.addi %221, %c16_i64 : i64
                        %224 = arith.minsi %223, %77 : i64
                        %225 = arith.subi %224, %222 : i64
                        %226 = arith.subi %222, %66 : i64
                        %227 = arith.muli %226, %74 : i64
                        %228 = arith.addi %72, %227 : i64
                        %229 = arith.muli %177, %c64_i64 : i64
                        %230 = arith.addi %228, %229 : i64
                        %231 = arith.addi %221, %188 : i64
                        %232 = arith.ori %231, %c2684354560_i64 : i64
                        %233 = arith.subi %222, %221 : i64
                        %234 = arith.addi %232, %233 : i64
                        %235 = arith.subi %68, %188 : i64
                        %236 = arith.minsi %235, %c16_i64 : i64
                        "instgem.mvout"(%230, %234, %236, %225) : (i64, i64, i64, i64) -> ()
                      }
                    }
                  } else {
                    %206 = arith.index_cast %162 : i64 to index
                    scf.for %arg12 = %c1 to %206 step %c1 {
                      %208 = arith.index_cast %arg12 : index to i64
                      %209 = arith.muli %208, %c16_i64 : i64
                      %210 = arith.addi %209, %188 : i64
                      %211 = arith.ori %210, %c3221225472_i64 : i64
                      "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %211, %190, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                      %212 = arith.muli %208, %c32_i64 : i64
                      %213 = arith.addi %212, %202 : i64
                      "instgem.compute_accumulated"(%213, %c16_i64, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                    }
                    %207 = arith.index_cast %147 : i64 to index
                    scf.for %arg12 = %206 to %207 step %c1 {
                      %208 = arith.index_cast %arg12 : index to i64
                      %209 = arith.muli %208, %c16_i64 : i64
                      %210 = arith.subi %141, %209 : i64
                      %211 = arith.minsi %210, %c16_i64 : i64
                      %212 = arith.addi %209, %188 : i64
                      %213 = arith.ori %212, %c3221225472_i64 : i64
                      "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %213, %190, %211) : (i64, i64, i64, i64, i64, i64) -> ()
                      %214 = arith.muli %208, %c32_i64 : i64
                      %215 = arith.addi %214, %202 : i64
                      "instgem.compute_accumulated"(%215, %c16_i64, %211, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                    }
                  }
                }
                %193 = arith.index_cast %150 : i64 to index
                scf.for %arg11 = %192 to %193 step %c1 {
                  %200 = arith.index_cast %arg11 : index to i64
                  %201 = arith.muli %200, %c16_i64 : i64
                  %202 = arith.subi %143, %201 : i64
                  %203 = arith.minsi %202, %c16_i64 : i64
                  %204 = arith.subi %144, %201 : i64
                  %205 = arith.minsi %204, %c16_i64 : i64
                  scf.if %181 {
                    %214 = arith.muli %200, %166 : i64
                    %215 = arith.minsi %214, %84 : i64
                    %216 = arith.addi %215, %166 : i64
                    %217 = arith.minsi %216, %84 : i64
                    %218 = arith.index_cast %215 : i64 to index
                    %219 = arith.index_cast %217 : i64 to index
                    scf.for %arg12 = %218 to %219 step %c1 {
                      %220 = arith.index_cast %arg12 : index to i64
                      %221 = arith.addi %76, %220 : i64
                      %222 = arith.muli %221, %c16_i64 : i64
                      %223 = arith.maxsi %222, %66 : i64
                      %224 = arith.addi %222, %c16_i64 : i64
                      %225 = arith.minsi %224, %77 : i64
                      %226 = arith.subi %225, %223 : i64
                      %227 = arith.subi %223, %66 : i64
                      %228 = arith.muli %227, %74 : i64
                      %229 = arith.addi %72, %228 : i64
                      %230 = arith.muli %178, %c64_i64 : i64
                      %231 = arith.addi %229, %230 : i64
                      %232 = arith.muli %178, %c16_i64 : i64
                      %233 = arith.addi %222, %232 : i64
                      %234 = arith.ori %233, %c2684354560_i64 : i64
                      %235 = arith.subi %223, %222 : i64
                      %236 = arith.addi %234, %235 : i64
                      %237 = arith.subi %68, %232 : i64
                      %238 = arith.minsi %237, %c16_i64 : i64
                      "instgem.mvout"(%231, %236, %238, %226) : (i64, i64, i64, i64) -> ()
                    }
                  }
                  %206 = arith.cmpi eq, %200, %167 : i64
                  %207 = arith.select %206, %c2147483648_i64, %c3221225472_i64 : i64
                  %208 = arith.ori %188, %207 : i64
                  %209 = arith.select %206, %c16_i64, %163 : i64
                  %210 = arith.select %206, %c16_i64, %190 : i64
                  %211 = arith.addi %201, %188 : i64
                  %212 = arith.addi %211, %c64_i64 : i64
                  "instgem.preload"(%212, %190, %205, %208, %210, %209) : (i64, i64, i64, i64, i64, i64) -> ()
                  "instgem.compute_preloaded"(%201, %203, %163, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                  %213 = arith.cmpi eq, %200, %187 : i64
                  scf.if %213 {
                    %214 = arith.index_cast %162 : i64 to index
                    scf.for %arg12 = %c1 to %214 step %c1 {
                      %216 = arith.index_cast %arg12 : index to i64
                      %217 = arith.muli %216, %c16_i64 : i64
                      %218 = arith.addi %217, %188 : i64
                      %219 = arith.ori %218, %207 : i64
                      "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %219, %210, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                      %220 = arith.muli %216, %c32_i64 : i64
                      %221 = arith.addi %220, %201 : i64
                      "instgem.compute_accumulated"(%221, %203, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                      %222 = arith.subi %216, %c1_i64 : i64
                      %223 = arith.subi %222, %76 : i64
                      %224 = arith.cmpi sge, %223, %c0_i64 : i64
                      %225 = arith.cmpi slt, %223, %84 : i64
                      %226 = arith.andi %224, %225 : i1
                      scf.if %226 {
                        %227 = arith.muli %222, %c16_i64 : i64
                        %228 = arith.maxsi %227, %66 : i64
                        %229 = arith.addi %227, %c16_i64 : i64
                        %230 = arith.minsi %229, %77 : i64
                        %231 = arith.subi %230, %228 : i64
                        %232 = arith.subi %228, %66 : i64
                        %233 = arith.muli %232, %74 : i64
                        %234 = arith.addi %72, %233 : i64
                        %235 = arith.muli %177, %c64_i64 : i64
                        %236 = arith.addi %234, %235 : i64
                        %237 = arith.addi %227, %188 : i64
                        %238 = arith.ori %237, %c2684354560_i64 : i64
                        %239 = arith.subi %228, %227 : i64
                        %240 = arith.addi %238, %239 : i64
                        %241 = arith.subi %68, %188 : i64
                        %242 = arith.minsi %241, %c16_i64 : i64
                        "instgem.mvout"(%236, %240, %242, %231) : (i64, i64, i64, i64) -> ()
                      }
                    }
                    %215 = arith.index_cast %147 : i64 to index
                    scf.for %arg12 = %214 to %215 step %c1 {
                      %216 = arith.index_cast %arg12 : index to i64
                      %217 = arith.muli %216, %c16_i64 : i64
                      %218 = arith.subi %141, %217 : i64
                      %219 = arith.minsi %218, %c16_i64 : i64
                      %220 = arith.addi %217, %188 : i64
                      %221 = arith.ori %220, %207 : i64
                      %222 = arith.select %206, %c16_i64, %219 : i64
                      "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %221, %210, %222) : (i64, i64, i64, i64, i64, i64) -> ()
                      %223 = arith.muli %216, %c32_i64 : i64
                      %224 = arith.addi %223, %201 : i64
                      "instgem.compute_accumulated"(%224, %203, %219, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                      %225 = arith.subi %216, %c1_i64 : i64
                      %226 = arith.subi %225, %76 : i64
                      %227 = arith.cmpi sge, %226, %c0_i64 : i64
                      %228 = arith.cmpi slt, %226, %84 : i64
                      %229 = arith.andi %227, %228 : i1
                      scf.if %229 {
                        %230 = arith.muli %225, %c16_i64 : i64
                        %231 = arith.maxsi %230, %66 : i64
                        %232 = arith.addi %230, %c16_i64 : i64
                        %233 = arith.minsi %232, %77 : i64
                        %234 = arith.subi %233, %231 : i64
                        %235 = arith.subi %231, %66 : i64
                        %236 = arith.muli %235, %74 : i64
                        %237 = arith.addi %72, %236 : i64
                        %238 = arith.muli %177, %c64_i64 : i64
                        %239 = arith.addi %237, %238 : i64
                        %240 = arith.addi %230, %188 : i64
                        %241 = arith.ori %240, %c2684354560_i64 : i64
                        %242 = arith.subi %231, %230 : i64
                        %243 = arith.addi %241, %242 : i64
                        %244 = arith.subi %68, %188 : i64
                        %245 = arith.minsi %244, %c16_i64 : i64
                        "instgem.mvout"(%239, %243, %245, %234) : (i64, i64, i64, i64) -> ()
                      }
                    }
                  } else {
                    %214 = arith.index_cast %162 : i64 to index
                    scf.for %arg12 = %c1 to %214 step %c1 {
                      %216 = arith.index_cast %arg12 : index to i64
                      %217 = arith.muli %216, %c16_i64 : i64
                      %218 = arith.addi %217, %188 : i64
                      %219 = arith.ori %218, %207 : i64
                      "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %219, %210, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                      %220 = arith.muli %216, %c32_i64 : i64
                      %221 = arith.addi %220, %201 : i64
                      "instgem.compute_accumulated"(%221, %203, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                    }
                    %215 = arith.index_cast %147 : i64 to index
                    scf.for %arg12 = %214 to %215 step %c1 {
                      %216 = arith.index_cast %arg12 : index to i64
                      %217 = arith.muli %216, %c16_i64 : i64
                      %218 = arith.subi %141, %217 : i64
                      %219 = arith.minsi %218, %c16_i64 : i64
                      %220 = arith.addi %217, %188 : i64
                      %221 = arith.ori %220, %207 : i64
                      %222 = arith.select %206, %c16_i64, %219 : i64
                      "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %221, %210, %222) : (i64, i64, i64, i64, i64, i64) -> ()
                      %223 = arith.muli %216, %c32_i64 : i64
                      %224 = arith.addi %223, %201 : i64
                      "instgem.compute_accumulated"(%224, %203, %219, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                    }
                  }
                }
                scf.if %181 {
                  %200 = arith.muli %150, %166 : i64
                  %201 = arith.minsi %200, %84 : i64
                  %202 = arith.index_cast %201 : i64 to index
                  scf.for %arg11 = %202 to %102 step %c1 {
                    %203 = arith.index_cast %arg11 : index to i64
                    %204 = arith.addi %76, %203 : i64
                    %205 = arith.muli %204, %c16_i64 : i64
                    %206 = arith.maxsi %205, %66 : i64
                    %207 = arith.addi %205, %c16_i64 : i64
                    %208 = arith.minsi %207, %77 : i64
                    %209 = arith.subi %208, %206 : i64
                    %210 = arith.subi %206, %66 : i64
                    %211 = arith.muli %210, %74 : i64
                    %212 = arith.addi %72, %211 : i64
                    %213 = arith.muli %178, %c64_i64 : i64
                    %214 = arith.addi %212, %213 : i64
                    %215 = arith.muli %178, %c16_i64 : i64
                    %216 = arith.addi %205, %215 : i64
                    %217 = arith.ori %216, %c2684354560_i64 : i64
                    %218 = arith.subi %206, %205 : i64
                    %219 = arith.addi %217, %218 : i64
                    %220 = arith.subi %68, %215 : i64
                    %221 = arith.minsi %220, %c16_i64 : i64
                    "instgem.mvout"(%214, %219, %221, %209) : (i64, i64, i64, i64) -> ()
                  }
                }
                %194 = arith.cmpi sgt, %150, %c0_i64 : i64
                %195 = arith.subi %147, %c1_i64 : i64
                %196 = arith.subi %195, %76 : i64
                %197 = arith.maxsi %196, %c0_i64 : i64
                %198 = arith.minsi %197, %84 : i64
                %199 = arith.select %194, %198, %c0_i64 : i64
                scf.if %185 {
                  %200 = arith.index_cast %199 : i64 to index
                  scf.for %arg11 = %200 to %102 step %c1 {
                    %201 = arith.index_cast %arg11 : index to i64
                    %202 = arith.addi %76, %201 : i64
                    %203 = arith.muli %202, %c16_i64 : i64
                    %204 = arith.maxsi %203, %66 : i64
                    %205 = arith.addi %203, %c16_i64 : i64
                    %206 = arith.minsi %205, %77 : i64
                    %207 = arith.subi %206, %204 : i64
                    %208 = arith.subi %204, %66 : i64
                    %209 = arith.muli %208, %74 : i64
                    %210 = arith.addi %72, %209 : i64
                    %211 = arith.muli %177, %c64_i64 : i64
                    %212 = arith.addi %210, %211 : i64
                    %213 = arith.addi %203, %188 : i64
                    %214 = arith.ori %213, %c2684354560_i64 : i64
                    %215 = arith.subi %204, %203 : i64
                    %216 = arith.addi %214, %215 : i64
                    %217 = arith.subi %68, %188 : i64
                    %218 = arith.minsi %217, %c16_i64 : i64
                    "instgem.mvout"(%212, %216, %218, %207) : (i64, i64, i64, i64) -> ()
                  }
                }
              } {gemmini.compute_nest}
              %168 = arith.cmpi eq, %150, %c0_i64 : i64
              %169 = arith.cmpi slt, %147, %c2_i64 : i64
              %170 = arith.cmpi slt, %155, %c1_i64 : i64
              %171 = arith.ori %168, %169 : i1
              %172 = arith.ori %171, %170 : i1
              %173 = arith.andi %153, %172 : i1
              scf.if %173 {
                scf.for %arg10 = %c0 to %c2 step %c1 {
                  %177 = arith.index_cast %arg10 : index to i64
                  %178 = arith.muli %177, %c16_i64 : i64
                  %179 = arith.ori %178, %c2147483648_i64 : i64
                  %180 = arith.cmpi sge, %177, %147 : i64
                  %181 = arith.cmpi sle, %155, %c0_i64 : i64
                  %182 = arith.ori %168, %180 : i1
                  %183 = arith.ori %182, %181 : i1
                  %184 = arith.cmpi sgt, %85, %c0_i64 : i64
                  %185 = arith.andi %183, %184 : i1
                  scf.if %185 {
                    "instgem.mvin"(%c0_i64, %179, %c16_i64, %c16_i64) : (i64, i64, i64, i64) -> ()
                  }
                }
              }
              %174 = arith.minsi %155, %85 : i64
              %175 = arith.index_cast %174 : i64 to index
              %176 = arith.index_cast %85 : i64 to index
              scf.for %arg10 = %175 to %176 step %c1 {
                %177 = arith.index_cast %arg10 : index to i64
                scf.for %arg11 = %c0 to %102 step %c1 {
                  %178 = arith.index_cast %arg11 : index to i64
                  %179 = arith.addi %76, %178 : i64
                  %180 = arith.muli %179, %c16_i64 : i64
                  %181 = arith.maxsi %180, %66 : i64
                  %182 = arith.addi %180, %c16_i64 : i64
                  %183 = arith.minsi %182, %77 : i64
                  %184 = arith.subi %183, %181 : i64
                  %185 = arith.subi %181, %66 : i64
                  %186 = arith.muli %185, %74 : i64
                  %187 = arith.addi %72, %186 : i64
                  %188 = arith.muli %177, %c64_i64 : i64
                  %189 = arith.addi %187, %188 : i64
                  %190 = arith.muli %177, %c16_i64 : i64
                  %191 = arith.addi %180, %190 : i64
                  %192 = arith.ori %191, %c2684354560_i64 : i64
                  %193 = arith.subi %181, %180 : i64
                  %194 = arith.addi %192, %193 : i64
                  %195 = arith.subi %68, %190 : i64
                  %196 = arith.minsi %195, %c16_i64 : i64
                  "instgem.mvout"(%189, %194, %196, %184) : (i64, i64, i64, i64) -> ()
                }
              }
            } else {
              %165 = arith.select %153, %c0_i64, %c-1_i64 : i64
              scf.for %arg10 = %c0 to %156 step %c1 {
                %172 = arith.index_cast %arg10 : index to i64
                %173 = arith.muli %172, %c16_i64 : i64
                %174 = arith.subi %146, %173 : i64
                %175 = arith.minsi %174, %c16_i64 : i64
                %176 = arith.cmpi sgt, %159, %c0_i64 : i64
                scf.if %176 {
                  %179 = arith.cmpi eq, %165, %c0_i64 : i64
                  %180 = arith.select %179, %c2147483648_i64, %c3221225472_i64 : i64
                  %181 = arith.ori %173, %180 : i64
                  %182 = arith.select %179, %c16_i64, %163 : i64
                  %183 = arith.select %179, %c16_i64, %175 : i64
                  %184 = arith.addi %173, %c64_i64 : i64
                  "instgem.preload"(%184, %175, %c16_i64, %181, %183, %182) : (i64, i64, i64, i64, i64, i64) -> ()
                  "instgem.compute_preloaded"(%c0_i64, %c16_i64, %163, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                  %185 = arith.index_cast %162 : i64 to index
                  scf.for %arg11 = %c1 to %185 step %c1 {
                    %187 = arith.index_cast %arg11 : index to i64
                    %188 = arith.muli %187, %c16_i64 : i64
                    %189 = arith.addi %188, %173 : i64
                    %190 = arith.ori %189, %180 : i64
                    "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %190, %183, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                    %191 = arith.muli %187, %c32_i64 : i64
                    "instgem.compute_accumulated"(%191, %c16_i64, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                  }
                  %186 = arith.index_cast %147 : i64 to index
                  scf.for %arg11 = %185 to %186 step %c1 {
                    %187 = arith.index_cast %arg11 : index to i64
                    %188 = arith.muli %187, %c16_i64 : i64
                    %189 = arith.subi %141, %188 : i64
                    %190 = arith.minsi %189, %c16_i64 : i64
                    %191 = arith.addi %188, %173 : i64
                    %192 = arith.ori %191, %180 : i64
                    %193 = arith.select %179, %c16_i64, %190 : i64
                    "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %192, %183, %193) : (i64, i64, i64, i64, i64, i64) -> ()
                    %194 = arith.muli %187, %c32_i64 : i64
                    "instgem.compute_accumulated"(%194, %c16_i64, %190, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                  }
                }
                %177 = arith.index_cast %159 : i64 to index
                scf.for %arg11 = %c1 to %177 step %c1 {
                  %179 = arith.index_cast %arg11 : index to i64
                  %180 = arith.ori %173, %c3221225472_i64 : i64
                  %181 = arith.muli %179, %c16_i64 : i64
                  %182 = arith.addi %181, %173 : i64
                  %183 = arith.addi %182, %c64_i64 : i64
                  "instgem.preload"(%183, %175, %c16_i64, %180, %175, %163) : (i64, i64, i64, i64, i64, i64) -> ()
                  "instgem.compute_preloaded"(%181, %c16_i64, %163, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                  %184 = arith.index_cast %162 : i64 to index
                  scf.for %arg12 = %c1 to %184 step %c1 {
                    %186 = arith.index_cast %arg12 : index to i64
                    %187 = arith.muli %186, %c16_i64 : i64
                    %188 = arith.addi %187, %173 : i64
                    %189 = arith.ori %188, %c3221225472_i64 : i64
                    "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %189, %175, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                    %190 = arith.muli %186, %c32_i64 : i64
                    %191 = arith.addi %190, %181 : i64
                    "instgem.compute_accumulated"(%191, %c16_i64, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                  }
                  %185 = arith.index_cast %147 : i64 to index
                  scf.for %arg12 = %184 to %185 step %c1 {
                    %186 = arith.index_cast %arg12 : index to i64
                    %187 = arith.muli %186, %c16_i64 : i64
                    %188 = arith.subi %141, %187 : i64
                    %189 = arith.minsi %188, %c16_i64 : i64
                    %190 = arith.addi %187, %173 : i64
                    %191 = arith.ori %190, %c3221225472_i64 : i64
                    "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %191, %175, %189) : (i64, i64, i64, i64, i64, i64) -> ()
                    %192 = arith.muli %186, %c32_i64 : i64
                    %193 = arith.addi %192, %181 : i64
                    "instgem.compute_accumulated"(%193, %c16_i64, %189, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                  }
                }
                %178 = arith.index_cast %150 : i64 to index
                scf.for %arg11 = %177 to %178 step %c1 {
                  %179 = arith.index_cast %arg11 : index to i64
                  %180 = arith.muli %179, %c16_i64 : i64
                  %181 = arith.subi %143, %180 : i64
                  %182 = arith.minsi %181, %c16_i64 : i64
                  %183 = arith.subi %144, %180 : i64
                  %184 = arith.minsi %183, %c16_i64 : i64
                  %185 = arith.cmpi eq, %179, %165 : i64
                  %186 = arith.select %185, %c2147483648_i64, %c3221225472_i64 : i64
                  %187 = arith.ori %173, %186 : i64
                  %188 = arith.select %185, %c16_i64, %163 : i64
                  %189 = arith.select %185, %c16_i64, %175 : i64
                  %190 = arith.addi %180, %173 : i64
                  %191 = arith.addi %190, %c64_i64 : i64
                  "instgem.preload"(%191, %175, %184, %187, %189, %188) : (i64, i64, i64, i64, i64, i64) -> ()
                  "instgem.compute_preloaded"(%180, %182, %163, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                  %192 = arith.index_cast %162 : i64 to index
                  scf.for %arg12 = %c1 to %192 step %c1 {
                    %194 = arith.index_cast %arg12 : index to i64
                    %195 = arith.muli %194, %c16_i64 : i64
                    %196 = arith.addi %195, %173 : i64
                    %197 = arith.ori %196, %186 : i64
                    "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %197, %189, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                    %198 = arith.muli %194, %c32_i64 : i64
                    %199 = arith.addi %198, %180 : i64
                    "instgem.compute_accumulated"(%199, %182, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                  }
                  %193 = arith.index_cast %147 : i64 to index
                  scf.for %arg12 = %192 to %193 step %c1 {
                    %194 = arith.index_cast %arg12 : index to i64
                    %195 = arith.muli %194, %c16_i64 : i64
                    %196 = arith.subi %141, %195 : i64
                    %197 = arith.minsi %196, %c16_i64 : i64
                    %198 = arith.addi %195, %173 : i64
                    %199 = arith.ori %198, %186 : i64
                    %200 = arith.select %185, %c16_i64, %197 : i64
                    "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %199, %189, %200) : (i64, i64, i64, i64, i64, i64) -> ()
                    %201 = arith.muli %194, %c32_i64 : i64
                    %202 = arith.addi %201, %180 : i64
                    "instgem.compute_accumulated"(%202, %182, %197, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                  }
                }
              } {gemmini.compute_nest}
              %166 = arith.cmpi eq, %150, %c0_i64 : i64
              %167 = arith.cmpi slt, %147, %c2_i64 : i64
              %168 = arith.cmpi slt, %155, %c1_i64 : i64
              %169 = arith.ori %166, %167 : i1
              %170 = arith.ori %169, %168 : i1
              %171 = arith.andi %153, %170 : i1
              scf.if %171 {
                scf.for %arg10 = %c0 to %c2 step %c1 {
                  %172 = arith.index_cast %arg10 : index to i64
                  %173 = arith.muli %172, %c16_i64 : i64
                  %174 = arith.ori %173, %c2147483648_i64 : i64
                  %175 = arith.cmpi sge, %172, %147 : i64
                  %176 = arith.cmpi sle, %155, %c0_i64 : i64
                  %177 = arith.ori %166, %175 : i1
                  %178 = arith.ori %177, %176 : i1
                  %179 = arith.cmpi sgt, %85, %c0_i64 : i64
                  %180 = arith.andi %178, %179 : i1
                  scf.if %180 {
                    "instgem.mvin"(%c0_i64, %174, %c16_i64, %c16_i64) : (i64, i64, i64, i64) -> ()
                  }
                }
              }
            }
          } else {
            scf.for %arg10 = %c0 to %156 step %c1 {
              %165 = arith.index_cast %arg10 : index to i64
              %166 = arith.muli %165, %c16_i64 : i64
              %167 = arith.subi %146, %166 : i64
              %168 = arith.minsi %167, %c16_i64 : i64
              %169 = arith.index_cast %159 : i64 to index
              scf.for %arg11 = %c0 to %169 step %c1 {
                %171 = arith.index_cast %arg11 : index to i64
                %172 = arith.ori %166, %c3221225472_i64 : i64
                %173 = arith.muli %171, %c16_i64 : i64
                %174 = arith.addi %173, %166 : i64
                %175 = arith.addi %174, %c64_i64 : i64
                "instgem.preload"(%175, %168, %c16_i64, %172, %168, %163) : (i64, i64, i64, i64, i64, i64) -> ()
                "instgem.compute_preloaded"(%173, %c16_i64, %163, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                %176 = arith.index_cast %162 : i64 to index
                scf.for %arg12 = %c1 to %176 step %c1 {
                  %178 = arith.index_cast %arg12 : index to i64
                  %179 = arith.muli %178, %c16_i64 : i64
                  %180 = arith.addi %179, %166 : i64
                  %181 = arith.ori %180, %c3221225472_i64 : i64
                  "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %181, %168, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                  %182 = arith.muli %178, %c32_i64 : i64
                  %183 = arith.addi %182, %173 : i64
                  "instgem.compute_accumulated"(%183, %c16_i64, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                }
                %177 = arith.index_cast %147 : i64 to index
                scf.for %arg12 = %176 to %177 step %c1 {
                  %178 = arith.index_cast %arg12 : index to i64
                  %179 = arith.muli %178, %c16_i64 : i64
                  %180 = arith.subi %141, %179 : i64
                  %181 = arith.minsi %180, %c16_i64 : i64
                  %182 = arith.addi %179, %166 : i64
                  %183 = arith.ori %182, %c3221225472_i64 : i64
                  "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %183, %168, %181) : (i64, i64, i64, i64, i64, i64) -> ()
                  %184 = arith.muli %178, %c32_i64 : i64
                  %185 = arith.addi %184, %173 : i64
                  "instgem.compute_accumulated"(%185, %c16_i64, %181, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                }
              }
              %170 = arith.index_cast %150 : i64 to index
              scf.for %arg11 = %169 to %170 step %c1 {
                %171 = arith.index_cast %arg11 : index to i64
                %172 = arith.muli %171, %c16_i64 : i64
                %173 = arith.subi %143, %172 : i64
                %174 = arith.minsi %173, %c16_i64 : i64
                %175 = arith.subi %144, %172 : i64
                %176 = arith.minsi %175, %c16_i64 : i64
                %177 = arith.ori %166, %c3221225472_i64 : i64
                %178 = arith.addi %172, %166 : i64
                %179 = arith.addi %178, %c64_i64 : i64
                "instgem.preload"(%179, %168, %176, %177, %168, %163) : (i64, i64, i64, i64, i64, i64) -> ()
                "instgem.compute_preloaded"(%172, %174, %163, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                %180 = arith.index_cast %162 : i64 to index
                scf.for %arg12 = %c1 to %180 step %c1 {
                  %182 = arith.index_cast %arg12 : index to i64
                  %183 = arith.muli %182, %c16_i64 : i64
                  %184 = arith.addi %183, %166 : i64
                  %185 = arith.ori %184, %c3221225472_i64 : i64
                  "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %185, %168, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                  %186 = arith.muli %182, %c32_i64 : i64
                  %187 = arith.addi %186, %172 : i64
                  "instgem.compute_accumulated"(%187, %174, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                }
                %181 = arith.index_cast %147 : i64 to index
                scf.for %arg12 = %180 to %181 step %c1 {
                  %182 = arith.index_cast %arg12 : index to i64
                  %183 = arith.muli %182, %c16_i64 : i64
                  %184 = arith.subi %141, %183 : i64
                  %185 = arith.minsi %184, %c16_i64 : i64
                  %186 = arith.addi %183, %166 : i64
                  %187 = arith.ori %186, %c3221225472_i64 : i64
                  "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %187, %168, %185) : (i64, i64, i64, i64, i64, i64) -> ()
                  %188 = arith.muli %182, %c32_i64 : i64
                  %189 = arith.addi %188, %172 : i64
                  "instgem.compute_accumulated"(%189, %174, %185, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                }
              }
            } {gemmini.compute_nest}
          }
          scf.yield %89, %111 : index, index
        }
        scf.if %65 {
          "instgem.config_st"(%c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %74, %c1065353216_i64) : (i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> ()
          %87 = arith.muli %84, %85 : i64
          %88 = arith.index_cast %87 : i64 to index
          scf.for %arg7 = %c0 to %88 step %c1 {
            %89 = arith.index_cast %arg7 : index to i64
            %90 = arith.remsi %89, %84 : i64
            %91 = arith.divsi %89, %84 : i64
            %92 = arith.addi %76, %90 : i64
            %93 = arith.muli %92, %c16_i64 : i64
            %94 = arith.maxsi %93, %66 : i64
            %95 = arith.addi %93, %c16_i64 : i64
            %96 = arith.minsi %95, %77 : i64
            %97 = arith.subi %96, %94 : i64
            %98 = arith.subi %94, %66 : i64
            %99 = arith.muli %98, %74 : i64
            %100 = arith.addi %72, %99 : i64
            %101 = arith.muli %91, %c64_i64 : i64
            %102 = arith.addi %100, %101 : i64
            %103 = arith.muli %91, %c16_i64 : i64
            %104 = arith.addi %93, %103 : i64
            %105 = arith.ori %104, %c2684354560_i64 : i64
            %106 = arith.subi %94, %93 : i64
            %107 = arith.addi %105, %106 : i64
            %108 = arith.subi %68, %103 : i64
            %109 = arith.minsi %108, %c16_i64 : i64
            "instgem.mvout"(%102, %107, %109, %97) : (i64, i64, i64, i64) -> ()
          }
        }
      }
    }
    return
  }
}
