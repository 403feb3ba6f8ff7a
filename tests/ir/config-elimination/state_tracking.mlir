// RUN: baco opt --pass config-elimination %s | FileCheck %s
// Hand-written: what the analysis proves. The config_ld before the loop makes the loop's
// (same operands, loop-invariant) redundant; a config set on both sides of an scf.if is
// known after it, one set on one side only is not; a LOOP_CONV_WS forgets the load slots
// (it issues config_ld), config_ex when it transposes its input (here) and config_st when it
// pools, and keeps the others (@loop_conv_keeps); the
// config_ex the function ends with, set from constants, runs only in program (0, 0, 0)
// (the config_ld is not: the LOOP_CONV_WS leaves its state unknown at the end).
// CHECK-LABEL: func.func @k(
// CHECK: call @baco_program_id
// CHECK: arith.andi
// CHECK-NEXT: %[[FIRST:.*]] = arith.andi %{{.*}}, %{{.*}} : i1
// CHECK: scf.if %[[FIRST]] {
// CHECK-NEXT: "instgem.config_ex"
// CHECK-NEXT: }
// CHECK-NEXT: "instgem.config_ld"
// CHECK-NEXT: scf.for
// CHECK-NOT: instgem.config
// CHECK: "instgem.mvin"
// CHECK: scf.if %arg2 {
// CHECK-NEXT: "instgem.config_st"
// CHECK-NEXT: } else {
// CHECK-NEXT: "instgem.config_st"
// CHECK-NEXT: }
// CHECK-NEXT: scf.if %arg2 {
// CHECK-NEXT: "instgem.config_ld"
// CHECK-NEXT: }
// CHECK-NEXT: "instgem.config_ld"
// CHECK-NEXT: "instgem.mvin2"
// CHECK-NEXT: "instgem.loop_conv_ws"
// CHECK-NEXT: "instgem.config_ex"
// CHECK-NEXT: "instgem.fence"
// The prefetch pass's shape: `if (lb < ub) config` before the loop (here as ub > 0, the form
// canonicalization leaves), `if (i + 1 < ub) config` in it: every iteration starts with the
// slot set, so the loop's copy is removed.
// LOOP_CONV_WS without pooling or input transposition keeps config_ex and config_st; its config_ld
// slot is forgotten.
// CHECK-LABEL: func.func @loop_conv_keeps(
// CHECK: "instgem.loop_conv_ws"
// CHECK-NEXT: "instgem.config_ld"
// CHECK-NEXT: "instgem.fence"
// CHECK-LABEL: func.func @prefetched(
// CHECK: scf.if
// CHECK-NEXT: "instgem.config_ld"
// CHECK: scf.for
// CHECK-NOT: instgem.config_ld
// CHECK: "instgem.mvin"
// CHECK: return
module {
  func.func @k(%n: index, %stride: i64, %cond: i1) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %z = arith.constant 0 : i64
    %one = arith.constant 1 : i64
    %four = arith.constant 4 : i64
    %scale = arith.constant 1065353216 : i64
    %dim = arith.constant 16 : i64
    %bytes = arith.muli %stride, %four : i64
    "instgem.config_ex"(%one, %z, %z, %z, %z, %one, %scale, %z, %z, %one) : (i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> ()
    "instgem.config_ld"(%z, %z, %one, %dim, %scale, %bytes) : (i64, i64, i64, i64, i64, i64) -> ()
    scf.for %i = %c0 to %n step %c1 {
      %again = arith.muli %stride, %four : i64
      "instgem.config_ld"(%z, %z, %one, %dim, %scale, %again) : (i64, i64, i64, i64, i64, i64) -> ()
      %row = arith.index_cast %i : index to i64
      "instgem.mvin"(%z, %row, %dim, %dim) : (i64, i64, i64, i64) -> ()
    }
    scf.if %cond {
      "instgem.config_st"(%z, %z, %z, %z, %z, %z, %z, %z, %z, %z, %bytes, %scale) : (i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> ()
    } else {
      "instgem.config_st"(%z, %z, %z, %z, %z, %z, %z, %z, %z, %z, %bytes, %scale) : (i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> ()
    }
    "instgem.config_st"(%z, %z, %z, %z, %z, %z, %z, %z, %z, %z, %bytes, %scale) : (i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> ()
    scf.if %cond {
      "instgem.config_ld"(%z, %one, %one, %dim, %scale, %bytes) : (i64, i64, i64, i64, i64, i64) -> ()
    }
    "instgem.config_ld"(%z, %one, %one, %dim, %scale, %bytes) : (i64, i64, i64, i64, i64, i64) -> ()
    "instgem.mvin2"(%z, %z, %dim, %dim) : (i64, i64, i64, i64) -> ()
    "instgem.loop_conv_ws"(%z, %z, %z, %z, %z, %one, %z, %z, %z, %z, %z, %z, %z, %z) : (i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> ()
    "instgem.config_ex"(%one, %z, %z, %z, %z, %one, %scale, %z, %z, %one) : (i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> ()
    "instgem.fence"() : () -> ()
    return
  }
  func.func @loop_conv_keeps(%bytes: i64) {
    %z = arith.constant 0 : i64
    %one = arith.constant 1 : i64
    %scale = arith.constant 1065353216 : i64
    %dim = arith.constant 16 : i64
    "instgem.config_ex"(%one, %z, %z, %z, %z, %one, %scale, %z, %z, %one) : (i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> ()
    "instgem.config_st"(%z, %z, %z, %z, %z, %z, %z, %z, %z, %z, %bytes, %scale) : (i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> ()
    "instgem.config_ld"(%z, %one, %one, %dim, %scale, %bytes) : (i64, i64, i64, i64, i64, i64) -> ()
    "instgem.loop_conv_ws"(%z, %z, %z, %z, %z, %z, %z, %z, %one, %one, %one, %z, %z, %z) : (i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> ()
    "instgem.config_ex"(%one, %z, %z, %z, %z, %one, %scale, %z, %z, %one) : (i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> ()
    "instgem.config_st"(%z, %z, %z, %z, %z, %z, %z, %z, %z, %z, %bytes, %scale) : (i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> ()
    "instgem.config_ld"(%z, %one, %one, %dim, %scale, %bytes) : (i64, i64, i64, i64, i64, i64) -> ()
    "instgem.fence"() : () -> ()
    return
  }
  func.func @prefetched(%ub: index, %stride: i64) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %z = arith.constant 0 : i64
    %one = arith.constant 1 : i64
    %dim = arith.constant 16 : i64
    %scale = arith.constant 1065353216 : i64
    %run = arith.cmpi sgt, %ub, %c0 : index
    scf.if %run {
      "instgem.config_ld"(%z, %z, %one, %dim, %scale, %stride) : (i64, i64, i64, i64, i64, i64) -> ()
      "instgem.mvin"(%z, %z, %dim, %dim) : (i64, i64, i64, i64) -> ()
    }
    scf.for %i = %c0 to %ub step %c1 {
      %next = arith.addi %i, %c1 : index
      %more = arith.cmpi slt, %next, %ub : index
      scf.if %more {
        "instgem.config_ld"(%z, %z, %one, %dim, %scale, %stride) : (i64, i64, i64, i64, i64, i64) -> ()
      }
      "instgem.mvin"(%z, %z, %dim, %dim) : (i64, i64, i64, i64) -> ()
    }
    return
  }
}
