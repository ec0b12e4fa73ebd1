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
// TPU-MLIR's lowering, tpu-opt and codegen stages (lit_tests/driver/tpu_mlir_deploy_pipeline.mlir).
// CHECK-DAG:  {{^  }}processor-top-optimize {{ +}}Chip-specific Top rewrites before lowering (TPU-MLIR); tpudsl has none
// CHECK-DAG:  {{^  }}strip-io-quant {{ +}}Strip the quantizing cast after an input
// CHECK-DAG:  {{^      }}quant_output_int8: bool = False
// CHECK-DAG:  {{^  }}processor-tpu-optimize {{ +}}Chip-specific Tpu rewrites (TPU-MLIR): a Permute that does not fold to 4-D split
// CHECK-DAG:  {{^  }}dev-parallel {{ +}}Distribute the model over devices
// CHECK-DAG:  {{^  }}subnet-divide {{ +}}Split into TPU/CPU and dynamic subnets
// CHECK-DAG:  {{^      }}dynamic: bool = False
// CHECK-DAG:  {{^  }}op-reorder {{ +}}Reorder ops
// CHECK-DAG:  {{^  }}topo-sort {{ +}}Sort ops topologically
// CHECK-DAG:  {{^  }}core-parallel {{ +}}Split ops to run on several cores
// CHECK-DAG:  {{^  }}opt-post-processor {{ +}}Graph rewrites after layer-group
// CHECK-DAG:  {{^  }}after-layergroup-weight-reorder{{ +}}Reorder weights whose layout depends on the groups
// CHECK-DAG:  {{^  }}op-divide {{ +}}Divide large INT8 ops
// CHECK-DAG:  {{^  }}weight-deduplicate {{ +}}Let identical weights share one top.Weight
// CHECK-DAG:  {{^      }}disable_group_overlap: bool = False
// CHECK-DAG:  {{^      }}merge_weight: bool = False
// CHECK-DAG:  {{^      }}model_version: str = 'latest'
// CHECK-DAG:  {{^      }}q_symmetric: bool = False
// CHECK-NOT:  unavailable
