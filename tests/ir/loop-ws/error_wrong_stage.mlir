// RUN: not baco opt --pass loop-ws %s 2>&1 | FileCheck %s
// Input of stage config-elimination: the pass refuses it before running.
// CHECK: baco opt: this IR is the input of stage 'config-elimination', not the input of stage 'loop-ws'

module {
  func.func private @baco_boundary_error(i64, i64)
  func.func private @baco_program_id(i64) -> i64
  func.func @gemm(%arg0: memref<?xi8>, %arg1: memref<?xi8>, %arg2: memref<?xi32>, %arg3: index, %arg4: index, %arg5: index, %arg6: f32) attributes {gemmini.acc_rows_used = 32 : i64, gemmini.sp_rows_used = 96 : i64} {
    %c2 = arith.constant 2 : index
    %c3221225472_i64 = arith.constant 3221225472 : i64
    %c2684354560_i64 = arith.constant 2684354560 : i64
    %c4294967295_i64 = arith.constant 4294967295 : i64
    %c32_i64 = arith.constant 32 : i64
    %c4_i64 = arith.constant 4 : i64
    %c2147483648_i64 = arith.constant 2147483648 : i64
    %c2_i64 = arith.constant 2 : i64
    %c64_i64 = arith.constant 64 : i64
    %c16_i64 = arith.constant 16 : i64
    %c32 = arith.constant 32 : index
    %c1 = arith.constant 1 : index
    %c0 = arith.constant 0 : index
    %c16 = arith.constant 16 : index
    %c40_i64 = arith.constant 40 : i64
    %c27_i64 = arith.constant 27 : i64
    %c62_i64 = arith.constant 62 : i64
    %c47_i64 = arith.constant 47 : i64
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
    %reinterpret_cast = memref.reinterpret_cast %arg0 to offset: [0], sizes: [%arg3, %arg5], strides: [%arg5, 1] : memref<?xi8> to memref<?x?xi8, strided<[?, 1]>>
    %5 = arith.muli %3, %c16 : index
    %reinterpret_cast_0 = memref.reinterpret_cast %arg1 to offset: [0], sizes: [%arg5, %arg4], strides: [%arg4, 1] : memref<?xi8> to memref<?x?xi8, strided<[?, 1]>>
    %6 = arith.ceildivsi %arg5, %c32 : index
    %reinterpret_cast_1 = memref.reinterpret_cast %arg2 to offset: [0], sizes: [%arg3, %arg4], strides: [%arg4, 1] : memref<?xi32> to memref<?x?xi32, strided<[?, 1]>>
    %7 = arith.maxsi %4, %c0 : index
    %8 = arith.minsi %7, %arg3 : index
    %9 = arith.addi %4, %c32 : index
    %10 = arith.maxsi %9, %c0 : index
    %11 = arith.minsi %10, %arg3 : index
    %12 = arith.subi %8, %4 : index
    %13 = arith.maxsi %12, %c0 : index
    %14 = arith.minsi %13, %c32 : index
    %15 = arith.subi %11, %8 : index
    %16 = arith.maxsi %5, %c0 : index
    %17 = arith.minsi %16, %arg4 : index
    %18 = arith.addi %5, %c16 : index
    %19 = arith.maxsi %18, %c0 : index
    %20 = arith.minsi %19, %arg4 : index
    %21 = arith.subi %17, %5 : index
    %22 = arith.maxsi %21, %c0 : index
    %23 = arith.minsi %22, %c16 : index
    %24 = arith.subi %20, %17 : index
    %25 = arith.cmpi sgt, %23, %c0 : index
    scf.if %25 {
      func.call @baco_boundary_error(%c47_i64, %c9_i64) : (i64, i64) -> ()
    }
    %subview = memref.subview %reinterpret_cast_1[%8, %17] [%15, %24] [1, 1] : memref<?x?xi32, strided<[?, 1]>> to memref<?x?xi32, strided<[?, 1], offset: ?>>
    %26 = arith.cmpi sle, %6, %c0 : index
    scf.if %26 {
      "instgem.config_ld"(%c0_i64, %c0_i64, %c1_i64, %c16_i64, %c1065353216_i64, %c64_i64) : (i64, i64, i64, i64, i64, i64) -> ()
      scf.for %arg7 = %c0 to %c2 step %c1 {
        %45 = arith.index_cast %arg7 : index to i64
        %46 = arith.remsi %45, %c2_i64 : i64
        %47 = arith.divsi %45, %c2_i64 : i64
        %48 = arith.muli %47, %c16_i64 : i64
        %49 = arith.subi %c16_i64, %48 : i64
        %50 = arith.minsi %49, %c16_i64 : i64
        %51 = arith.muli %46, %c16_i64 : i64
        %52 = arith.addi %51, %48 : i64
        %53 = arith.ori %52, %c2147483648_i64 : i64
        "instgem.mvin"(%c0_i64, %53, %50, %c16_i64) : (i64, i64, i64, i64) -> ()
      } {gemmini.load_stream}
    }
    %27 = arith.index_cast %14 : index to i64
    %28 = arith.index_cast %15 : index to i64
    %29 = arith.index_cast %24 : index to i64
    %base_buffer, %offset, %sizes:2, %strides:2 = memref.extract_strided_metadata %subview : memref<?x?xi32, strided<[?, 1], offset: ?>> -> memref<i32>, index, index, index, index, index
    %intptr = memref.extract_aligned_pointer_as_index %subview : memref<?x?xi32, strided<[?, 1], offset: ?>> -> index
    %30 = arith.index_cast %intptr : index to i64
    %31 = arith.index_cast %offset : index to i64
    %32 = arith.muli %31, %c4_i64 : i64
    %33 = arith.addi %30, %32 : i64
    %34 = arith.index_cast %strides#0 : index to i64
    %35 = arith.muli %34, %c4_i64 : i64
    "instgem.config_st"(%c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %35, %c1065353216_i64) : (i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> ()
    %36 = arith.divsi %27, %c16_i64 : i64
    %37 = arith.addi %27, %28 : i64
    %38 = arith.ceildivsi %37, %c16_i64 : i64
    %39 = arith.subi %38, %36 : i64
    %40 = arith.cmpi sgt, %28, %c0_i64 : i64
    %41 = arith.extui %40 : i1 to i64
    %42 = arith.muli %39, %41 : i64
    %43 = arith.ceildivsi %29, %c16_i64 : i64
    %44:2 = scf.for %arg7 = %c0 to %6 step %c1 iter_args(%arg8 = %c0, %arg9 = %c0) -> (index, index) {
      %45 = arith.maxsi %arg8, %c0 : index
      %46 = arith.minsi %45, %arg5 : index
      %47 = arith.addi %arg8, %c32 : index
      %48 = arith.maxsi %47, %c0 : index
      %49 = arith.minsi %48, %arg5 : index
      %50 = arith.subi %46, %arg8 : index
      %51 = arith.maxsi %50, %c0 : index
      %52 = arith.minsi %51, %c32 : index
      %53 = arith.subi %49, %46 : index
      %54 = arith.cmpi sgt, %52, %c0 : index
      scf.if %54 {
        func.call @baco_boundary_error(%c40_i64, %c27_i64) : (i64, i64) -> ()
      }
      %subview_2 = memref.subview %reinterpret_cast[%8, %46] [%15, %53] [1, 1] : memref<?x?xi8, strided<[?, 1]>> to memref<?x?xi8, strided<[?, 1], offset: ?>>
      %55 = arith.index_cast %53 : index to i64
      %base_buffer_3, %offset_4, %sizes_5:2, %strides_6:2 = memref.extract_strided_metadata %subview_2 : memref<?x?xi8, strided<[?, 1], offset: ?>> -> memref<i8>, index, index, index, index, index
      %intptr_7 = memref.extract_aligned_pointer_as_index %subview_2 : memref<?x?xi8, strided<[?, 1], offset: ?>> -> index
      %56 = arith.index_cast %intptr_7 : index to i64
      %57 = arith.index_cast %offset_4 : index to i64
      %58 = arith.addi %56, %57 : i64
      %59 = arith.index_cast %strides_6#0 : index to i64
      "instgem.config_ld"(%c0_i64, %c0_i64, %c1_i64, %c16_i64, %c1065353216_i64, %59) : (i64, i64, i64, i64, i64, i64) -> ()
      %60 = arith.ceildivsi %55, %c64_i64 : i64
      %61 = arith.muli %42, %60 : i64
      %62 = arith.index_cast %61 : i64 to index
      scf.for %arg10 = %c0 to %62 step %c1 {
        %118 = arith.index_cast %arg10 : index to i64
        %119 = arith.divsi %118, %60 : i64
        %120 = arith.addi %36, %119 : i64
        %121 = arith.remsi %118, %60 : i64
        %122 = arith.muli %120, %c16_i64 : i64
        %123 = arith.maxsi %122, %27 : i64
        %124 = arith.addi %122, %c16_i64 : i64
        %125 = arith.minsi %124, %37 : i64
        %126 = arith.subi %125, %123 : i64
        %127 = arith.subi %123, %27 : i64
        %128 = arith.muli %127, %59 : i64
        %129 = arith.addi %58, %128 : i64
        %130 = arith.muli %121, %c64_i64 : i64
        %131 = arith.addi %129, %130 : i64
        %132 = arith.muli %120, %c32_i64 : i64
        %133 = arith.addi %132, %130 : i64
        %134 = arith.subi %123, %122 : i64
        %135 = arith.addi %133, %134 : i64
        %136 = arith.subi %55, %130 : i64
        %137 = arith.minsi %136, %c64_i64 : i64
        "instgem.mvin"(%131, %135, %137, %126) : (i64, i64, i64, i64) -> ()
      } {gemmini.load_stream}
      %63 = arith.ceildivsi %27, %c16_i64 : i64
      %64 = arith.cmpi sgt, %27, %c0_i64 : i64
      %65 = arith.extui %64 : i1 to i64
      %66 = arith.muli %63, %65 : i64
      %67 = arith.muli %66, %60 : i64
      %68 = arith.index_cast %67 : i64 to index
      scf.for %arg10 = %c0 to %68 step %c1 {
        %118 = arith.index_cast %arg10 : index to i64
        %119 = arith.divsi %118, %60 : i64
        %120 = arith.remsi %118, %60 : i64
        %121 = arith.muli %119, %c16_i64 : i64
        %122 = arith.maxsi %121, %c0_i64 : i64
        %123 = arith.addi %121, %c16_i64 : i64
        %124 = arith.minsi %123, %27 : i64
        %125 = arith.subi %124, %122 : i64
        %126 = arith.muli %119, %c32_i64 : i64
        %127 = arith.muli %120, %c64_i64 : i64
        %128 = arith.addi %126, %127 : i64
        %129 = arith.subi %122, %121 : i64
        %130 = arith.addi %128, %129 : i64
        %131 = arith.subi %55, %127 : i64
        %132 = arith.minsi %131, %c64_i64 : i64
        "instgem.mvin"(%c0_i64, %130, %132, %125) : (i64, i64, i64, i64) -> ()
      } {gemmini.load_stream}
      %69 = arith.maxsi %arg9, %c0 : index
      %70 = arith.minsi %69, %arg5 : index
      %71 = arith.addi %arg9, %c32 : index
      %72 = arith.maxsi %71, %c0 : index
      %73 = arith.minsi %72, %arg5 : index
      %74 = arith.subi %70, %arg9 : index
      %75 = arith.maxsi %74, %c0 : index
      %76 = arith.minsi %75, %c32 : index
      %77 = arith.subi %73, %70 : index
      scf.if %25 {
        func.call @baco_boundary_error(%c40_i64, %c62_i64) : (i64, i64) -> ()
      }
      %subview_8 = memref.subview %reinterpret_cast_0[%70, %17] [%77, %24] [1, 1] : memref<?x?xi8, strided<[?, 1]>> to memref<?x?xi8, strided<[?, 1], offset: ?>>
      %78 = arith.index_cast %76 : index to i64
      %79 = arith.index_cast %77 : index to i64
      %80 = arith.addi %78, %79 : i64
      %base_buffer_9, %offset_10, %sizes_11:2, %strides_12:2 = memref.extract_strided_metadata %subview_8 : memref<?x?xi8, strided<[?, 1], offset: ?>> -> memref<i8>, index, index, index, index, index
      %intptr_13 = memref.extract_aligned_pointer_as_index %subview_8 : memref<?x?xi8, strided<[?, 1], offset: ?>> -> index
      %81 = arith.index_cast %intptr_13 : index to i64
      %82 = arith.index_cast %offset_10 : index to i64
      %83 = arith.addi %81, %82 : i64
      %84 = arith.index_cast %strides_12#0 : index to i64
      "instgem.config_ld"(%c0_i64, %c0_i64, %c1_i64, %c16_i64, %c1065353216_i64, %84) : (i64, i64, i64, i64, i64, i64) -> ()
      %85 = arith.ceildivsi %29, %c64_i64 : i64
      %86 = arith.divsi %78, %c16_i64 : i64
      %87 = arith.ceildivsi %80, %c16_i64 : i64
      %88 = arith.subi %87, %86 : i64
      %89 = arith.cmpi sgt, %79, %c0_i64 : i64
      %90 = arith.extui %89 : i1 to i64
      %91 = arith.muli %88, %90 : i64
      %92 = arith.muli %91, %85 : i64
      %93 = arith.index_cast %92 : i64 to index
      scf.for %arg10 = %c0 to %93 step %c1 {
        %118 = arith.index_cast %arg10 : index to i64
        %119 = arith.divsi %118, %85 : i64
        %120 = arith.addi %86, %119 : i64
        %121 = arith.remsi %118, %85 : i64
        %122 = arith.muli %120, %c16_i64 : i64
        %123 = arith.maxsi %122, %78 : i64
        %124 = arith.addi %122, %c16_i64 : i64
        %125 = arith.minsi %124, %80 : i64
        %126 = arith.subi %125, %123 : i64
        %127 = arith.subi %123, %78 : i64
        %128 = arith.muli %127, %84 : i64
        %129 = arith.addi %83, %128 : i64
        %130 = arith.muli %121, %c64_i64 : i64
        %131 = arith.addi %129, %130 : i64
        %132 = arith.addi %122, %130 : i64
        %133 = arith.addi %132, %c64_i64 : i64
        %134 = arith.subi %123, %122 : i64
        %135 = arith.addi %133, %134 : i64
        %136 = arith.subi %29, %130 : i64
        %137 = arith.minsi %136, %c64_i64 : i64
        "instgem.mvin"(%131, %135, %137, %126) : (i64, i64, i64, i64) -> ()
      } {gemmini.load_stream}
      %94 = arith.ceildivsi %78, %c16_i64 : i64
      %95 = arith.cmpi sgt, %78, %c0_i64 : i64
      %96 = arith.extui %95 : i1 to i64
      %97 = arith.muli %94, %96 : i64
      %98 = arith.muli %97, %85 : i64
      %99 = arith.index_cast %98 : i64 to index
      scf.for %arg10 = %c0 to %99 step %c1 {
        %118 = arith.index_cast %arg10 : index to i64
        %119 = arith.divsi %118, %85 : i64
        %120 = arith.remsi %118, %85 : i64
        %121 = arith.muli %119, %c16_i64 : i64
        %122 = arith.maxsi %121, %c0_i64 : i64
        %123 = arith.addi %121, %c16_i64 : i64
        %124 = arith.minsi %123, %78 : i64
        %125 = arith.subi %124, %122 : i64
        %126 = arith.muli %120, %c64_i64 : i64
        %127 = arith.addi %121, %126 : i64
        %128 = arith.addi %127, %c64_i64 : i64
        %129 = arith.subi %122, %121 : i64
        %130 = arith.addi %128, %129 : i64
        %131 = arith.subi %29, %126 : i64
        %132 = arith.minsi %131, %c64_i64 : i64
        "instgem.mvin"(%c0_i64, %130, %132, %125) : (i64, i64, i64, i64) -> ()
      } {gemmini.load_stream}
      %100 = arith.maxsi %37, %c0_i64 : i64
      %101 = arith.minsi %100, %c32_i64 : i64
      %102 = arith.maxsi %55, %c0_i64 : i64
      %103 = arith.minsi %102, %c32_i64 : i64
      %104 = arith.maxsi %80, %c0_i64 : i64
      %105 = arith.minsi %104, %c32_i64 : i64
      %106 = arith.maxsi %29, %c0_i64 : i64
      %107 = arith.minsi %106, %c16_i64 : i64
      %108 = arith.ceildivsi %101, %c16_i64 : i64
      %109 = arith.ceildivsi %107, %c16_i64 : i64
      %110 = arith.minsi %103, %105 : i64
      %111 = arith.ceildivsi %110, %c16_i64 : i64
      %112 = arith.addi %arg7, %c1 : index
      %113 = arith.cmpi sge, %112, %6 : index
      %114 = arith.cmpi eq, %arg7, %c0 : index
      %115 = arith.cmpi sgt, %108, %c0_i64 : i64
      %116 = arith.select %115, %109, %c0_i64 : i64
      %117 = arith.index_cast %116 : i64 to index
      scf.for %arg10 = %c0 to %117 step %c1 {
        %118 = arith.index_cast %arg10 : index to i64
        %119 = arith.subi %118, %c1_i64 : i64
        %120 = arith.cmpi sge, %119, %c0_i64 : i64
        %121 = arith.cmpi slt, %119, %43 : i64
        %122 = arith.andi %120, %121 : i1
        %123 = arith.andi %113, %122 : i1
        %124 = arith.maxsi %111, %c1_i64 : i64
        %125 = arith.ceildivsi %42, %124 : i64
        %126 = arith.subi %116, %c1_i64 : i64
        %127 = arith.cmpi eq, %118, %126 : i64
        %128 = arith.cmpi slt, %118, %43 : i64
        %129 = arith.andi %127, %128 : i1
        %130 = arith.andi %113, %129 : i1
        %131 = arith.divsi %110, %c16_i64 : i64
        %132 = arith.minsi %111, %131 : i64
        %133 = arith.maxsi %132, %c0_i64 : i64
        %134 = arith.index_cast %133 : i64 to index
        scf.for %arg11 = %c0 to %134 step %c1 {
          %141 = arith.index_cast %arg11 : index to i64
          %142 = arith.muli %141, %125 : i64
          %143 = arith.minsi %142, %42 : i64
          scf.if %123 {
            %160 = arith.addi %143, %125 : i64
            %161 = arith.minsi %160, %42 : i64
            %162 = arith.index_cast %143 : i64 to index
            %163 = arith.index_cast %161 : i64 to index
            scf.for %arg12 = %162 to %163 step %c1 {
              %164 = arith.index_cast %arg12 : index to i64
              %165 = arith.addi %36, %164 : i64
              %166 = arith.muli %165, %c16_i64 : i64
              %167 = arith.maxsi %166, %27 : i64
              %168 = arith.addi %166, %c16_i64 : i64
              %169 = arith.minsi %168, %37 : i64
              %170 = arith.subi %169, %167 : i64
              %171 = arith.subi %167, %27 : i64
              %172 = arith.muli %171, %35 : i64
              %173 = arith.addi %33, %172 : i64
              %174 = arith.muli %119, %c64_i64 : i64
              %175 = arith.addi %173, %174 : i64
              %176 = arith.muli %119, %c16_i64 : i64
              %177 = arith.addi %166, %176 : i64
              %178 = arith.ori %177, %c2684354560_i64 : i64
              %179 = arith.subi %167, %166 : i64
              %180 = arith.addi %178, %179 : i64
              %181 = arith.subi %29, %176 : i64
              %182 = arith.minsi %181, %c16_i64 : i64
              "instgem.mvout"(%175, %180, %182, %170) : (i64, i64, i64, i64) -> ()
            }
          }
          %144 = arith.minsi %101, %c16_i64 : i64
          %145 = arith.muli %118, %c16_i64 : i64
          %146 = arith.subi %107, %145 : i64
          %147 = arith.minsi %146, %c16_i64 : i64
          %148 = arith.cmpi eq, %141, %c0_i64 : i64
          %149 = arith.andi %114, %148 : i1
          %150 = arith.select %149, %c2147483648_i64, %c3221225472_i64 : i64
          %151 = arith.ori %145, %150 : i64
          %152 = arith.select %149, %c16_i64, %144 : i64
          %153 = arith.select %149, %c16_i64, %147 : i64
          %154 = arith.muli %141, %c16_i64 : i64
          %155 = arith.addi %154, %145 : i64
          %156 = arith.addi %155, %c64_i64 : i64
          "instgem.preload"(%156, %147, %c16_i64, %151, %153, %152) : (i64, i64, i64, i64, i64, i64) -> ()
          "instgem.compute_preloaded"(%154, %c16_i64, %144, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
          %157 = arith.subi %111, %c1_i64 : i64
          %158 = arith.cmpi eq, %141, %157 : i64
          %159 = arith.andi %130, %158 : i1
          scf.if %159 {
            %160 = arith.divsi %101, %c16_i64 : i64
            %161 = arith.minsi %108, %160 : i64
            %162 = arith.maxsi %161, %c1_i64 : i64
            %163 = arith.index_cast %162 : i64 to index
            scf.for %arg12 = %c1 to %163 step %c1 {
              %165 = arith.index_cast %arg12 : index to i64
              %166 = arith.muli %165, %c16_i64 : i64
              %167 = arith.addi %166, %145 : i64
              %168 = arith.ori %167, %150 : i64
              "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %168, %153, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
              %169 = arith.muli %165, %c32_i64 : i64
              %170 = arith.addi %169, %154 : i64
              "instgem.compute_accumulated"(%170, %c16_i64, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
              %171 = arith.subi %165, %c1_i64 : i64
              %172 = arith.cmpi slt, %171, %42 : i64
              scf.if %172 {
                %173 = arith.addi %36, %171 : i64
                %174 = arith.muli %173, %c16_i64 : i64
                %175 = arith.maxsi %174, %27 : i64
                %176 = arith.addi %174, %c16_i64 : i64
                %177 = arith.minsi %176, %37 : i64
                %178 = arith.subi %177, %175 : i64
                %179 = arith.subi %175, %27 : i64
                %180 = arith.muli %179, %35 : i64
                %181 = arith.addi %33, %180 : i64
                %182 = arith.muli %118, %c64_i64 : i64
                %183 = arith.addi %181, %182 : i64
                %184 = arith.addi %174, %145 : i64
                %185 = arith.ori %184, %c2684354560_i64 : i64
                %186 = arith.subi %175, %174 : i64
                %187 = arith.addi %185, %186 : i64
                %188 = arith.subi %29, %145 : i64
                %189 = arith.minsi %188, %c16_i64 : i64
                "instgem.mvout"(%183, %187, %189, %178) : (i64, i64, i64, i64) -> ()
              }
            }
            %164 = arith.index_cast %108 : i64 to index
            scf.for %arg12 = %163 to %164 step %c1 {
              %165 = arith.index_cast %arg12 : index to i64
              %166 = arith.muli %165, %c16_i64 : i64
              %167 = arith.subi %101, %166 : i64
              %168 = arith.minsi %167, %c16_i64 : i64
              %169 = arith.addi %166, %145 : i64
              %170 = arith.ori %169, %150 : i64
              %171 = arith.select %149, %c16_i64, %168 : i64
              "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %170, %153, %171) : (i64, i64, i64, i64, i64, i64) -> ()
              %172 = arith.muli %165, %c32_i64 : i64
              %173 = arith.addi %172, %154 : i64
              "instgem.compute_accumulated"(%173, %c16_i64, %168, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
              %174 = arith.subi %165, %c1_i64 : i64
              %175 = arith.cmpi slt, %174, %42 : i64
              scf.if %175 {
                %176 = arith.addi %36, %174 : i64
                %177 = arith.muli %176, %c16_i64 : i64
                %178 = arith.maxsi %177, %27 : i64
                %179 = arith.addi %177, %c16_i64 : i64
                %180 = arith.minsi %179, %37 : i64
                %181 = arith.subi %180, %178 : i64
                %182 = arith.subi %178, %27 : i64
                %183 = arith.muli %182, %35 : i64
                %184 = arith.addi %33, %183 : i64
                %185 = arith.muli %118, %c64_i64 : i64
                %186 = arith.addi %184, %185 : i64
                %187 = arith.addi %177, %145 : i64
                %188 = arith.ori %187, %c2684354560_i64 : i64
                %189 = arith.subi %178, %177 : i64
                %190 = arith.addi %188, %189 : i64
                %191 = arith.subi %29, %145 : i64
                %192 = arith.minsi %191, %c16_i64 : i64
                "instgem.mvout"(%186, %190, %192, %181) : (i64, i64, i64, i64) -> ()
              }
            }
          } else {
            %160 = arith.divsi %101, %c16_i64 : i64
            %161 = arith.minsi %108, %160 : i64
            %162 = arith.maxsi %161, %c1_i64 : i64
            %163 = arith.index_cast %162 : i64 to index
            scf.for %arg12 = %c1 to %163 step %c1 {
              %165 = arith.index_cast %arg12 : index to i64
              %166 = arith.muli %165, %c16_i64 : i64
              %167 = arith.addi %166, %145 : i64
              %168 = arith.ori %167, %150 : i64
              "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %168, %153, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
              %169 = arith.muli %165, %c32_i64 : i64
              %170 = arith.addi %169, %154 : i64
              "instgem.compute_accumulated"(%170, %c16_i64, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
            }
            %164 = arith.index_cast %108 : i64 to index
            scf.for %arg12 = %163 to %164 step %c1 {
              %165 = arith.index_cast %arg12 : index to i64
              %166 = arith.muli %165, %c16_i64 : i64
              %167 = arith.subi %101, %166 : i64
              %168 = arith.minsi %167, %c16_i64 : i64
              %169 = arith.addi %166, %145 : i64
              %170 = arith.ori %169, %150 : i64
              %171 = arith.select %149, %c16_i64, %168 : i64
              "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %170, %153, %171) : (i64, i64, i64, i64, i64, i64) -> ()
              %172 = arith.muli %165, %c32_i64 : i64
              %173 = arith.addi %172, %154 : i64
              "instgem.compute_accumulated"(%173, %c16_i64, %168, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
            }
          }
        }
        %135 = arith.index_cast %111 : i64 to index
        scf.for %arg11 = %134 to %135 step %c1 {
          %141 = arith.index_cast %arg11 : index to i64
          %142 = arith.muli %141, %c16_i64 : i64
          %143 = arith.subi %103, %142 : i64
          %144 = arith.minsi %143, %c16_i64 : i64
          %145 = arith.subi %105, %142 : i64
          %146 = arith.minsi %145, %c16_i64 : i64
          %147 = arith.muli %141, %125 : i64
          %148 = arith.minsi %147, %42 : i64
          scf.if %123 {
            %164 = arith.addi %148, %125 : i64
            %165 = arith.minsi %164, %42 : i64
            %166 = arith.index_cast %148 : i64 to index
            %167 = arith.index_cast %165 : i64 to index
            scf.for %arg12 = %166 to %167 step %c1 {
              %168 = arith.index_cast %arg12 : index to i64
              %169 = arith.addi %36, %168 : i64
              %170 = arith.muli %169, %c16_i64 : i64
              %171 = arith.maxsi %170, %27 : i64
              %172 = arith.addi %170, %c16_i64 : i64
              %173 = arith.minsi %172, %37 : i64
              %174 = arith.subi %173, %171 : i64
              %175 = arith.subi %171, %27 : i64
              %176 = arith.muli %175, %35 : i64
              %177 = arith.addi %33, %176 : i64
              %178 = arith.muli %119, %c64_i64 : i64
              %179 = arith.addi %177, %178 : i64
              %180 = arith.muli %119, %c16_i64 : i64
              %181 = arith.addi %170, %180 : i64
              %182 = arith.ori %181, %c2684354560_i64 : i64
              %183 = arith.subi %171, %170 : i64
              %184 = arith.addi %182, %183 : i64
              %185 = arith.subi %29, %180 : i64
              %186 = arith.minsi %185, %c16_i64 : i64
              "instgem.mvout"(%179, %184, %186, %174) : (i64, i64, i64, i64) -> ()
            }
          }
          %149 = arith.minsi %101, %c16_i64 : i64
          %150 = arith.muli %118, %c16_i64 : i64
          %151 = arith.subi %107, %150 : i64
          %152 = arith.minsi %151, %c16_i64 : i64
          %153 = arith.cmpi eq, %141, %c0_i64 : i64
          %154 = arith.andi %114, %153 : i1
          %155 = arith.select %154, %c2147483648_i64, %c3221225472_i64 : i64
          %156 = arith.ori %150, %155 : i64
          %157 = arith.select %154, %c16_i64, %149 : i64
          %158 = arith.select %154, %c16_i64, %152 : i64
          %159 = arith.addi %142, %150 : i64
          %160 = arith.addi %159, %c64_i64 : i64
          "instgem.preload"(%160, %152, %146, %156, %158, %157) : (i64, i64, i64, i64, i64, i64) -> ()
          "instgem.compute_preloaded"(%142, %144, %149, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
          %161 = arith.subi %111, %c1_i64 : i64
          %162 = arith.cmpi eq, %141, %161 : i64
          %163 = arith.andi %130, %162 : i1
          scf.if %163 {
            %164 = arith.divsi %101, %c16_i64 : i64
            %165 = arith.minsi %108, %164 : i64
            %166 = arith.maxsi %165, %c1_i64 : i64
            %167 = arith.index_cast %166 : i64 to index
            scf.for %arg12 = %c1 to %167 step %c1 {
              %169 = arith.index_cast %arg12 : index to i64
              %170 = arith.muli %169, %c16_i64 : i64
              %171 = arith.addi %170, %150 : i64
              %172 = arith.ori %171, %155 : i64
              "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %172, %158, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
              %173 = arith.muli %169, %c32_i64 : i64
              %174 = arith.addi %173, %142 : i64
              "instgem.compute_accumulated"(%174, %144, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
              %175 = arith.subi %169, %c1_i64 : i64
              %176 = arith.cmpi slt, %175, %42 : i64
              scf.if %176 {
                %177 = arith.addi %36, %175 : i64
                %178 = arith.muli %177, %c16_i64 : i64
                %179 = arith.maxsi %178, %27 : i64
                %180 = arith.addi %178, %c16_i64 : i64
                %181 = arith.minsi %180, %37 : i64
                %182 = arith.subi %181, %179 : i64
                %183 = arith.subi %179, %27 : i64
                %184 = arith.muli %183, %35 : i64
                %185 = arith.addi %33, %184 : i64
                %186 = arith.muli %118, %c64_i64 : i64
                %187 = arith.addi %185, %186 : i64
                %188 = arith.addi %178, %150 : i64
                %189 = arith.ori %188, %c2684354560_i64 : i64
                %190 = arith.subi %179, %178 : i64
                %191 = arith.addi %189, %190 : i64
                %192 = arith.subi %29, %150 : i64
                %193 = arith.minsi %192, %c16_i64 : i64
                "instgem.mvout"(%187, %191, %193, %182) : (i64, i64, i64, i64) -> ()
              }
            }
            %168 = arith.index_cast %108 : i64 to index
            scf.for %arg12 = %167 to %168 step %c1 {
              %169 = arith.index_cast %arg12 : index to i64
              %170 = arith.muli %169, %c16_i64 : i64
              %171 = arith.subi %101, %170 : i64
              %172 = arith.minsi %171, %c16_i64 : i64
              %173 = arith.addi %170, %150 : i64
              %174 = arith.ori %173, %155 : i64
              %175 = arith.select %154, %c16_i64, %172 : i64
              "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %174, %158, %175) : (i64, i64, i64, i64, i64, i64) -> ()
              %176 = arith.muli %169, %c32_i64 : i64
              %177 = arith.addi %176, %142 : i64
              "instgem.compute_accumulated"(%177, %144, %172, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
              %178 = arith.subi %169, %c1_i64 : i64
              %179 = arith.cmpi slt, %178, %42 : i64
              scf.if %179 {
                %180 = arith.addi %36, %178 : i64
                %181 = arith.muli %180, %c16_i64 : i64
                %182 = arith.maxsi %181, %27 : i64
                %183 = arith.addi %181, %c16_i64 : i64
                %184 = arith.minsi %183, %37 : i64
                %185 = arith.subi %184, %182 : i64
                %186 = arith.subi %182, %27 : i64
                %187 = arith.muli %186, %35 : i64
                %188 = arith.addi %33, %187 : i64
                %189 = arith.muli %118, %c64_i64 : i64
                %190 = arith.addi %188, %189 : i64
                %191 = arith.addi %181, %150 : i64
                %192 = arith.ori %191, %c2684354560_i64 : i64
                %193 = arith.subi %182, %181 : i64
                %194 = arith.addi %192, %193 : i64
                %195 = arith.subi %29, %150 : i64
                %196 = arith.minsi %195, %c16_i64 : i64
                "instgem.mvout"(%190, %194, %196, %185) : (i64, i64, i64, i64) -> ()
              }
            }
          } else {
            %164 = arith.divsi %101, %c16_i64 : i64
            %165 = arith.minsi %108, %164 : i64
            %166 = arith.maxsi %165, %c1_i64 : i64
            %167 = arith.index_cast %166 : i64 to index
            scf.for %arg12 = %c1 to %167 step %c1 {
              %169 = arith.index_cast %arg12 : index to i64
              %170 = arith.muli %169, %c16_i64 : i64
              %171 = arith.addi %170, %150 : i64
              %172 = arith.ori %171, %155 : i64
              "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %172, %158, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
              %173 = arith.muli %169, %c32_i64 : i64
              %174 = arith.addi %173, %142 : i64
              "instgem.compute_accumulated"(%174, %144, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
            }
            %168 = arith.index_cast %108 : i64 to index
            scf.for %arg12 = %167 to %168 step %c1 {
              %169 = arith.index_cast %arg12 : index to i64
              %170 = arith.muli %169, %c16_i64 : i64
              %171 = arith.subi %101, %170 : i64
              %172 = arith.minsi %171, %c16_i64 : i64
              %173 = arith.addi %170, %150 : i64
              %174 = arith.ori %173, %155 : i64
              %175 = arith.select %154, %c16_i64, %172 : i64
              "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %174, %158, %175) : (i64, i64, i64, i64, i64, i64) -> ()
              %176 = arith.muli %169, %c32_i64 : i64
              %177 = arith.addi %176, %142 : i64
              "instgem.compute_accumulated"(%177, %144, %172, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
            }
          }
        }
        scf.if %123 {
          %141 = arith.muli %111, %125 : i64
          %142 = arith.minsi %141, %42 : i64
          %143 = arith.index_cast %142 : i64 to index
          %144 = arith.index_cast %42 : i64 to index
          scf.for %arg11 = %143 to %144 step %c1 {
            %145 = arith.index_cast %arg11 : index to i64
            %146 = arith.addi %36, %145 : i64
            %147 = arith.muli %146, %c16_i64 : i64
            %148 = arith.maxsi %147, %27 : i64
            %149 = arith.addi %147, %c16_i64 : i64
            %150 = arith.minsi %149, %37 : i64
            %151 = arith.subi %150, %148 : i64
            %152 = arith.subi %148, %27 : i64
            %153 = arith.muli %152, %35 : i64
            %154 = arith.addi %33, %153 : i64
            %155 = arith.muli %119, %c64_i64 : i64
            %156 = arith.addi %154, %155 : i64
            %157 = arith.muli %119, %c16_i64 : i64
            %158 = arith.addi %147, %157 : i64
            %159 = arith.ori %158, %c2684354560_i64 : i64
            %160 = arith.subi %148, %147 : i64
            %161 = arith.addi %159, %160 : i64
            %162 = arith.subi %29, %157 : i64
            %163 = arith.minsi %162, %c16_i64 : i64
            "instgem.mvout"(%156, %161, %163, %151) : (i64, i64, i64, i64) -> ()
          }
        }
        %136 = arith.cmpi sgt, %111, %c0_i64 : i64
        %137 = arith.subi %108, %c1_i64 : i64
        %138 = arith.maxsi %137, %c0_i64 : i64
        %139 = arith.minsi %138, %42 : i64
        %140 = arith.select %136, %139, %c0_i64 : i64
        scf.if %130 {
          %141 = arith.index_cast %140 : i64 to index
          %142 = arith.index_cast %42 : i64 to index
          scf.for %arg11 = %141 to %142 step %c1 {
            %143 = arith.index_cast %arg11 : index to i64
            %144 = arith.addi %36, %143 : i64
            %145 = arith.muli %144, %c16_i64 : i64
            %146 = arith.maxsi %145, %27 : i64
            %147 = arith.addi %145, %c16_i64 : i64
            %148 = arith.minsi %147, %37 : i64
            %149 = arith.subi %148, %146 : i64
            %150 = arith.subi %146, %27 : i64
            %151 = arith.muli %150, %35 : i64
            %152 = arith.addi %33, %151 : i64
            %153 = arith.muli %118, %c64_i64 : i64
            %154 = arith.addi %152, %153 : i64
            %155 = arith.muli %118, %c16_i64 : i64
            %156 = arith.addi %145, %155 : i64
            %157 = arith.ori %156, %c2684354560_i64 : i64
            %158 = arith.subi %146, %145 : i64
            %159 = arith.addi %157, %158 : i64
            %160 = arith.subi %29, %155 : i64
            %161 = arith.minsi %160, %c16_i64 : i64
            "instgem.mvout"(%154, %159, %161, %149) : (i64, i64, i64, i64) -> ()
          }
        }
      } {gemmini.compute_nest}
      scf.if %114 {
        scf.for %arg10 = %c0 to %c2 step %c1 {
          %118 = arith.index_cast %arg10 : index to i64
          %119 = arith.remsi %118, %c2_i64 : i64
          %120 = arith.divsi %118, %c2_i64 : i64
          %121 = arith.muli %120, %c16_i64 : i64
          %122 = arith.subi %c16_i64, %121 : i64
          %123 = arith.minsi %122, %c16_i64 : i64
          %124 = arith.muli %119, %c16_i64 : i64
          %125 = arith.addi %124, %121 : i64
          %126 = arith.ori %125, %c2147483648_i64 : i64
          %127 = arith.cmpi eq, %111, %c0_i64 : i64
          %128 = arith.cmpi sge, %119, %108 : i64
          %129 = arith.cmpi sge, %120, %116 : i64
          %130 = arith.ori %127, %128 : i1
          %131 = arith.ori %130, %129 : i1
          %132 = arith.cmpi slt, %120, %43 : i64
          %133 = arith.andi %131, %132 : i1
          scf.if %133 {
            "instgem.mvin"(%c0_i64, %126, %123, %c16_i64) : (i64, i64, i64, i64) -> ()
          }
        }
      }
      scf.if %113 {
        %118 = arith.minsi %116, %43 : i64
        %119 = arith.index_cast %118 : i64 to index
        %120 = arith.index_cast %43 : i64 to index
        scf.for %arg10 = %119 to %120 step %c1 {
          %121 = arith.index_cast %arg10 : index to i64
          %122 = arith.index_cast %42 : i64 to index
          scf.for %arg11 = %c0 to %122 step %c1 {
            %123 = arith.index_cast %arg11 : index to i64
            %124 = arith.addi %36, %123 : i64
            %125 = arith.muli %124, %c16_i64 : i64
            %126 = arith.maxsi %125, %27 : i64
            %127 = arith.addi %125, %c16_i64 : i64
            %128 = arith.minsi %127, %37 : i64
            %129 = arith.subi %128, %126 : i64
            %130 = arith.subi %126, %27 : i64
            %131 = arith.muli %130, %35 : i64
            %132 = arith.addi %33, %131 : i64
            %133 = arith.muli %121, %c64_i64 : i64
            %134 = arith.addi %132, %133 : i64
            %135 = arith.muli %121, %c16_i64 : i64
            %136 = arith.addi %125, %135 : i64
            %137 = arith.ori %136, %c2684354560_i64 : i64
            %138 = arith.subi %126, %125 : i64
            %139 = arith.addi %137, %138 : i64
            %140 = arith.subi %29, %135 : i64
            %141 = arith.minsi %140, %c16_i64 : i64
            "instgem.mvout"(%134, %139, %141, %129) : (i64, i64, i64, i64) -> ()
          }
        }
      }
      scf.yield %47, %71 : index, index
    }
    scf.if %26 {
      "instgem.config_st"(%c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %35, %c1065353216_i64) : (i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> ()
      %45 = arith.muli %42, %43 : i64
      %46 = arith.index_cast %45 : i64 to index
      scf.for %arg7 = %c0 to %46 step %c1 {
        %47 = arith.index_cast %arg7 : index to i64
        %48 = arith.remsi %47, %42 : i64
        %49 = arith.divsi %47, %42 : i64
        %50 = arith.addi %36, %48 : i64
        %51 = arith.muli %50, %c16_i64 : i64
        %52 = arith.maxsi %51, %27 : i64
        %53 = arith.addi %51, %c16_i64 : i64
        %54 = arith.minsi %53, %37 : i64
        %55 = arith.subi %54, %52 : i64
        %56 = arith.subi %52, %27 : i64
        %57 = arith.muli %56, %35 : i64
        %58 = arith.addi %33, %57 : i64
        %59 = arith.muli %49, %c64_i64 : i64
        %60 = arith.addi %58, %59 : i64
        %61 = arith.muli %49, %c16_i64 : i64
        %62 = arith.addi %51, %61 : i64
        %63 = arith.ori %62, %c2684354560_i64 : i64
        %64 = arith.subi %52, %51 : i64
        %65 = arith.addi %63, %64 : i64
        %66 = arith.subi %29, %61 : i64
        %67 = arith.minsi %66, %c16_i64 : i64
        "instgem.mvout"(%60, %65, %67, %55) : (i64, i64, i64, i64) -> ()
      }
    }
    return
  }
}
