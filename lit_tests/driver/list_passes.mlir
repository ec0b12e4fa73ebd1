// --list-passes names every registered pass with a one-line summary, says which are part of
// canonicalize (the registry's `canonical` flag), and reads no input.
// RUN: tpuc-opt --list-passes | filecheck %s

// CHECK:      Available passes:
// CHECK-DAG:  {{^  }}canonicalize {{ +}}{{[A-Z][^(]*$}}
// CHECK-DAG:  {{^  }}fuse-conv-bn {{ +}}{{[A-Z].*}} (part of canonicalize)
// CHECK-DAG:  {{^  }}fold-constants {{ +}}{{[A-Z].*}} (part of canonicalize)
// CHECK-DAG:  {{^  }}cse {{ +}}Eliminate common subexpressions
// CHECK-DAG:  {{^  }}dce {{ +}}Erase side-effect-free ops whose results are unused
// CHECK-DAG:  {{^  }}shape-infer {{ +}}{{.*}}shape{{[^(]*$}}
// TPU-MLIR's Top-stage passes (lit_tests/driver/tpu_mlir_top_pipeline.mlir), with their options.
// CHECK-DAG:  {{^  }}init {{ +}}Load the weight file
// CHECK-DAG:  {{^      }}weight_in_mem: bool = False
// CHECK-DAG:  {{^  }}deinit {{ +}}Save the weights
// CHECK-DAG:  {{^      }}no_save_weight: bool = False
// CHECK-DAG:  {{^  }}struct-optimize {{ +}}Structural rewrites before shape inference
// CHECK-DAG:  {{^  }}extra-optimize {{ +}}Fusions after shape inference
// CHECK-NOT:  unavailable
