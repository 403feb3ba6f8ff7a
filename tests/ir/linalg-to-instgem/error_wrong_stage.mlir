// RUN: not baco opt --pass linalg-to-instgem %s 2>&1 | FileCheck %s
// Input of stage config-elimination: the pass refuses it before running.
// CHECK: baco opt: this IR is the input of stage 'config-elimination', not the input of stage 'linalg-to-instgem'

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
        %102 = arith.index_cast %arg10 : index to i64
        %103 = arith.divsi %102, %60 : i64
        %104 = arith.addi %36, %103 : i64
        %105 = arith.remsi %102, %60 : i64
        %106 = arith.muli %104, %c16_i64 : i64
        %107 = arith.maxsi %106, %27 : i64
        %108 = arith.addi %106, %c16_i64 : i64
        %109 = arith.minsi %108, %37 : i64
        %110 = arith.subi %109, %107 : i64
        %111 = arith.subi %107, %27 : i64
        %112 = arith.muli %111, %59 : i64
        %113 = arith.addi %58, %112 : i64
        %114 = arith.muli %105, %c64_i64 : i64
        %115 = arith.addi %113, %114 : i64
        %116 = arith.muli %104, %c32_i64 : i64
        %117 = arith.addi %116, %114 : i64
        %118 = arith.subi %107, %106 : i64
        %119 = arith.addi %117, %118 : i64
        %120 = arith.subi %55, %114 : i64
        %121 = arith.minsi %120, %c64_i64 : i64
        "instgem.mvin"(%115, %119, %121, %110) : (i64, i64, i64, i64) -> ()
      } {gemmini.load_stream}
      %63 = arith.ceildivsi %27, %c16_i64 : i64
      %64 = arith.muli %63, %60 : i64
      %65 = arith.index_cast %64 : i64 to index
      scf.for %arg10 = %c0 to %65 step %c1 {
        %102 = arith.index_cast %arg10 : index to i64
        %103 = arith.divsi %102, %60 : i64
        %104 = arith.remsi %102, %60 : i64
        %105 = arith.muli %103, %c32_i64 : i64
        %106 = arith.muli %104, %c64_i64 : i64
        %107 = arith.addi %105, %106 : i64
        %108 = arith.subi %55, %106 : i64
        %109 = arith.minsi %108, %c64_i64 : i64
        %110 = arith.muli %103, %c16_i64 : i64
        %111 = arith.subi %27, %110 : i64
        %112 = arith.minsi %111, %c16_i64 : i64
        "instgem.mvin"(%c0_i64, %107, %109, %112) : (i64, i64, i64, i64) -> ()
      } {gemmini.load_stream}
      %66 = arith.maxsi %arg9, %c0 : index
      %67 = arith.minsi %66, %arg5 : index
      %68 = arith.addi %arg9, %c32 : index
      %69 = arith.maxsi %68, %c0 : index
      %70 = arith.minsi %69, %arg5 : index
      %71 = arith.subi %67, %arg9 : index
      %72 = arith.maxsi %71, %c0 : index
      %73 = arith.minsi %72, %c32 : index
      %74 = arith.subi %70, %67 : index
      scf.if %25 {
        func.call @baco_boundary_error(%c40_i64, %c62_i64) : (i64, i64) -> ()
      }
      %subview_8 = memref.subview %reinterpret_cast_0[%67, %17] [%74, %24] [1, 1] : memref<?x?xi8, strided<[?, 1]>> to memref<?x?xi8, strided<[?, 1], offset: ?>>
      %75 = arith.index_cast %73 : index to i64
      %76 = arith.index_cast %74 : index to i64
      %77 = arith.addi %75, %76 : i64
      %base_buffer_9, %offset_10, %sizes_11:2, %strides_12:2 = memref.extract_strided_metadata %subview_8 : memref<?x?xi8, strided<[?, 1], offset: ?>> -> memref<i8>, index, index, index, index, index
      %intptr_13 = memref.extract_aligned_pointer_as_index %subview_8 : memref<?x?xi8, strided<[?, 1], offset: ?>> -> index
      %78 = arith.index_cast %intptr_13 : index to i64
      %79 = arith.index_cast %offset_10 : index to i64
      %80 = arith.addi %78, %79 : i64
      %81 = arith.index_cast %strides_12#0 : index to i64
      "instgem.config_ld"(%c0_i64, %c0_i64, %c1_i64, %c16_i64, %c1065353216_i64, %81) : (i64, i64, i64, i64, i64, i64) -> ()
      %82 = arith.ceildivsi %29, %c64_i64 : i64
      %83 = arith.divsi %75, %c16_i64 : i64
      %84 = arith.ceildivsi %77, %c16_i64 : i64
      %85 = arith.subi %84, %83 : i64
      %86 = arith.cmpi sgt, %76, %c0_i64 : i64
      %87 = arith.extui %86 : i1 to i64
      %88 = arith.muli %85, %87 : i64
      %89 = arith.muli %88, %82 : i64
      %90 = arith.index_cast %89 : i64 to index
      scf.for %arg10 = %c0 to %90 step %c1 {
        %102 = arith.index_cast %arg10 : index to i64
        %103 = arith.divsi %102, %82 : i64
        %104 = arith.addi %83, %103 : i64
        %105 = arith.remsi %102, %82 : i64
        %106 = arith.muli %104, %c16_i64 : i64
        %107 = arith.maxsi %106, %75 : i64
        %108 = arith.addi %106, %c16_i64 : i64
        %109 = arith.minsi %108, %77 : i64
        %110 = arith.subi %109, %107 : i64
        %111 = arith.subi %107, %75 : i64
        %112 = arith.muli %111, %81 : i64
        %113 = arith.addi %80, %112 : i64
        %114 = arith.muli %105, %c64_i64 : i64
        %115 = arith.addi %113, %114 : i64
        %116 = arith.addi %106, %114 : i64
        %117 = arith.addi %116, %c64_i64 : i64
        %118 = arith.subi %107, %106 : i64
        %119 = arith.addi %117, %118 : i64
        %120 = arith.subi %29, %114 : i64
        %121 = arith.minsi %120, %c64_i64 : i64
        "instgem.mvin"(%115, %119, %121, %110) : (i64, i64, i64, i64) -> ()
      } {gemmini.load_stream}
      %91 = arith.ceildivsi %75, %c16_i64 : i64
      %92 = arith.muli %91, %82 : i64
      %93 = arith.index_cast %92 : i64 to index
      scf.for %arg10 = %c0 to %93 step %c1 {
        %102 = arith.index_cast %arg10 : index to i64
        %103 = arith.divsi %102, %82 : i64
        %104 = arith.remsi %102, %82 : i64
        %105 = arith.muli %103, %c16_i64 : i64
        %106 = arith.muli %104, %c64_i64 : i64
        %107 = arith.addi %105, %106 : i64
        %108 = arith.addi %107, %c64_i64 : i64
        %109 = arith.subi %29, %106 : i64
        %110 = arith.minsi %109, %c64_i64 : i64
        %111 = arith.subi %75, %105 : i64
        %112 = arith.minsi %111, %c16_i64 : i64
        "instgem.mvin"(%c0_i64, %108, %110, %112) : (i64, i64, i64, i64) -> ()
      } {gemmini.load_stream}
      %94 = arith.minsi %55, %77 : i64
      %95 = arith.ceildivsi %94, %c16_i64 : i64
      %96 = arith.addi %arg7, %c1 : index
      %97 = arith.cmpi sge, %96, %6 : index
      %98 = arith.cmpi eq, %arg7, %c0 : index
      %99 = arith.cmpi sgt, %38, %c0_i64 : i64
      %100 = arith.select %99, %43, %c0_i64 : i64
      %101 = arith.index_cast %100 : i64 to index
      scf.for %arg10 = %c0 to %101 step %c1 {
        %102 = arith.index_cast %arg10 : index to i64
        %103 = arith.subi %102, %c1_i64 : i64
        %104 = arith.cmpi sge, %103, %c0_i64 : i64
        %105 = arith.cmpi slt, %103, %43 : i64
        %106 = arith.andi %104, %105 : i1
        %107 = arith.andi %97, %106 : i1
        %108 = arith.maxsi %95, %c1_i64 : i64
        %109 = arith.ceildivsi %42, %108 : i64
        %110 = arith.subi %100, %c1_i64 : i64
        %111 = arith.cmpi eq, %102, %110 : i64
        %112 = arith.cmpi slt, %102, %43 : i64
        %113 = arith.andi %111, %112 : i1
        %114 = arith.andi %97, %113 : i1
        %115 = arith.index_cast %95 : i64 to index
        scf.for %arg11 = %c0 to %115 step %c1 {
          %121 = arith.index_cast %arg11 : index to i64
          %122 = arith.muli %121, %109 : i64
          %123 = arith.minsi %122, %42 : i64
          scf.if %107 {
            %142 = arith.addi %123, %109 : i64
            %143 = arith.minsi %142, %42 : i64
            %144 = arith.index_cast %123 : i64 to index
            %145 = arith.index_cast %143 : i64 to index
            scf.for %arg12 = %144 to %145 step %c1 {
              %146 = arith.index_cast %arg12 : index to i64
              %147 = arith.addi %36, %146 : i64
              %148 = arith.muli %147, %c16_i64 : i64
              %149 = arith.maxsi %148, %27 : i64
              %150 = arith.addi %148, %c16_i64 : i64
              %151 = arith.minsi %150, %37 : i64
              %152 = arith.subi %151, %149 : i64
              %153 = arith.subi %149, %27 : i64
              %154 = arith.muli %153, %35 : i64
              %155 = arith.addi %33, %154 : i64
              %156 = arith.muli %103, %c64_i64 : i64
              %157 = arith.addi %155, %156 : i64
              %158 = arith.muli %103, %c16_i64 : i64
              %159 = arith.addi %148, %158 : i64
              %160 = arith.ori %159, %c2684354560_i64 : i64
              %161 = arith.subi %149, %148 : i64
              %162 = arith.addi %160, %161 : i64
              %163 = arith.subi %29, %158 : i64
              %164 = arith.minsi %163, %c16_i64 : i64
              "instgem.mvout"(%157, %162, %164, %152) : (i64, i64, i64, i64) -> ()
            }
          }
          %124 = arith.minsi %37, %c16_i64 : i64
          %125 = arith.muli %102, %c16_i64 : i64
          %126 = arith.subi %29, %125 : i64
          %127 = arith.minsi %126, %c16_i64 : i64
          %128 = arith.cmpi eq, %121, %c0_i64 : i64
          %129 = arith.andi %98, %128 : i1
          %130 = arith.select %129, %c2147483648_i64, %c3221225472_i64 : i64
          %131 = arith.ori %125, %130 : i64
          %132 = arith.select %129, %c16_i64, %124 : i64
          %133 = arith.select %129, %c16_i64, %127 : i64
          %134 = arith.muli %121, %c16_i64 : i64
          %135 = arith.addi %134, %125 : i64
          %136 = arith.addi %135, %c64_i64 : i64
          %137 = arith.subi %77, %134 : i64
          %138 = arith.minsi %137, %c16_i64 : i64
          "instgem.preload"(%136, %127, %138, %131, %133, %132) : (i64, i64, i64, i64, i64, i64) -> ()
          %139 = arith.subi %55, %134 : i64
          %140 = arith.minsi %139, %c16_i64 : i64
          "instgem.compute_preloaded"(%134, %140, %124, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
          %141 = arith.index_cast %38 : i64 to index
          scf.for %arg12 = %c1 to %141 step %c1 {
            %142 = arith.index_cast %arg12 : index to i64
            %143 = arith.muli %142, %c16_i64 : i64
            %144 = arith.subi %37, %143 : i64
            %145 = arith.minsi %144, %c16_i64 : i64
            %146 = arith.addi %143, %125 : i64
            %147 = arith.ori %146, %130 : i64
            %148 = arith.select %129, %c16_i64, %145 : i64
            "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %147, %133, %148) : (i64, i64, i64, i64, i64, i64) -> ()
            %149 = arith.muli %142, %c32_i64 : i64
            %150 = arith.addi %149, %134 : i64
            "instgem.compute_accumulated"(%150, %140, %145, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
            %151 = arith.subi %142, %c1_i64 : i64
            %152 = arith.subi %95, %c1_i64 : i64
            %153 = arith.cmpi eq, %121, %152 : i64
            %154 = arith.andi %114, %153 : i1
            %155 = arith.cmpi slt, %151, %42 : i64
            %156 = arith.andi %154, %155 : i1
            scf.if %156 {
              %157 = arith.addi %36, %151 : i64
              %158 = arith.muli %157, %c16_i64 : i64
              %159 = arith.maxsi %158, %27 : i64
              %160 = arith.addi %158, %c16_i64 : i64
              %161 = arith.minsi %160, %37 : i64
              %162 = arith.subi %161, %159 : i64
              %163 = arith.subi %159, %27 : i64
              %164 = arith.muli %163, %35 : i64
              %165 = arith.addi %33, %164 : i64
              %166 = arith.muli %102, %c64_i64 : i64
              %167 = arith.addi %165, %166 : i64
              %168 = arith.addi %158, %125 : i64
              %169 = arith.ori %168, %c2684354560_i64 : i64
              %170 = arith.subi %159, %158 : i64
              %171 = arith.addi %169, %170 : i64
              "instgem.mvout"(%167, %171, %127, %162) : (i64, i64, i64, i64) -> ()
            }
          }
        }
        scf.if %107 {
          %121 = arith.muli %95, %109 : i64
          %122 = arith.minsi %121, %42 : i64
          %123 = arith.index_cast %122 : i64 to index
          %124 = arith.index_cast %42 : i64 to index
          scf.for %arg11 = %123 to %124 step %c1 {
            %125 = arith.index_cast %arg11 : index to i64
            %126 = arith.addi %36, %125 : i64
            %127 = arith.muli %126, %c16_i64 : i64
            %128 = arith.maxsi %127, %27 : i64
            %129 = arith.addi %127, %c16_i64 : i64
            %130 = arith.minsi %129, %37 : i64
            %131 = arith.subi %130, %128 : i64
            %132 = arith.subi %128, %27 : i64
            %133 = arith.muli %132, %35 : i64
            %134 = arith.addi %33, %133 : i64
            %135 = arith.muli %103, %c64_i64 : i64
            %136 = arith.addi %134, %135 : i64
            %137 = arith.muli %103, %c16_i64 : i64
            %138 = arith.addi %127, %137 : i64
            %139 = arith.ori %138, %c2684354560_i64 : i64
            %140 = arith.subi %128, %127 : i64
            %141 = arith.addi %139, %140 : i64
            %142 = arith.subi %29, %137 : i64
            %143 = arith.minsi %142, %c16_i64 : i64
            "instgem.mvout"(%136, %141, %143, %131) : (i64, i64, i64, i64) -> ()
          }
        }
        %116 = arith.cmpi sgt, %95, %c0_i64 : i64
        %117 = arith.subi %38, %c1_i64 : i64
        %118 = arith.maxsi %117, %c0_i64 : i64
        %119 = arith.minsi %118, %42 : i64
        %120 = arith.select %116, %119, %c0_i64 : i64
        scf.if %114 {
          %121 = arith.index_cast %120 : i64 to index
          %122 = arith.index_cast %42 : i64 to index
          scf.for %arg11 = %121 to %122 step %c1 {
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
            %133 = arith.muli %102, %c64_i64 : i64
            %134 = arith.addi %132, %133 : i64
            %135 = arith.muli %102, %c16_i64 : i64
            %136 = arith.addi %125, %135 : i64
            %137 = arith.ori %136, %c2684354560_i64 : i64
            %138 = arith.subi %126, %125 : i64
            %139 = arith.addi %137, %138 : i64
            %140 = arith.subi %29, %135 : i64
            %141 = arith.minsi %140, %c16_i64 : i64
            "instgem.mvout"(%134, %139, %141, %129) : (i64, i64, i64, i64) -> ()
          }
        }
      } {gemmini.compute_nest}
      scf.if %98 {
        scf.for %arg10 = %c0 to %c2 step %c1 {
          %102 = arith.index_cast %arg10 : index to i64
          %103 = arith.remsi %102, %c2_i64 : i64
          %104 = arith.divsi %102, %c2_i64 : i64
          %105 = arith.muli %104, %c16_i64 : i64
          %106 = arith.subi %c16_i64, %105 : i64
          %107 = arith.minsi %106, %c16_i64 : i64
          %108 = arith.muli %103, %c16_i64 : i64
          %109 = arith.addi %108, %105 : i64
          %110 = arith.ori %109, %c2147483648_i64 : i64
          %111 = arith.cmpi eq, %95, %c0_i64 : i64
          %112 = arith.cmpi sge, %103, %38 : i64
          %113 = arith.cmpi sge, %104, %100 : i64
          %114 = arith.ori %111, %112 : i1
          %115 = arith.ori %114, %113 : i1
          scf.if %115 {
            "instgem.mvin"(%c0_i64, %110, %107, %c16_i64) : (i64, i64, i64, i64) -> ()
          }
        }
      }
      scf.if %97 {
        %102 = arith.minsi %100, %43 : i64
        %103 = arith.index_cast %102 : i64 to index
        %104 = arith.index_cast %43 : i64 to index
        scf.for %arg10 = %103 to %104 step %c1 {
          %105 = arith.index_cast %arg10 : index to i64
          %106 = arith.index_cast %42 : i64 to index
          scf.for %arg11 = %c0 to %106 step %c1 {
            %107 = arith.index_cast %arg11 : index to i64
            %108 = arith.addi %36, %107 : i64
            %109 = arith.muli %108, %c16_i64 : i64
            %110 = arith.maxsi %109, %27 : i64
            %111 = arith.addi %109, %c16_i64 : i64
            %112 = arith.minsi %111, %37 : i64
            %113 = arith.subi %112, %110 : i64
            %114 = arith.subi %110, %27 : i64
            %115 = arith.muli %114, %35 : i64
            %116 = arith.addi %33, %115 : i64
            %117 = arith.muli %105, %c64_i64 : i64
            %118 = arith.addi %116, %117 : i64
            %119 = arith.muli %105, %c16_i64 : i64
            %120 = arith.addi %109, %119 : i64
            %121 = arith.ori %120, %c2684354560_i64 : i64
            %122 = arith.subi %110, %109 : i64
            %123 = arith.addi %121, %122 : i64
            %124 = arith.subi %29, %119 : i64
            %125 = arith.minsi %124, %c16_i64 : i64
            "instgem.mvout"(%118, %123, %125, %113) : (i64, i64, i64, i64) -> ()
          }
        }
      }
      scf.yield %47, %68 : index, index
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
