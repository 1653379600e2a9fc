// The programs the playground's menu offers, each with the arguments and device count it
// runs with. Their results are known by hand (test/browser/browser.test.ts checks two).

export interface Example {
  readonly name: string;
  readonly text: string;
  /** One MLIR literal per parameter of the entry. */
  readonly args: readonly string[];
  readonly devices: number;
}

export const EXAMPLES: readonly Example[] = [
  {
    name: "StableHLO: Σ (x + 1)² per row",
    devices: 1,
    args: ["dense<[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]> : tensor<2x3xf32>"],
    text: `module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3xf32>) -> tensor<2xf32> {
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<2x3xf32>
    %0 = stablehlo.add %arg0, %cst : tensor<2x3xf32>
    %1 = stablehlo.multiply %0, %0 : tensor<2x3xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %2 = stablehlo.reduce(%1 init: %cst_0) applies stablehlo.add across dimensions = [1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
    return %2 : tensor<2xf32>
  }
}
`,
  },
  {
    name: "StableHLO: all-reduce of x + replica id over 4 devices",
    devices: 4,
    args: ["dense<[1.0, 2.0, 3.0]> : tensor<3xf32>"],
    text: `module @all_reduce attributes {mhlo.num_replicas = 4 : i32} {
  func.func public @main(%arg0: tensor<3xf32>) -> tensor<3xf32> {
    %id = stablehlo.replica_id : tensor<ui32>
    %f = stablehlo.convert %id : (tensor<ui32>) -> tensor<f32>
    %b = stablehlo.broadcast_in_dim %f, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %x = stablehlo.add %arg0, %b : tensor<3xf32>
    %0 = "stablehlo.all_reduce"(%x) ({
    ^bb0(%a: tensor<f32>, %c: tensor<f32>):
      %s = stablehlo.add %a, %c : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) {replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>} : (tensor<3xf32>) -> tensor<3xf32>
    return %0 : tensor<3xf32>
  }
}
`,
  },
  {
    name: "Shardy: a 2×2 mesh, a matmul sharded over it",
    devices: 1,
    args: ["dense<1.0> : tensor<8x4xf32>", "dense<2.0> : tensor<4x4xf32>"],
    text: `module @sharded {
  sdy.mesh @mesh = <["data"=2, "model"=2]>
  func.func @main(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>},
                  %arg1: tensor<4x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}) -> tensor<8x4xf32> {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<8x4xf32>, tensor<4x4xf32>) -> tensor<8x4xf32>
    return %0 : tensor<8x4xf32>
  }
}
`,
  },
  {
    name: "HLO text: a fused multiply-add",
    devices: 1,
    args: ["dense<[1.0, 2.0]> : tensor<2xf32>", "dense<[3.0, 4.0]> : tensor<2xf32>"],
    text: `HloModule fma

ENTRY main {
  x = f32[2] parameter(0)
  y = f32[2] parameter(1)
  m = f32[2] multiply(x, y)
  ROOT r = f32[2] add(m, x)
}
`,
  },
];
