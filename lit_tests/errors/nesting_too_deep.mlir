// Regions nested deeper than the parser's limit: one line at the '{' that goes too deep, exit 1,
// not a RecursionError from verifying or printing later.
// RUN: python -c "print('module {' * 5000 + '}' * 5000)" > %t.mlir
// RUN: not tpuc-opt %t.mlir --canonicalize 2>&1 | filecheck %s -DFILE=%t.mlir

// CHECK-NOT: Traceback
// CHECK:     [[FILE]]:1:{{[0-9]+}}: error: regions nested more than 64 deep
// CHECK-NOT: {{.}}
