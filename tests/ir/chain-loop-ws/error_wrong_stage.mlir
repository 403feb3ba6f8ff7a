// RUN: not baco opt --pass chain-loop-ws %s 2>&1 | FileCheck %s
// Input of stage config-elimination: the pass refuses it before running.
// CHECK: baco opt: this IR is the input of stage 'config-elimination', not the input of stage 'chain-loop-ws'

module {
  func.func private @baco_boundary_error(i64, i64)
  func.func private @baco_program_id(i64) -> i64
  func.func @gemm(%arg0: memref<?xi8>, %arg1: memref<?xi8>, %arg2: memref<?xi32>, %arg3: index, %arg4: index, %arg5: index, %arg6: f32) attributes {gemmini.acc_rows_used = 32 : i64, gemmini.sp_rows_used = 96 : i64} {
    %c2 = arith.constant 2 : index
    %c3221225472_i64 = arith.constant 3221225472 : i64
    %c2684354560_i64 = arith.constant 2684354560 : i64
    %c-1_i64 = arith.constant -1 : i64
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
      func.call @baco_boundary_error(%c48_i64, %c9_i64) : (i64, i64) -> ()
    }
    %subview = memref.subview %reinterpret_cast_1[%8, %17] [%15, %24] [1, 1] : memref<?x?xi32, strided<[?, 1]>> to memref<?x?xi32, strided<[?, 1], offset: ?>>
    %26 = arith.cmpi sle, %6, %c0 : index
    scf.if %26 {
      "instgem.config_ld"(%c0_i64, %c0_i64, %c1_i64, %c16_i64, %c1065353216_i64, %c64_i64) : (i64, i64, i64, i64, i64, i64) -> ()
      scf.for %arg7 = %c0 to %c2 step %c1 {
        %45 = arith.index_cast %arg7 : index to i64
        %46 = arith.muli %45, %c16_i64 : i64
        %47 = arith.ori %46, %c2147483648_i64 : i64
        "instgem.mvin"(%c0_i64, %47, %c16_i64, %c16_i64) : (i64, i64, i64, i64) -> ()
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
        func.call @baco_boundary_error(%c41_i64, %c27_i64) : (i64, i64) -> ()
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
        %126 = arith.index_cast %arg10 : index to i64
        %127 = arith.addi %36, %126 : i64
        %128 = arith.muli %127, %c16_i64 : i64
        %129 = arith.maxsi %128, %27 : i64
        %130 = arith.addi %128, %c16_i64 : i64
        %131 = arith.minsi %130, %37 : i64
        %132 = arith.subi %131, %129 : i64
        %133 = arith.subi %129, %27 : i64
        %134 = arith.muli %133, %59 : i64
        %135 = arith.addi %58, %134 : i64
        %136 = arith.muli %127, %c32_i64 : i64
        %137 = arith.subi %129, %128 : i64
        %138 = arith.addi %136, %137 : i64
        %139 = arith.minsi %55, %c64_i64 : i64
        "instgem.mvin"(%135, %138, %139, %132) : (i64, i64, i64, i64) -> ()
      } {gemmini.load_stream}
      %63 = arith.ceildivsi %27, %c16_i64 : i64
      %64 = arith.cmpi sgt, %27, %c0_i64 : i64
      %65 = arith.extui %64 : i1 to i64
      %66 = arith.muli %63, %65 : i64
      %67 = arith.muli %66, %60 : i64
      %68 = arith.index_cast %67 : i64 to index
      scf.for %arg10 = %c0 to %68 step %c1 {
        %126 = arith.index_cast %arg10 : index to i64
        %127 = arith.muli %126, %c16_i64 : i64
        %128 = arith.maxsi %127, %c0_i64 : i64
        %129 = arith.addi %127, %c16_i64 : i64
        %130 = arith.minsi %129, %27 : i64
        %131 = arith.subi %130, %128 : i64
        %132 = arith.muli %126, %c32_i64 : i64
        %133 = arith.subi %128, %127 : i64
        %134 = arith.addi %132, %133 : i64
        %135 = arith.minsi %55, %c64_i64 : i64
        "instgem.mvin"(%c0_i64, %134, %135, %131) : (i64, i64, i64, i64) -> ()
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
        func.call @baco_boundary_error(%c41_i64, %c62_i64) : (i64, i64) -> ()
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
        %126 = arith.index_cast %arg10 : index to i64
        %127 = arith.addi %86, %126 : i64
        %128 = arith.muli %127, %c16_i64 : i64
        %129 = arith.maxsi %128, %78 : i64
        %130 = arith.addi %128, %c16_i64 : i64
        %131 = arith.minsi %130, %80 : i64
        %132 = arith.subi %131, %129 : i64
        %133 = arith.subi %129, %78 : i64
        %134 = arith.muli %133, %84 : i64
        %135 = arith.addi %83, %134 : i64
        %136 = arith.addi %128, %c64_i64 : i64
        %137 = arith.subi %129, %128 : i64
        %138 = arith.addi %136, %137 : i64
        %139 = arith.minsi %29, %c64_i64 : i64
        "instgem.mvin"(%135, %138, %139, %132) : (i64, i64, i64, i64) -> ()
      } {gemmini.load_stream}
      %94 = arith.ceildivsi %78, %c16_i64 : i64
      %95 = arith.cmpi sgt, %78, %c0_i64 : i64
      %96 = arith.extui %95 : i1 to i64
      %97 = arith.muli %94, %96 : i64
      %98 = arith.muli %97, %85 : i64
      %99 = arith.index_cast %98 : i64 to index
      scf.for %arg10 = %c0 to %99 step %c1 {
        %126 = arith.index_cast %arg10 : index to i64
        %127 = arith.muli %126, %c16_i64 : i64
        %128 = arith.maxsi %127, %c0_i64 : i64
        %129 = arith.addi %127, %c16_i64 : i64
        %130 = arith.minsi %129, %78 : i64
        %131 = arith.subi %130, %128 : i64
        %132 = arith.addi %127, %c64_i64 : i64
        %133 = arith.subi %128, %127 : i64
        %134 = arith.addi %132, %133 : i64
        %135 = arith.minsi %29, %c64_i64 : i64
        "instgem.mvin"(%c0_i64, %134, %135, %131) : (i64, i64, i64, i64) -> ()
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
      %118 = arith.divsi %110, %c16_i64 : i64
      %119 = arith.minsi %111, %118 : i64
      %120 = arith.maxsi %119, %c0_i64 : i64
      %121 = arith.divsi %101, %c16_i64 : i64
      %122 = arith.minsi %108, %121 : i64
      %123 = arith.maxsi %122, %c1_i64 : i64
      %124 = arith.minsi %101, %c16_i64 : i64
      %125 = arith.ori %114, %113 : i1
      scf.if %125 {
        %126 = arith.maxsi %111, %c1_i64 : i64
        %127 = arith.ceildivsi %42, %126 : i64
        %128 = arith.select %114, %c0_i64, %c-1_i64 : i64
        scf.for %arg10 = %c0 to %117 step %c1 {
          %135 = arith.index_cast %arg10 : index to i64
          %136 = arith.subi %135, %c1_i64 : i64
          %137 = arith.cmpi sge, %136, %c0_i64 : i64
          %138 = arith.cmpi slt, %136, %43 : i64
          %139 = arith.andi %137, %138 : i1
          %140 = arith.andi %113, %139 : i1
          %141 = arith.subi %116, %c1_i64 : i64
          %142 = arith.cmpi eq, %135, %141 : i64
          %143 = arith.cmpi slt, %135, %43 : i64
          %144 = arith.andi %142, %143 : i1
          %145 = arith.andi %113, %144 : i1
          %146 = arith.subi %111, %c1_i64 : i64
          %147 = arith.select %145, %146, %c-1_i64 : i64
          %148 = arith.muli %135, %c16_i64 : i64
          %149 = arith.subi %107, %148 : i64
          %150 = arith.minsi %149, %c16_i64 : i64
          %151 = arith.index_cast %120 : i64 to index
          scf.for %arg11 = %c0 to %151 step %c1 {
            %159 = arith.index_cast %arg11 : index to i64
            scf.if %140 {
              %169 = arith.muli %159, %127 : i64
              %170 = arith.minsi %169, %42 : i64
              %171 = arith.addi %170, %127 : i64
              %172 = arith.minsi %171, %42 : i64
              %173 = arith.index_cast %170 : i64 to index
              %174 = arith.index_cast %172 : i64 to index
              scf.for %arg12 = %173 to %174 step %c1 {
                %175 = arith.index_cast %arg12 : index to i64
                %176 = arith.addi %36, %175 : i64
                %177 = arith.muli %176, %c16_i64 : i64
                %178 = arith.maxsi %177, %27 : i64
                %179 = arith.addi %177, %c16_i64 : i64
                %180 = arith.minsi %179, %37 : i64
                %181 = arith.subi %180, %178 : i64
                %182 = arith.subi %178, %27 : i64
                %183 = arith.muli %182, %35 : i64
                %184 = arith.addi %33, %183 : i64
                %185 = arith.muli %136, %c64_i64 : i64
                %186 = arith.addi %184, %185 : i64
                %187 = arith.muli %136, %c16_i64 : i64
                %188 = arith.addi %177, %187 : i64
                %189 = arith.ori %188, %c2684354560_i64 : i64
                %190 = arith.subi %178, %177 : i64
                %191 = arith.addi %189, %190 : i64
                %192 = arith.subi %29, %187 : i64
                %193 = arith.minsi %192, %c16_i64 : i64
                "instgem.mvout"(%186, %191, %193, %181) : (i64, i64, i64, i64) -> ()
              }
            }
            %160 = arith.cmpi eq, %159, %128 : i64
            %161 = arith.select %160, %c2147483648_i64, %c3221225472_i64 : i64
            %162 = arith.ori %148, %161 : i64
            %163 = arith.select %160, %c16_i64, %124 : i64
            %164 = arith.select %160, %c16_i64, %150 : i64
            %165 = arith.muli %159, %c16_i64 : i64
            %166 = arith.addi %165, %148 : i64
            %167 = arith.addi %166, %c64_i64 : i64
            "instgem.preload"(%167, %150, %c16_i64, %162, %164, %163) : (i64, i64, i64, i64, i64, i64) -> ()
            "instgem.compute_preloaded"(%165, %c16_i64, %124, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
            %168 = arith.cmpi eq, %159, %147 : i64
            scf.if %168 {
              %169 = arith.index_cast %123 : i64 to index
              scf.for %arg12 = %c1 to %169 step %c1 {
                %171 = arith.index_cast %arg12 : index to i64
                %172 = arith.muli %171, %c16_i64 : i64
                %173 = arith.addi %172, %148 : i64
                %174 = arith.ori %173, %161 : i64
                "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %174, %164, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                %175 = arith.muli %171, %c32_i64 : i64
                %176 = arith.addi %175, %165 : i64
                "instgem.compute_accumulated"(%176, %c16_i64, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                %177 = arith.subi %171, %c1_i64 : i64
                %178 = arith.subi %177, %36 : i64
                %179 = arith.cmpi sge, %178, %c0_i64 : i64
                %180 = arith.cmpi slt, %178, %42 : i64
                %181 = arith.andi %179, %180 : i1
                scf.if %181 {
                  %182 = arith.muli %177, %c16_i64 : i64
                  %183 = arith.maxsi %182, %27 : i64
                  %184 = arith.addi %182, %c16_i64 : i64
                  %185 = arith.minsi %184, %37 : i64
                  %186 = arith.subi %185, %183 : i64
                  %187 = arith.subi %183, %27 : i64
                  %188 = arith.muli %187, %35 : i64
                  %189 = arith.addi %33, %188 : i64
                  %190 = arith.muli %135, %c64_i64 : i64
                  %191 = arith.addi %189, %190 : i64
                  %192 = arith.addi %182, %148 : i64
                  %193 = arith.ori %192, %c2684354560_i64 : i64
                  %194 = arith.subi %183, %182 : i64
                  %195 = arith.addi %193, %194 : i64
                  %196 = arith.subi %29, %148 : i64
                  %197 = arith.minsi %196, %c16_i64 : i64
                  "instgem.mvout"(%191, %195, %197, %186) : (i64, i64, i64, i64) -> ()
                }
              }
              %170 = arith.index_cast %108 : i64 to index
              scf.for %arg12 = %169 to %170 step %c1 {
                %171 = arith.index_cast %arg12 : index to i64
                %172 = arith.muli %171, %c16_i64 : i64
                %173 = arith.subi %101, %172 : i64
                %174 = arith.minsi %173, %c16_i64 : i64
                %175 = arith.addi %172, %148 : i64
                %176 = arith.ori %175, %161 : i64
                %177 = arith.select %160, %c16_i64, %174 : i64
                "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %176, %164, %177) : (i64, i64, i64, i64, i64, i64) -> ()
                %178 = arith.muli %171, %c32_i64 : i64
                %179 = arith.addi %178, %165 : i64
                "instgem.compute_accumulated"(%179, %c16_i64, %174, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                %180 = arith.subi %171, %c1_i64 : i64
                %181 = arith.subi %180, %36 : i64
                %182 = arith.cmpi sge, %181, %c0_i64 : i64
                %183 = arith.cmpi slt, %181, %42 : i64
                %184 = arith.andi %182, %183 : i1
                scf.if %184 {
                  %185 = arith.muli %180, %c16_i64 : i64
                  %186 = arith.maxsi %185, %27 : i64
                  %187 = arith.addi %185, %c16_i64 : i64
                  %188 = arith.minsi %187, %37 : i64
                  %189 = arith.subi %188, %186 : i64
                  %190 = arith.subi %186, %27 : i64
                  %191 = arith.muli %190, %35 : i64
                  %192 = arith.addi %33, %191 : i64
                  %193 = arith.muli %135, %c64_i64 : i64
                  %194 = arith.addi %192, %193 : i64
                  %195 = arith.addi %185, %148 : i64
                  %196 = arith.ori %195, %c2684354560_i64 : i64
                  %197 = arith.subi %186, %185 : i64
                  %198 = arith.addi %196, %197 : i64
                  %199 = arith.subi %29, %148 : i64
                  %200 = arith.minsi %199, %c16_i64 : i64
                  "instgem.mvout"(%194, %198, %200, %189) : (i64, i64, i64, i64) -> ()
                }
              }
            } else {
              %169 = arith.index_cast %123 : i64 to index
              scf.for %arg12 = %c1 to %169 step %c1 {
                %171 = arith.index_cast %arg12 : index to i64
                %172 = arith.muli %171, %c16_i64 : i64
                %173 = arith.addi %172, %148 : i64
                %174 = arith.ori %173, %161 : i64
                "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %174, %164, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                %175 = arith.muli %171, %c32_i64 : i64
                %176 = arith.addi %175, %165 : i64
                "instgem.compute_accumulated"(%176, %c16_i64, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
              }
              %170 = arith.index_cast %108 : i64 to index
              scf.for %arg12 = %169 to %170 step %c1 {
                %171 = arith.index_cast %arg12 : index to i64
                %172 = arith.muli %171, %c16_i64 : i64
                %173 = arith.subi %101, %172 : i64
                %174 = arith.minsi %173, %c16_i64 : i64
                %175 = arith.addi %172, %148 : i64
                %176 = arith.ori %175, %161 : i64
                %177 = arith.select %160, %c16_i64, %174 : i64
                "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %176, %164, %177) : (i64, i64, i64, i64, i64, i64) -> ()
                %178 = arith.muli %171, %c32_i64 : i64
                %179 = arith.addi %178, %165 : i64
                "instgem.compute_accumulated"(%179, %c16_i64, %174, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
              }
            }
          }
          %152 = arith.index_cast %111 : i64 to index
          scf.for %arg11 = %151 to %152 step %c1 {
            %159 = arith.index_cast %arg11 : index to i64
            %160 = arith.muli %159, %c16_i64 : i64
            %161 = arith.subi %103, %160 : i64
            %162 = arith.minsi %161, %c16_i64 : i64
            %163 = arith.subi %105, %160 : i64
            %164 = arith.minsi %163, %c16_i64 : i64
            scf.if %140 {
              %173 = arith.muli %159, %127 : i64
              %174 = arith.minsi %173, %42 : i64
              %175 = arith.addi %174, %127 : i64
              %176 = arith.minsi %175, %42 : i64
              %177 = arith.index_cast %174 : i64 to index
              %178 = arith.index_cast %176 : i64 to index
              scf.for %arg12 = %177 to %178 step %c1 {
                %179 = arith.index_cast %arg12 : index to i64
                %180 = arith.addi %36, %179 : i64
                %181 = arith.muli %180, %c16_i64 : i64
                %182 = arith.maxsi %181, %27 : i64
                %183 = arith.addi %181, %c16_i64 : i64
                %184 = arith.minsi %183, %37 : i64
                %185 = arith.subi %184, %182 : i64
                %186 = arith.subi %182, %27 : i64
                %187 = arith.muli %186, %35 : i64
                %188 = arith.addi %33, %187 : i64
                %189 = arith.muli %136, %c64_i64 : i64
                %190 = arith.addi %188, %189 : i64
                %191 = arith.muli %136, %c16_i64 : i64
                %192 = arith.addi %181, %191 : i64
                %193 = arith.ori %192, %c2684354560_i64 : i64
                %194 = arith.subi %182, %181 : i64
                %195 = arith.addi %193, %194 : i64
                %196 = arith.subi %29, %191 : i64
                %197 = arith.minsi %196, %c16_i64 : i64
                "instgem.mvout"(%190, %195, %197, %185) : (i64, i64, i64, i64) -> ()
              }
            }
            %165 = arith.cmpi eq, %159, %128 : i64
            %166 = arith.select %165, %c2147483648_i64, %c3221225472_i64 : i64
            %167 = arith.ori %148, %166 : i64
            %168 = arith.select %165, %c16_i64, %124 : i64
            %169 = arith.select %165, %c16_i64, %150 : i64
            %170 = arith.addi %160, %148 : i64
            %171 = arith.addi %170, %c64_i64 : i64
            "instgem.preload"(%171, %150, %164, %167, %169, %168) : (i64, i64, i64, i64, i64, i64) -> ()
            "instgem.compute_preloaded"(%160, %162, %124, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
            %172 = arith.cmpi eq, %159, %147 : i64
            scf.if %172 {
              %173 = arith.index_cast %123 : i64 to index
              scf.for %arg12 = %c1 to %173 step %c1 {
                %175 = arith.index_cast %arg12 : index to i64
                %176 = arith.muli %175, %c16_i64 : i64
                %177 = arith.addi %176, %148 : i64
                %178 = arith.ori %177, %166 : i64
                "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %178, %169, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                %179 = arith.muli %175, %c32_i64 : i64
                %180 = arith.addi %179, %160 : i64
                "instgem.compute_accumulated"(%180, %162, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                %181 = arith.subi %175, %c1_i64 : i64
                %182 = arith.subi %181, %36 : i64
                %183 = arith.cmpi sge, %182, %c0_i64 : i64
                %184 = arith.cmpi slt, %182, %42 : i64
                %185 = arith.andi %183, %184 : i1
                scf.if %185 {
                  %186 = arith.muli %181, %c16_i64 : i64
                  %187 = arith.maxsi %186, %27 : i64
                  %188 = arith.addi %186, %c16_i64 : i64
                  %189 = arith.minsi %188, %37 : i64
                  %190 = arith.subi %189, %187 : i64
                  %191 = arith.subi %187, %27 : i64
                  %192 = arith.muli %191, %35 : i64
                  %193 = arith.addi %33, %192 : i64
                  %194 = arith.muli %135, %c64_i64 : i64
                  %195 = arith.addi %193, %194 : i64
                  %196 = arith.addi %186, %148 : i64
                  %197 = arith.ori %196, %c2684354560_i64 : i64
                  %198 = arith.subi %187, %186 : i64
                  %199 = arith.addi %197, %198 : i64
                  %200 = arith.subi %29, %148 : i64
                  %201 = arith.minsi %200, %c16_i64 : i64
                  "instgem.mvout"(%195, %199, %201, %190) : (i64, i64, i64, i64) -> ()
                }
              }
              %174 = arith.index_cast %108 : i64 to index
              scf.for %arg12 = %173 to %174 step %c1 {
                %175 = arith.index_cast %arg12 : index to i64
                %176 = arith.muli %175, %c16_i64 : i64
                %177 = arith.subi %101, %176 : i64
                %178 = arith.minsi %177, %c16_i64 : i64
                %179 = arith.addi %176, %148 : i64
                %180 = arith.ori %179, %166 : i64
                %181 = arith.select %165, %c16_i64, %178 : i64
                "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %180, %169, %181) : (i64, i64, i64, i64, i64, i64) -> ()
                %182 = arith.muli %175, %c32_i64 : i64
                %183 = arith.addi %182, %160 : i64
                "instgem.compute_accumulated"(%183, %162, %178, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                %184 = arith.subi %175, %c1_i64 : i64
                %185 = arith.subi %184, %36 : i64
                %186 = arith.cmpi sge, %185, %c0_i64 : i64
                %187 = arith.cmpi slt, %185, %42 : i64
                %188 = arith.andi %186, %187 : i1
                scf.if %188 {
                  %189 = arith.muli %184, %c16_i64 : i64
                  %190 = arith.maxsi %189, %27 : i64
                  %191 = arith.addi %189, %c16_i64 : i64
                  %192 = arith.minsi %191, %37 : i64
                  %193 = arith.subi %192, %190 : i64
                  %194 = arith.subi %190, %27 : i64
                  %195 = arith.muli %194, %35 : i64
                  %196 = arith.addi %33, %195 : i64
                  %197 = arith.muli %135, %c64_i64 : i64
                  %198 = arith.addi %196, %197 : i64
                  %199 = arith.addi %189, %148 : i64
                  %200 = arith.ori %199, %c2684354560_i64 : i64
                  %201 = arith.subi %190, %189 : i64
                  %202 = arith.addi %200, %201 : i64
                  %203 = arith.subi %29, %148 : i64
                  %204 = arith.minsi %203, %c16_i64 : i64
                  "instgem.mvout"(%198, %202, %204, %193) : (i64, i64, i64, i64) -> ()
                }
              }
            } else {
              %173 = arith.index_cast %123 : i64 to index
              scf.for %arg12 = %c1 to %173 step %c1 {
                %175 = arith.index_cast %arg12 : index to i64
                %176 = arith.muli %175, %c16_i64 : i64
                %177 = arith.addi %176, %148 : i64
                %178 = arith.ori %177, %166 : i64
                "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %178, %169, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
                %179 = arith.muli %175, %c32_i64 : i64
                %180 = arith.addi %179, %160 : i64
                "instgem.compute_accumulated"(%180, %162, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
              }
              %174 = arith.index_cast %108 : i64 to index
              scf.for %arg12 = %173 to %174 step %c1 {
                %175 = arith.index_cast %arg12 : index to i64
                %176 = arith.muli %175, %c16_i64 : i64
                %177 = arith.subi %101, %176 : i64
                %178 = arith.minsi %177, %c16_i64 : i64
                %179 = arith.addi %176, %148 : i64
                %180 = arith.ori %179, %166 : i64
                %181 = arith.select %165, %c16_i64, %178 : i64
                "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %180, %169, %181) : (i64, i64, i64, i64, i64, i64) -> ()
                %182 = arith.muli %175, %c32_i64 : i64
                %183 = arith.addi %182, %160 : i64
                "instgem.compute_accumulated"(%183, %162, %178, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
              }
            }
          }
          scf.if %140 {
            %159 = arith.muli %111, %127 : i64
            %160 = arith.minsi %159, %42 : i64
            %161 = arith.index_cast %160 : i64 to index
            %162 = arith.index_cast %42 : i64 to index
            scf.for %arg11 = %161 to %162 step %c1 {
              %163 = arith.index_cast %arg11 : index to i64
              %164 = arith.addi %36, %163 : i64
              %165 = arith.muli %164, %c16_i64 : i64
              %166 = arith.maxsi %165, %27 : i64
              %167 = arith.addi %165, %c16_i64 : i64
              %168 = arith.minsi %167, %37 : i64
              %169 = arith.subi %168, %166 : i64
              %170 = arith.subi %166, %27 : i64
              %171 = arith.muli %170, %35 : i64
              %172 = arith.addi %33, %171 : i64
              %173 = arith.muli %136, %c64_i64 : i64
              %174 = arith.addi %172, %173 : i64
              %175 = arith.muli %136, %c16_i64 : i64
              %176 = arith.addi %165, %175 : i64
              %177 = arith.ori %176, %c2684354560_i64 : i64
              %178 = arith.subi %166, %165 : i64
              %179 = arith.addi %177, %178 : i64
              %180 = arith.subi %29, %175 : i64
              %181 = arith.minsi %180, %c16_i64 : i64
              "instgem.mvout"(%174, %179, %181, %169) : (i64, i64, i64, i64) -> ()
            }
          }
          %153 = arith.cmpi sgt, %111, %c0_i64 : i64
          %154 = arith.subi %108, %c1_i64 : i64
          %155 = arith.subi %154, %36 : i64
          %156 = arith.maxsi %155, %c0_i64 : i64
          %157 = arith.minsi %156, %42 : i64
          %158 = arith.select %153, %157, %c0_i64 : i64
          scf.if %145 {
            %159 = arith.index_cast %158 : i64 to index
            %160 = arith.index_cast %42 : i64 to index
            scf.for %arg11 = %159 to %160 step %c1 {
              %161 = arith.index_cast %arg11 : index to i64
              %162 = arith.addi %36, %161 : i64
              %163 = arith.muli %162, %c16_i64 : i64
              %164 = arith.maxsi %163, %27 : i64
              %165 = arith.addi %163, %c16_i64 : i64
              %166 = arith.minsi %165, %37 : i64
              %167 = arith.subi %166, %164 : i64
              %168 = arith.subi %164, %27 : i64
              %169 = arith.muli %168, %35 : i64
              %170 = arith.addi %33, %169 : i64
              %171 = arith.muli %135, %c64_i64 : i64
              %172 = arith.addi %170, %171 : i64
              %173 = arith.addi %163, %148 : i64
              %174 = arith.ori %173, %c2684354560_i64 : i64
              %175 = arith.subi %164, %163 : i64
              %176 = arith.addi %174, %175 : i64
              %177 = arith.subi %29, %148 : i64
              %178 = arith.minsi %177, %c16_i64 : i64
              "instgem.mvout"(%172, %176, %178, %167) : (i64, i64, i64, i64) -> ()
            }
          }
        } {gemmini.compute_nest}
        %129 = arith.cmpi eq, %111, %c0_i64 : i64
        %130 = arith.cmpi slt, %108, %c2_i64 : i64
        %131 = arith.cmpi slt, %116, %c1_i64 : i64
        %132 = arith.ori %129, %130 : i1
        %133 = arith.ori %132, %131 : i1
        %134 = arith.andi %114, %133 : i1
        scf.if %134 {
          scf.for %arg10 = %c0 to %c2 step %c1 {
            %135 = arith.index_cast %arg10 : index to i64
            %136 = arith.muli %135, %c16_i64 : i64
            %137 = arith.ori %136, %c2147483648_i64 : i64
            %138 = arith.cmpi sge, %135, %108 : i64
            %139 = arith.cmpi sle, %116, %c0_i64 : i64
            %140 = arith.ori %129, %138 : i1
            %141 = arith.ori %140, %139 : i1
            %142 = arith.cmpi sgt, %43, %c0_i64 : i64
            %143 = arith.andi %141, %142 : i1
            scf.if %143 {
              "instgem.mvin"(%c0_i64, %137, %c16_i64, %c16_i64) : (i64, i64, i64, i64) -> ()
            }
          }
        }
        scf.if %113 {
          %135 = arith.minsi %116, %43 : i64
          %136 = arith.index_cast %135 : i64 to index
          %137 = arith.index_cast %43 : i64 to index
          scf.for %arg10 = %136 to %137 step %c1 {
            %138 = arith.index_cast %arg10 : index to i64
            %139 = arith.index_cast %42 : i64 to index
            scf.for %arg11 = %c0 to %139 step %c1 {
              %140 = arith.index_cast %arg11 : index to i64
              %141 = arith.addi %36, %140 : i64
              %142 = arith.muli %141, %c16_i64 : i64
              %143 = arith.maxsi %142, %27 : i64
              %144 = arith.addi %142, %c16_i64 : i64
              %145 = arith.minsi %144, %37 : i64
              %146 = arith.subi %145, %143 : i64
              %147 = arith.subi %143, %27 : i64
              %148 = arith.muli %147, %35 : i64
              %149 = arith.addi %33, %148 : i64
              %150 = arith.muli %138, %c64_i64 : i64
              %151 = arith.addi %149, %150 : i64
              %152 = arith.muli %138, %c16_i64 : i64
              %153 = arith.addi %142, %152 : i64
              %154 = arith.ori %153, %c2684354560_i64 : i64
              %155 = arith.subi %143, %142 : i64
              %156 = arith.addi %154, %155 : i64
              %157 = arith.subi %29, %152 : i64
              %158 = arith.minsi %157, %c16_i64 : i64
              "instgem.mvout"(%151, %156, %158, %146) : (i64, i64, i64, i64) -> ()
            }
          }
        }
      } else {
        scf.for %arg10 = %c0 to %117 step %c1 {
          %126 = arith.index_cast %arg10 : index to i64
          %127 = arith.muli %126, %c16_i64 : i64
          %128 = arith.subi %107, %127 : i64
          %129 = arith.minsi %128, %c16_i64 : i64
          %130 = arith.index_cast %120 : i64 to index
          scf.for %arg11 = %c0 to %130 step %c1 {
            %132 = arith.index_cast %arg11 : index to i64
            %133 = arith.ori %127, %c3221225472_i64 : i64
            %134 = arith.muli %132, %c16_i64 : i64
            %135 = arith.addi %134, %127 : i64
            %136 = arith.addi %135, %c64_i64 : i64
            "instgem.preload"(%136, %129, %c16_i64, %133, %129, %124) : (i64, i64, i64, i64, i64, i64) -> ()
            "instgem.compute_preloaded"(%134, %c16_i64, %124, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
            %137 = arith.index_cast %123 : i64 to index
            scf.for %arg12 = %c1 to %137 step %c1 {
              %139 = arith.index_cast %arg12 : index to i64
              %140 = arith.muli %139, %c16_i64 : i64
              %141 = arith.addi %140, %127 : i64
              %142 = arith.ori %141, %c3221225472_i64 : i64
              "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %142, %129, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
              %143 = arith.muli %139, %c32_i64 : i64
              %144 = arith.addi %143, %134 : i64
              "instgem.compute_accumulated"(%144, %c16_i64, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
            }
            %138 = arith.index_cast %108 : i64 to index
            scf.for %arg12 = %137 to %138 step %c1 {
              %139 = arith.index_cast %arg12 : index to i64
              %140 = arith.muli %139, %c16_i64 : i64
              %141 = arith.subi %101, %140 : i64
              %142 = arith.minsi %141, %c16_i64 : i64
              %143 = arith.addi %140, %127 : i64
              %144 = arith.ori %143, %c3221225472_i64 : i64
              "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %144, %129, %142) : (i64, i64, i64, i64, i64, i64) -> ()
              %145 = arith.muli %139, %c32_i64 : i64
              %146 = arith.addi %145, %134 : i64
              "instgem.compute_accumulated"(%146, %c16_i64, %142, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
            }
          }
          %131 = arith.index_cast %111 : i64 to index
          scf.for %arg11 = %130 to %131 step %c1 {
            %132 = arith.index_cast %arg11 : index to i64
            %133 = arith.muli %132, %c16_i64 : i64
            %134 = arith.subi %103, %133 : i64
            %135 = arith.minsi %134, %c16_i64 : i64
            %136 = arith.subi %105, %133 : i64
            %137 = arith.minsi %136, %c16_i64 : i64
            %138 = arith.ori %127, %c3221225472_i64 : i64
            %139 = arith.addi %133, %127 : i64
            %140 = arith.addi %139, %c64_i64 : i64
            "instgem.preload"(%140, %129, %137, %138, %129, %124) : (i64, i64, i64, i64, i64, i64) -> ()
            "instgem.compute_preloaded"(%133, %135, %124, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
            %141 = arith.index_cast %123 : i64 to index
            scf.for %arg12 = %c1 to %141 step %c1 {
              %143 = arith.index_cast %arg12 : index to i64
              %144 = arith.muli %143, %c16_i64 : i64
              %145 = arith.addi %144, %127 : i64
              %146 = arith.ori %145, %c3221225472_i64 : i64
              "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %146, %129, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
              %147 = arith.muli %143, %c32_i64 : i64
              %148 = arith.addi %147, %133 : i64
              "instgem.compute_accumulated"(%148, %135, %c16_i64, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
            }
            %142 = arith.index_cast %108 : i64 to index
            scf.for %arg12 = %141 to %142 step %c1 {
              %143 = arith.index_cast %arg12 : index to i64
              %144 = arith.muli %143, %c16_i64 : i64
              %145 = arith.subi %101, %144 : i64
              %146 = arith.minsi %145, %c16_i64 : i64
              %147 = arith.addi %144, %127 : i64
              %148 = arith.ori %147, %c3221225472_i64 : i64
              "instgem.preload"(%c4294967295_i64, %c16_i64, %c16_i64, %148, %129, %146) : (i64, i64, i64, i64, i64, i64) -> ()
              %149 = arith.muli %143, %c32_i64 : i64
              %150 = arith.addi %149, %133 : i64
              "instgem.compute_accumulated"(%150, %135, %146, %c4294967295_i64, %c16_i64, %c16_i64) : (i64, i64, i64, i64, i64, i64) -> ()
            }
          }
        } {gemmini.compute_nest}
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
