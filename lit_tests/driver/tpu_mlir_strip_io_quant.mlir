// --strip-io-quant (TPU-MLIR's model_deploy --quant_input/--quant_output), INT8 first: the tpu.Cast after
// each input (fed by its top.Input alone) and before each output (used by the return alone) go; the
// input keeps its name and takes the quant type (its block argument stays f32, as TPU-MLIR's), the
// return gives the cast's operand under that operand's name; @main's result types follow.
// quant_input_list / quant_output_list choose by 1-based index. docs/tpuc-opt.md.
// RUN: rm -rf %t && mkdir %t && cp %s %t/m.mlir
// RUN: python %S/../rewrites/Inputs/make_weights.py %s %t/m_weight.npz --inputs %t/in.npz
// RUN: printf '# op_name threshold min max\nx 1.5 0.5 1.5\ny 2.0 -2.0 2.0\nconv 40.0 0.0 40.0\nadd 42.0 0.0 42.0\n' > %t/table
// RUN: cd %t && tpuc-opt m.mlir --processor-assign="chip=bm1684x mode=INT8" --import-calibration-table="file=table asymmetric=False" --convert-top-to-tpu -o int8.mlir
//
// RUN: tpuc-opt %t/int8.mlir --strip-io-quant="quant_input=True quant_output=True quant_input_list= quant_output_list= quant_output_bf16=False quant_input_int8=False quant_output_int8=False " -o %t/s.mlir
// RUN: filecheck %s --check-prefix=BOTH < %t/s.mlir
// BOTH:      func.func @main(%arg0: tensor<1x4x8x8xf32> {{.*}}, %arg1: tensor<1x4x8x8xf32> {{.*}}) -> (tensor<1x4x8x8x!quant.uniform<i8:f32, 0.33070866141732286>>, tensor<1x4x8x8x!quant.uniform<i8:f32, 0.31496062992125984>>) {
// BOTH-NEXT:   %0 = "top.Input"(%arg0) : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8x!quant.uniform<i8:f32, 0.011811023622047244>> loc([[X:#loc[0-9]+]])
// BOTH-NEXT:   %1 = "top.Input"(%arg1) : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8x!quant.uniform<i8:f32, 0.015748031496062992>> loc([[Y:#loc[0-9]+]])
// BOTH-NOT:    tpu.Cast
// BOTH:        %[[CONV:[0-9]+]] = "tpu.Conv2D"(%0, {{.*}} loc([[CONVLOC:#loc[0-9]+]])
// BOTH-NEXT:   %[[ADD:[0-9]+]] = "tpu.Add"(%[[CONV]], %1) {{.*}} loc([[ADDLOC:#loc[0-9]+]])
// BOTH-NEXT:   return %[[ADD]], %[[CONV]] : tensor<1x4x8x8x!quant.uniform<i8:f32, 0.33070866141732286>>, tensor<1x4x8x8x!quant.uniform<i8:f32, 0.31496062992125984>>
// BOTH-DAG:  [[X]] = loc("x")
// BOTH-DAG:  [[Y]] = loc("y")
// BOTH-DAG:  [[CONVLOC]] = loc("conv_int8")
// BOTH-DAG:  [[ADDLOC]] = loc("add_int8")
//
// The lists: the second input and the second output only (the first keep their casts).
// RUN: tpuc-opt %t/int8.mlir --strip-io-quant="quant_input=True quant_output=True quant_input_list=2 quant_output_list=2" | filecheck %s --check-prefix=LIST
// LIST:      func.func @main({{.*}}) -> (tensor<1x4x8x8xf32>, tensor<1x4x8x8x!quant.uniform<i8:f32, 0.31496062992125984>>) {
// LIST-NEXT:   %0 = "top.Input"(%arg0) : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
// LIST-NEXT:   %1 = "tpu.Cast"(%0) : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8x!quant.uniform<i8:f32, 0.011811023622047244>>
// LIST-NEXT:   %2 = "top.Input"(%arg1) : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8x!quant.uniform<i8:f32, 0.015748031496062992>>
// LIST:        %[[CONV:[0-9]+]] = "tpu.Conv2D"(%1,
// LIST-NEXT:   %[[ADD:[0-9]+]] = "tpu.Add"(%[[CONV]], %2)
// LIST-NEXT:   %[[CAST:[0-9]+]] = "tpu.Cast"(%[[ADD]])
// LIST-NEXT:   return %[[CAST]], %[[CONV]] :
// Only the flags: quant_input alone strips no output, and the lists alone strip nothing.
// RUN: tpuc-opt %t/int8.mlir --strip-io-quant="quant_input=True" | filecheck %s --check-prefix=INONLY
// INONLY:     -> (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) {
// INONLY-NOT: "tpu.Cast"(%arg
// INONLY:     "tpu.Cast"
// INONLY:     "tpu.Cast"
// INONLY-NOT: "tpu.Cast"
// RUN: tpuc-opt %t/int8.mlir --strip-io-quant="quant_input_list=1 quant_output_list=1,2" -o %t/same.mlir
// RUN: tpuc-opt %t/int8.mlir -o %t/int8_printed.mlir
// RUN: diff %t/same.mlir %t/int8_printed.mlir
// An index past @main's inputs or outputs names nothing: an error, not a silent no-op.
// RUN: not tpuc-opt %t/int8.mlir --strip-io-quant="quant_input=True quant_input_list=1,3" -o %t/none.mlir 2>&1 | filecheck %s --check-prefix=PAST
// RUN: not tpuc-opt %t/int8.mlir --strip-io-quant="quant_output=True quant_output_list=5" -o %t/none.mlir 2>&1 | filecheck %s --check-prefix=PASTOUT
// RUN: not test -e %t/none.mlir
// PAST: error: strip-io-quant: quant_input_list=1,3 names input 3, but @main has 2 inputs
// PASTOUT: error: strip-io-quant: quant_output_list=5 names output 5, but @main has 2 outputs
//
// The stripped module compiles to a .bmodel with int8 IO (model_tool --info shows the quant types'
// scales); model_runner quantizes the float inputs of in.npz at both levels and, with --out_fixed,
// gives the int8 outputs as stored: the .bmodel's equal the Tpu interpreter's bit for bit.
// RUN: cd %t && tpuc-opt s.mlir --weight-reorder --address-assign --layer-group -o final.mlir
// RUN: cd %t && tpuc-opt final.mlir --codegen="model_file=s.bmodel" -o /dev/null
// RUN: model_tool --info %t/s.bmodel | filecheck %s --check-prefix=INFO
// INFO: input: x, [1, 4, 8, 8], i8, scale: 0.011811, zero point: 0,
// INFO: input: y, [1, 4, 8, 8], i8, scale: 0.015748, zero point: 0,
// INFO: output: add_int8, [1, 4, 8, 8], i8, scale: 0.330709, zero point: 0,
// INFO: output: conv_int8, [1, 4, 8, 8], i8, scale: 0.314961, zero point: 0,
// RUN: cd %t && model_runner --input in.npz --model s.mlir --output tpu.npz --out_fixed
// RUN: cd %t && model_runner --input in.npz --model s.bmodel --output bm.npz --out_fixed
// RUN: python -c "import numpy as np; a, b = np.load('%t/tpu.npz'), np.load('%t/bm.npz'); assert sorted(a.files) == ['add_int8', 'conv_int8'] and all(a[k].dtype == b[k].dtype == np.int8 and (a[k] == b[k]).all() for k in a.files)"
// Without --out_fixed the outputs are (q - zero point) * scale, float32, as TPU-MLIR's model_runner gives them.
// RUN: cd %t && model_runner --input in.npz --model s.bmodel --output bmf.npz
// RUN: python -c "import numpy as np; a, b = np.load('%t/bm.npz'), np.load('%t/bmf.npz'); assert b['conv_int8'].dtype == np.float32 and (b['conv_int8'] == np.float32(a['conv_int8'].astype(np.float64) * 0.31496062992125984)).all()"
// Data of another integer type for an int8 input is refused by name.
// RUN: python -c "import numpy as np; np.savez('%t/ints.npz', x=np.ones((1, 4, 8, 8), np.int32), y=np.ones((1, 4, 8, 8), np.int8))"
// RUN: not model_runner --input %t/ints.npz --model %t/s.bmodel --output %t/no.npz 2>&1 | filecheck %s --check-prefix=INTS
// INTS: error: input 'x' is int8 (scale 0.011811, zero point 0); its data is int32: give float data (quantized here) or int8 (taken as stored)
//
// F16 and BF16 (TPU-MLIR's isF32toF16 / isF16toF32): the f32 -> f16/bf16 cast after each input
// and the f16/bf16 -> f32 cast before each output go the same way; names kept.
// RUN: cd %t && tpuc-opt m.mlir --processor-assign="chip=bm1684x mode=F16" --convert-top-to-tpu -o f16.mlir
// RUN: cd %t && tpuc-opt m.mlir --processor-assign="chip=bm1684x mode=BF16" --convert-top-to-tpu -o bf16.mlir
// RUN: tpuc-opt %t/f16.mlir --strip-io-quant="quant_input=True quant_output=True" -o %t/s16.mlir
// RUN: filecheck %s --check-prefix=F16 < %t/s16.mlir
// F16:      func.func @main(%arg0: tensor<1x4x8x8xf32> {{.*}}, %arg1: tensor<1x4x8x8xf32> {{.*}}) -> (tensor<1x4x8x8xf16>, tensor<1x4x8x8xf16>) {
// F16-NEXT:   %0 = "top.Input"(%arg0) : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf16> loc([[X:#loc[0-9]+]])
// F16-NEXT:   %1 = "top.Input"(%arg1) : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf16> loc([[Y:#loc[0-9]+]])
// F16-NOT:    tpu.Cast
// F16:        %[[CONV:[0-9]+]] = "tpu.Conv2D"(%0, {{.*}} loc([[CONVLOC:#loc[0-9]+]])
// F16-NEXT:   %[[ADD:[0-9]+]] = "tpu.Add"(%[[CONV]], %1) {{.*}} loc([[ADDLOC:#loc[0-9]+]])
// F16-NEXT:   return %[[ADD]], %[[CONV]] : tensor<1x4x8x8xf16>, tensor<1x4x8x8xf16>
// F16-DAG:  [[X]] = loc("x")
// F16-DAG:  [[Y]] = loc("y")
// F16-DAG:  [[CONVLOC]] = loc("conv_f16")
// F16-DAG:  [[ADDLOC]] = loc("add_f16")
// RUN: tpuc-opt %t/bf16.mlir --strip-io-quant="quant_input=True quant_output=True quant_input_list=2 quant_output_list=1" -o %t/sb16.mlir
// RUN: filecheck %s --check-prefix=BF16 < %t/sb16.mlir
// BF16:      func.func @main({{.*}}) -> (tensor<1x4x8x8xbf16>, tensor<1x4x8x8xf32>) {
// BF16-NEXT:   %0 = "top.Input"(%arg0) : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
// BF16-NEXT:   %1 = "tpu.Cast"(%0) : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xbf16>
// BF16-NEXT:   %2 = "top.Input"(%arg1) : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xbf16> loc([[Y:#loc[0-9]+]])
// BF16:        %[[CONV:[0-9]+]] = "tpu.Conv2D"(%1,
// BF16-NEXT:   %[[ADD:[0-9]+]] = "tpu.Add"(%[[CONV]], %2) {{.*}} loc([[ADDLOC:#loc[0-9]+]])
// BF16-NEXT:   %[[CAST:[0-9]+]] = "tpu.Cast"(%[[CONV]]) : (tensor<1x4x8x8xbf16>) -> tensor<1x4x8x8xf32> loc([[CASTLOC:#loc[0-9]+]])
// BF16-NEXT:   return %[[ADD]], %[[CAST]] : tensor<1x4x8x8xbf16>, tensor<1x4x8x8xf32>
// BF16-DAG:  [[Y]] = loc("y")
// BF16-DAG:  [[ADDLOC]] = loc("add_bf16")
// BF16-DAG:  [[CASTLOC]] = loc("conv")
//
// The stripped modules compile with f16/bf16 IO; model_runner rounds the float32 inputs of in.npz
// to nearest even at both levels, and the .bmodel's outputs equal the Tpu interpreter's bit for bit
// (written as float32, exact). model_deploy runs the same in BF16, its bmodel check bit-exact.
// RUN: cd %t && tpuc-opt s16.mlir --weight-reorder --address-assign --layer-group -o final16.mlir
// RUN: cd %t && tpuc-opt final16.mlir --codegen="model_file=s16.bmodel" -o /dev/null
// RUN: model_tool --info %t/s16.bmodel | filecheck %s --check-prefix=INFO16
// INFO16: input: x, [1, 4, 8, 8], f16, scale: 1, zero point: 0,
// INFO16: input: y, [1, 4, 8, 8], f16, scale: 1, zero point: 0,
// INFO16: output: add_f16, [1, 4, 8, 8], f16, scale: 1, zero point: 0,
// INFO16: output: conv_f16, [1, 4, 8, 8], f16, scale: 1, zero point: 0,
// RUN: cd %t && model_runner --input in.npz --model s16.mlir --output tpu16.npz
// RUN: cd %t && model_runner --input in.npz --model s16.bmodel --output bm16.npz
// RUN: python -c "import numpy as np; a, b = np.load('%t/tpu16.npz'), np.load('%t/bm16.npz'); assert sorted(a.files) == sorted(b.files) == ['add_f16', 'conv_f16'] and all((a[k] == b[k]).all() for k in a.files)"
// RUN: mkdir %t/dbf16 && cd %t && model_deploy --mlir m.mlir --quantize BF16 --processor bm1684x --model dbf16/m.bmodel --test_input in.npz --tolerance 0.99,0.9 --quant_input --quant_output 2>&1 | filecheck %s --check-prefix=DBF16
// RUN: model_tool --info %t/dbf16/m.bmodel | filecheck %s --check-prefix=INFOBF16
// DBF16-DAG: npz compare PASSED.
// DBF16-DAG: bmodel check passed: 2 outputs of the cmodel equal the Tpu interpreter's (BF16, bit-exact)
// INFOBF16: input: x, [1, 4, 8, 8], bf16,
// INFOBF16: output: add_bf16, [1, 4, 8, 8], bf16,
// Integer data for an f16 input is refused by name.
// RUN: not model_runner --input %t/ints.npz --model %t/s16.bmodel --output %t/no.npz 2>&1 | filecheck %s --check-prefix=INTS16
// INTS16: error: input 'x' is float16; its data is int32: give float data (rounded here) or float16 (taken as stored)
//
// quant_output_bf16 (TPU-MLIR's ForceOutputQuantBF16Pattern, when quant_output is false): each f32
// output gets a tpu.Cast to bf16 named <output>_bf16; with quant_output=true it does nothing.
// RUN: cd %t && tpuc-opt m.mlir --processor-assign="chip=bm1684x mode=F32" --convert-top-to-tpu -o f32.mlir
// RUN: tpuc-opt %t/f32.mlir --strip-io-quant="quant_output_bf16=True" | filecheck %s --check-prefix=OBF16
// OBF16:      -> (tensor<1x4x8x8xbf16>, tensor<1x4x8x8xbf16>) {
// OBF16:        %[[ADD:[0-9]+]] = "tpu.Add"
// OBF16-NEXT:   %[[A:[0-9]+]] = "tpu.Cast"(%[[ADD]]) : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xbf16> loc([[ALOC:#loc[0-9]+]])
// OBF16-NEXT:   %[[C:[0-9]+]] = "tpu.Cast"(%{{[0-9]+}}) : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xbf16> loc([[CLOC:#loc[0-9]+]])
// OBF16-NEXT:   return %[[A]], %[[C]] : tensor<1x4x8x8xbf16>, tensor<1x4x8x8xbf16>
// OBF16-DAG:  [[ALOC]] = loc("add_bf16")
// OBF16-DAG:  [[CLOC]] = loc("conv_bf16")
// RUN: tpuc-opt %t/int8.mlir --strip-io-quant="quant_input=True quant_output=True quant_output_bf16=True" -o %t/both_bf16.mlir
// RUN: diff %t/s.mlir %t/both_bf16.mlir
// RUN: mkdir %t/obf16 && cd %t && model_deploy --mlir m.mlir --quantize F16 --processor bm1684x --model obf16/m.bmodel --test_input in.npz --tolerance 0.99,0.9 --quant_output_bf16 2>&1 | filecheck %s --check-prefix=DOBF16
// RUN: model_tool --info %t/obf16/m.bmodel | filecheck %s --check-prefix=INFOOBF16
// DOBF16: bmodel check passed: 2 outputs of the cmodel equal the Tpu interpreter's (F16, bit-exact)
// INFOOBF16: input: x, [1, 4, 8, 8], f32,
// INFOOBF16: output: add_bf16, [1, 4, 8, 8], bf16,
//
// Refused by name: malformed lists, the options tpudsl does not model.
// RUN: not tpuc-opt %t/int8.mlir --strip-io-quant="quant_input=True quant_input_list=0" 2>&1 | filecheck %s --check-prefix=LIST0
// RUN: not tpuc-opt %t/int8.mlir --strip-io-quant="quant_output=True quant_output_list=1;2" 2>&1 | filecheck %s --check-prefix=LISTSEMI
// RUN: not tpuc-opt %t/int8.mlir --strip-io-quant="quant_input_int8=True" 2>&1 | filecheck %s --check-prefix=QIN8
// RUN: not tpuc-opt %t/int8.mlir --strip-io-quant="quant_output_int8=True" 2>&1 | filecheck %s --check-prefix=QOUT8
// A cast behind a Reshape that is the input's one use goes too (TPU-MLIR's "input -> reshape -> cast"):
// the input and the Reshape take the cast's element type and keep their names; the output cast stays.
// RUN: tpuc-opt %S/Inputs/strip_io_quant_reshape.mlir --strip-io-quant="quant_input=True" | filecheck %s --check-prefix=RESHAPE
// RESHAPE:      func.func @main(%arg0: tensor<1x4x8x8xf32> {{.*}}) -> tensor<1x256xf32> {
// RESHAPE-NEXT:   %0 = "top.Input"(%arg0) : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf16> loc([[XLOC:#loc[0-9]+]])
// RESHAPE-NEXT:   %1 = "tpu.Reshape"(%0) {shape = [1, 256]} : (tensor<1x4x8x8xf16>) -> tensor<1x256xf16> loc([[FLOC:#loc[0-9]+]])
// RESHAPE-NEXT:   %2 = "tpu.Cast"(%1) : (tensor<1x256xf16>) -> tensor<1x256xf32> loc([[OLOC:#loc[0-9]+]])
// RESHAPE-NEXT:   return %2 : tensor<1x256xf32>
// RESHAPE-DAG:  [[XLOC]] = loc("x")
// RESHAPE-DAG:  [[FLOC]] = loc("flat")
// RESHAPE-DAG:  [[OLOC]] = loc("out")
// A second reader of the Reshape: nothing is stripped (its reader would see f16 data).
// RUN: sed 's/return %3 : tensor<1x256xf32>/return %3, %1 : tensor<1x256xf32>, tensor<1x256xf32>/; s/-> tensor<1x256xf32> {/-> (tensor<1x256xf32>, tensor<1x256xf32>) {/' %S/Inputs/strip_io_quant_reshape.mlir > %t/two.mlir
// RUN: tpuc-opt %t/two.mlir --strip-io-quant="quant_input=True" | filecheck %s --check-prefix=TWO
// TWO:      "top.Input"(%arg0) : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
// TWO-NEXT: "tpu.Reshape"(%0) {shape = [1, 256]} : (tensor<1x4x8x8xf32>) -> tensor<1x256xf32>
// TWO-NEXT: "tpu.Cast"(%1) : (tensor<1x256xf32>) -> tensor<1x256xf16>
// The same with the second reader before the cast (the view's uses in the other order): nothing stripped.
// RUN: sed 's|    %%2 = "tpu.Cast"(%%1)|    %%9 = "tpu.Reshape"(%%1) {shape = [256]} : (tensor<1x256xf32>) -> tensor<256xf32> loc("flat2")\n    %%2 = "tpu.Cast"(%%1)|; s/return %%3 : tensor<1x256xf32>/return %%3, %%9 : tensor<1x256xf32>, tensor<256xf32>/; s/-> tensor<1x256xf32> {/-> (tensor<1x256xf32>, tensor<256xf32>) {/' %S/Inputs/strip_io_quant_reshape.mlir > %t/three.mlir
// RUN: tpuc-opt %t/three.mlir --strip-io-quant="quant_input=True" | filecheck %s --check-prefix=THREE
// THREE:      "top.Input"(%arg0) : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
// THREE-NEXT: "tpu.Reshape"(%0) {shape = [1, 256]} : (tensor<1x4x8x8xf32>) -> tensor<1x256xf32>
// THREE-NEXT: "tpu.Reshape"(%1) {shape = [256]} : (tensor<1x256xf32>) -> tensor<256xf32>
// THREE-NEXT: "tpu.Cast"(%1) : (tensor<1x256xf32>) -> tensor<1x256xf16>
// LIST0:    error: strip-io-quant: quant_input_list=0 is not a list of 1-based indices (e.g. 1,3)
// LISTSEMI: error: strip-io-quant: quant_output_list=1;2 is not a list of 1-based indices (e.g. 1,3)
// QIN8:     error: strip-io-quant: quant_input_int8=true is not supported: tpudsl strips only the INT8, F16 and BF16 casts of quant_input/quant_output (supported: quant_input_int8=false)
// QOUT8:    error: strip-io-quant: quant_output_int8=true is not supported: tpudsl strips only the INT8, F16 and BF16 casts of quant_input/quant_output (supported: quant_output_int8=false)

module attributes {module.chip = "ALL", module.name = "m", module.platform = "ONNX", module.state = "TOP_F32", module.weight_file = "m_weight.npz"} {
  func.func @main(%arg0: tensor<1x4x8x8xf32>, %arg1: tensor<1x4x8x8xf32>) -> (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) {
    %x = "top.Input"(%arg0) : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("x")
    %y = "top.Input"(%arg1) : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("y")
    %w = "top.Weight"() : () -> tensor<4x4x3x3xf32> loc("w")
    %b = "top.Weight"() : () -> tensor<4xf32> loc("b")
    %c = "top.Conv"(%x, %w, %b) {kernel_shape = [3, 3], pads = [1, 1, 1, 1], do_relu = true} : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32> loc("conv")
    %a = "top.Add"(%c, %y) : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("add")
    return %a, %c : tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>
  }
}
