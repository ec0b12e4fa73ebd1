// A missing input file: one line without a position, exit 1.
// RUN: not tpuc-opt %t.does-not-exist.mlir 2>&1 | filecheck %s -DFILE=%t.does-not-exist.mlir
// RUN: not tpuc-opt %t.does-not-exist.mlir --shape-infer -o %t.out 2>&1 | filecheck %s -DFILE=%t.does-not-exist.mlir

// CHECK-NOT: Traceback
// CHECK:     error: cannot open '[[FILE]]': No such file or directory{{.*}}
// CHECK-NOT: {{.}}
