// --list-passes names every registered pass with a one-line summary, and reads no input.
// RUN: tpuc-opt --list-passes | filecheck %s

// CHECK:      Available passes:
// CHECK-DAG:  {{^  }}canonicalize {{ +}}{{[A-Z].*}}
// CHECK-DAG:  {{^  }}cse {{ +}}Eliminate common subexpressions
// CHECK-DAG:  {{^  }}dce {{ +}}Erase side-effect-free ops whose results are unused
// CHECK-DAG:  {{^  }}shape-infer {{ +}}{{.*}}shape
// CHECK-NOT:  unavailable
