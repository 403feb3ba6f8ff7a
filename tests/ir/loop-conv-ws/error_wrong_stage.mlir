// RUN: not baco opt --pass loop-conv-ws %s 2>&1 | FileCheck %s
// Input of stage config-elimination: the pass refuses it before running.
// CHECK: baco opt: this IR is the input of stage 'config-elimination', not the input of stage 'loop-conv-ws'

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
        %108 = arith.index_cast %arg10 : index to i64
        %109 = arith.divsi %108, %60 : i64
        %110 = arith.addi %36, %109 : i64
        %111 = arith.remsi %108, %60 : i64
        %112 = arith.muli %110, %c16_i64 : i64
        %113 = arith.maxsi %112, %27 : i64
        %114 = arith.addi %112, %c16_i64 : i64
        %115 = arith.minsi %114, %37 : i64
        %116 = arith.subi %115, %113 : i64
        %117 = arith.subi %113, %27 : i64
        %118 = arith.muli %117, %59 : i64
        %119 = arith.addi %58, %118 : i64
        %120 = arith.muli %111, %c64_i64 : i64
        %121 = arith.addi %119, %120 : i64
        %122 = arith.muli %110, %c32_i64 : i64
        %123 = arith.addi %122, %120 : i64
        %124 = arith.subi %113, %112 : i64
        %125 = arith.addi %123, %124 : i64
        %126 = arith.subi %55, %120 : i64
        %127 = arith.minsi %126, %c64_i64 : i64
        "instgem.mvin"(%121, %125, %127, %116) : (i64, i64, i64, i64) -> ()
      } {gemmini.load_stream}
      %63 = arith.ceildivsi %27, %c16_i64 : i64
      %64 = arith.cmpi sgt, %27, %c0_i64 : i64
      %65 = arith.extui %64 : i1 to i64
      %66 = arith.muli %63, %65 : i64
      %67 = arith.muli %66, %60 : i64
      %68 = arith.index_cast %67 : i64 to index
      scf.for %arg10 = %c0 to %68 step %c1 {
        %108 = arith.index_cast %arg10 : index to i64
        %109 = arith.divsi %108, %60 : i64
        %110 = arith.remsi %108, %60 : i64
        %111 = arith.muli %109, %c16_i64 : i64
        %112 = arith.maxsi %111, %c0_i64 : i64
        %113 = arith.addi %111, %c16_i64 : i64
        %114 = arith.minsi %113, %27 : i64
        %115 = arith.subi %114, %112 : i64
        %116 = arith.muli %109, %c32_i64 : i64
        %117 = arith.muli %110, %c64_i64 : i64
        %118 = arith.addi %116, %117 : i64
        %119 = arith.subi %112, %111 : i64
        %120 = arith.addi %118, %119 : i64
        %121 = arith.subi %55, %117 : i64
        %122 = arith.minsi %121, %c64_i64 : i64
        "instgem.mvin"(%c0_i64, %120, %122, %115) : (i64, i64, i64, i64) -> ()
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
        %108 = arith.index_cast %arg10 : index to i64
        %109 = arith.divsi %108, %85 : i64
        %110 = arith.addi %86, %109 : i64
        %111 = arith.remsi %108, %85 : i64
        %112 = arith.muli %110, %c16_i64 : i64
        %113 = arith.maxsi %112, %78 : i64
        %114 = arith.addi %112, %c16_i64 : i64
        %115 = arith.minsi %114, %80 : i64
        %116 = arith.subi %115, %113 : i64
        %117 = arith.subi %113, %78 : i64
        %118 = arith.muli %117, %84 : i64
        %119 = arith.addi %83, %118 : i64
        %120 = arith.muli %111, %c64_i64 : i64
        %121 = arith.addi %119, %120 : i64
        %122 = arith.addi %112, %120 : i64
        %123 = arith.addi %122, %c64_i64 : i64
        %124 = arith.subi %113, %112 : i64
        %125 = arith.addi %123, %124 : i64
        %126 = arith.subi %29, %120 : i64
        %127 = arith.minsi %126, %c64_i64 : i64
        "instgem.mvin"(%121, %125, %127, %116) : (i64, i64, i64, i64) -> ()
      } {gemmini.load_stream}
      %94 = arith.ceildivsi %78, %c16_i64 : i64
      %95 = arith.cmpi sgt, %78, %c0_i64 : i64
      %96 = arith.extui %95 : i1 to i64
      %97 = arith.muli %94, %96 : i64
      %98 = arith.muli %97, %85 : i64
      %99 = arith.index_cast %98 : i64 to index
      scf.for %arg10 = %c0 to %99 step %c1 {
        %108 = arith.index_cast %arg10 : index to i64
        %109 = arith.divsi %108, %85 : i64
        %110 = arith.remsi %108, %85 : i64
        %111 = arith.muli %109, %c16_i64 : i64
        %112 = arith.maxsi %111, %c0_i64 : i64
        %113 = arith.addi %111, %c16_i64 : i64
        %114 = arith.minsi %113, %78 : i64
        %115 = arith.subi %114, %112 : i64
        %116 = arith.muli %110, %c64_i64 : i64
        %117 = arith.addi %111, %116 : i64
        %118 = arith.addi %117, %c64_i64 : i64
        %119 = arith.subi %112, %111 : i64
        %120 = arith.addi %118, %119 : i64
        %121 = arith.subi %29, %116 : i64
        %122 = arith.minsi %121, %c64_i64 : i64
        "instgem.mvin"(%c0_i64, %120, %122, %115) : (i64, i64, i64, i64) -> ()
      } {gemmini.load_stream}
      %100 = arith.minsi %55, %80 : i64
      %101 = arith.ceildivsi %100, %c16_i64 : i64
      %102 = arith.addi %arg7, %c1 : index
      %103 = arith.cmpi sge, %102, %6 : index
      %104 = arith.cmpi eq, %arg7, %c0 : index
      %105 = arith.cmpi sgt, %38, %c0_i64 : i64
      %106 = arith.select %105, %43, %c0_i64 : i64
      %107 = arith.index_cast %106 : i64 to index
      scf.for %arg10 = %c0 to %107 step %c1 {
        %108 = arith.index_cast %arg10 : index to i64
        %109 = arith.subi %108, %c1_i64 : i64
        %110 = arith.cmpi sge, %109, %c0_i64 : i64
        %111 = arith.cmpi slt, %109, %43 : i64
        %112 = arith.andi %110, %111 : i1
        %113 = arith.andi %103, %112 : i1
        %114 = arith.maxsi %101, %c1_i64 : i64
        %115 = arith.ceildivsi %42, %114 : i64
        %116 = arith.subi %106, %c1_i64 : i64
        %117 = arith.cmpi eq, %108, %116 : i64
        %118 = arith.cmpi slt, %108, %43 : i64
        %119 = arith.andi %117, %118 : i1
        %120 = arith.andi %103, %119 : i1
        %121 = arith.index_cast %101 : i64 to index
        scf.for %arg11 = %c0 to %121 step %c1 {
          %127 = arith.index_cast %arg11 : index to i64
          %128 = arith.muli %127, %115 : i64
          %129 = arith.minsi %128, %42 : i64
          scf.if %113 {
            %148 = arith.addi %129, %115 : i64
            %149 = arith.minsi %148, %42 : i64
            %150 = arith.index_cast %129 : i64 to index
            %151 = arith.index_cast %149 : i64 to index
            scf.for %arg12 = %150 to %151 step %c1 {
              %152 = arith.index_cast %arg12 : index to i64
              %153 = arith.addi %36, %152 : i64
              %154 = arith.muli %153, %c16_i64 : i64
              %155 = arith.maxsi %154, %27 : i64
              %156 = arith.addi %154, %c16_i64 : i64
              %157 = arith.minsi %156, %37 : i64
              %158 = arith.subi %157, %155 : i64
              %159 = arith.subi %155, %27 : i64
              %160 = arith.muli %159, %35 : i64
              %161 = arith.addi %33, %160 : i64
              %162 = arith.muli %109, %c64_i64 : i64
              %163 = arith.addi %161, %162 : i64
              %164 = arith.muli %109, %c16_i64 : i64
              %165 = arith.addi %154, %164 : i64
              %166 = arith.ori %165, %c2684354560_i64 : i64
              %167 = arith.subi %155, %154 : i64
              %168 = arith.addi %166, %167 : i64
              %169 = arith.subi %29, %164 : i64
              %170 = arith.minsi %169, %c16_i64 : i64
              "instgem.mvout"(%163, %168, %170, %158) : (i64, i64, i64, i64) -> ()
            }
          }
          %130 = arith.minsi %37, %c16_i64 : i64
          %131 = arith.muli %108, %c16_i64 : i64
          %132 = arith.subi %29, %131 : i64
          %133 = arith.minsi %132, %c16_i64 : i64
          %134 = arith.cmpi eq, %127, %c0_i64 : i64
          %135 = arith.andi %104, %134 : i1
          %136 = arith.select %135, %c2147483648_i64, %c3221225472_i64 : i64
          %137 = arith.ori %131, %136 : i64
          %138 = arith.select %135, %c16_i64, %130 : i64
          %139 = arith.select %135, %c16_i64, %133 : i64
          %140 = arith.muli %127, %c16_i64 : i64
          %141 = arith.addi %140, %131 : i64
          %142 = arith.addi %141, %c64_i64 : i64
          %143 = arith.subi %80, %140 : i64
          %144 = arith.minsi %143, %c16_i64 : i64
          "instgem.preload"(%142, %133, %144, %137, %139, %138) : (i64, i64, i64, i64, i64, i64) -> ()
          %145 = arith.subi %55, %140 : i64
          %146 = arith.minsi %145, %c16_i64 : i64
          "instgem.compute_preloaded"(%140, %146, %130, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
          %147 = arith.index_cast %38 : i64 to index
          scf.for %arg12 = %c1 to %147 step %c1 {
            %148 = arith.index_cast %arg12 : index to i64
            %149 = arith.muli %148, %c16_i64 : i64
            %150 = arith.subi %37, %149 : i64
            %151 = arith.minsi %150, %c16_i64 : i64
            %152 = arith.addi %149, %131 : i64
            %153 = arith.ori %152, %136 : i64
            %154 = arith.select %135, %c16_i64, %151 : i64
            "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %153, %139, %154) : (i64, i64, i64, i64, i64, i64) -> ()
            %155 = arith.muli %148, %c32_i64 : i64
            %156 = arith.addi %155, %140 : i64
            "instgem.compute_accumulated"(%156, %146, %151, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
            %157 = arith.subi %148, %c1_i64 : i64
            %158 = arith.subi %101, %c1_i64 : i64
            %159 = arith.cmpi eq, %127, %158 : i64
            %160 = arith.andi %120, %159 : i1
            %161 = arith.cmpi slt, %157, %42 : i64
            %162 = arith.andi %160, %161 : i1
            scf.if %162 {
              %163 = arith.addi %36, %157 : i64
              %164 = arith.muli %163, %c16_i64 : i64
              %165 = arith.maxsi %164, %27 : i64
              %166 = arith.addi %164, %c16_i64 : i64
              %167 = arith.minsi %166, %37 : i64
              %168 = arith.subi %167, %165 : i64
              %169 = arith.subi %165, %27 : i64
              %170 = arith.muli %169, %35 : i64
              %171 = arith.addi %33, %170 : i64
              %172 = arith.muli %108, %c64_i64 : i64
              %173 = arith.addi %171, %172 : i64
              %174 = arith.addi %164, %131 : i64
              %175 = arith.ori %174, %c2684354560_i64 : i64
              %176 = arith.subi %165, %164 : i64
              %177 = arith.addi %175, %176 : i64
              "instgem.mvout"(%173, %177, %133, %168) : (i64, i64, i64, i64) -> ()
            }
          }
        }
        scf.if %113 {
          %127 = arith.muli %101, %115 : i64
          %128 = arith.minsi %127, %42 : i64
          %129 = arith.index_cast %128 : i64 to index
          %130 = arith.index_cast %42 : i64 to index
          scf.for %arg11 = %129 to %130 step %c1 {
            %131 = arith.index_cast %arg11 : index to i64
            %132 = arith.addi %36, %131 : i64
            %133 = arith.muli %132, %c16_i64 : i64
            %134 = arith.maxsi %133, %27 : i64
            %135 = arith.addi %133, %c16_i64 : i64
            %136 = arith.minsi %135, %37 : i64
            %137 = arith.subi %136, %134 : i64
            %138 = arith.subi %134, %27 : i64
            %139 = arith.muli %138, %35 : i64
            %140 = arith.addi %33, %139 : i64
            %141 = arith.muli %109, %c64_i64 : i64
            %142 = arith.addi %140, %141 : i64
            %143 = arith.muli %109, %c16_i64 : i64
            %144 = arith.addi %133, %143 : i64
            %145 = arith.ori %144, %c2684354560_i64 : i64
            %146 = arith.subi %134, %133 : i64
            %147 = arith.addi %145, %146 : i64
            %148 = arith.subi %29, %143 : i64
            %149 = arith.minsi %148, %c16_i64 : i64
            "instgem.mvout"(%142, %147, %149, %137) : (i64, i64, i64, i64) -> ()
          }
        }
        %122 = arith.cmpi sgt, %101, %c0_i64 : i64
        %123 = arith.subi %38, %c1_i64 : i64
        %124 = arith.maxsi %123, %c0_i64 : i64
        %125 = arith.minsi %124, %42 : i64
        %126 = arith.select %122, %125, %c0_i64 : i64
        scf.if %120 {
          %127 = arith.index_cast %126 : i64 to index
          %128 = arith.index_cast %42 : i64 to index
          scf.for %arg11 = %127 to %128 step %c1 {
            %129 = arith.index_cast %arg11 : index to i64
            %130 = arith.addi %36, %129 : i64
            %131 = arith.muli %130, %c16_i64 : i64
            %132 = arith.maxsi %131, %27 : i64
            %133 = arith.addi %131, %c16_i64 : i64
            %134 = arith.minsi %133, %37 : i64
            %135 = arith.subi %134, %132 : i64
            %136 = arith.subi %132, %27 : i64
            %137 = arith.muli %136, %35 : i64
            %138 = arith.addi %33, %137 : i64
            %139 = arith.muli %108, %c64_i64 : i64
            %140 = arith.addi %138, %139 : i64
            %141 = arith.muli %108, %c16_i64 : i64
            %142 = arith.addi %131, %141 : i64
            %143 = arith.ori %142, %c2684354560_i64 : i64
            %144 = arith.subi %132, %131 : i64
            %145 = arith.addi %143, %144 : i64
            %146 = arith.subi %29, %141 : i64
            %147 = arith.minsi %146, %c16_i64 : i64
            "instgem.mvout"(%140, %145, %147, %135) : (i64, i64, i64, i64) -> ()
          }
        }
      } {gemmini.compute_nest}
      scf.if %104 {
        scf.for %arg10 = %c0 to %c2 step %c1 {
          %108 = arith.index_cast %arg10 : index to i64
          %109 = arith.remsi %108, %c2_i64 : i64
          %110 = arith.divsi %108, %c2_i64 : i64
          %111 = arith.muli %110, %c16_i64 : i64
          %112 = arith.subi %c16_i64, %111 : i64
          %113 = arith.minsi %112, %c16_i64 : i64
          %114 = arith.muli %109, %c16_i64 : i64
          %115 = arith.addi %114, %111 : i64
          %116 = arith.ori %115, %c2147483648_i64 : i64
          %117 = arith.cmpi eq, %101, %c0_i64 : i64
          %118 = arith.cmpi sge, %109, %38 : i64
          %119 = arith.cmpi sge, %110, %106 : i64
          %120 = arith.ori %117, %118 : i1
          %121 = arith.ori %120, %119 : i1
          %122 = arith.cmpi slt, %110, %43 : i64
          %123 = arith.andi %121, %122 : i1
          scf.if %123 {
            "instgem.mvin"(%c0_i64, %116, %113, %c16_i64) : (i64, i64, i64, i64) -> ()
          }
        }
      }
      scf.if %103 {
        %108 = arith.minsi %106, %43 : i64
        %109 = arith.index_cast %108 : i64 to index
        %110 = arith.index_cast %43 : i64 to index
        scf.for %arg10 = %109 to %110 step %c1 {
          %111 = arith.index_cast %arg10 : index to i64
          %112 = arith.index_cast %42 : i64 to index
          scf.for %arg11 = %c0 to %112 step %c1 {
            %113 = arith.index_cast %arg11 : index to i64
            %114 = arith.addi %36, %113 : i64
            %115 = arith.muli %114, %c16_i64 : i64
            %116 = arith.maxsi %115, %27 : i64
            %117 = arith.addi %115, %c16_i64 : i64
            %118 = arith.minsi %117, %37 : i64
            %119 = arith.subi %118, %116 : i64
            %120 = arith.subi %116, %27 : i64
            %121 = arith.muli %120, %35 : i64
            %122 = arith.addi %33, %121 : i64
            %123 = arith.muli %111, %c64_i64 : i64
            %124 = arith.addi %122, %123 : i64
            %125 = arith.muli %111, %c16_i64 : i64
            %126 = arith.addi %115, %125 : i64
            %127 = arith.ori %126, %c2684354560_i64 : i64
            %128 = arith.subi %116, %115 : i64
            %129 = arith.addi %127, %128 : i64
            %130 = arith.subi %29, %125 : i64
            %131 = arith.minsi %130, %c16_i64 : i64
            "instgem.mvout"(%124, %129, %131, %119) : (i64, i64, i64, i64) -> ()
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
    "instgem.fence"() : () -> ()
    return
  }
}
