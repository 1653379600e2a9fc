import { test } from "node:test";
import assert from "node:assert/strict";
import { ByteWriter, ModuleBuilder, type FunctionBuilder } from "../../../src/compiler/wasm/encoder.js";
import { buildRun } from "./harness.js";

const hex = (w: ByteWriter): string => [...w.toBytes()].map((b) => b.toString(16).padStart(2, "0")).join(" ");

test("LEB128: unsigned and signed encodings from the spec's examples", () => {
  assert.equal(hex(new ByteWriter().u32(0)), "00");
  assert.equal(hex(new ByteWriter().u32(127)), "7f");
  assert.equal(hex(new ByteWriter().u32(128)), "80 01");
  assert.equal(hex(new ByteWriter().u32(624485)), "e5 8e 26");
  assert.equal(hex(new ByteWriter().u32(0xffffffff)), "ff ff ff ff 0f");
  assert.equal(hex(new ByteWriter().sleb(0)), "00");
  assert.equal(hex(new ByteWriter().sleb(63)), "3f");
  assert.equal(hex(new ByteWriter().sleb(64)), "c0 00");
  assert.equal(hex(new ByteWriter().sleb(-64)), "40");
  assert.equal(hex(new ByteWriter().sleb(-65)), "bf 7f");
  assert.equal(hex(new ByteWriter().sleb(-123456)), "c0 bb 78");
  assert.equal(hex(new ByteWriter().sleb(-(2n ** 63n))), "80 80 80 80 80 80 80 80 80 7f");
  assert.throws(() => new ByteWriter().u32(-1), RangeError);
});

test("types are deduplicated; functions call each other; exports by name", () => {
  const m = new ModuleBuilder();
  const double = m.addFunction(undefined, ["i32"], ["i32"], (f) => f.localGet(0).localGet(0).i32Add());
  const inc = m.addFunction("inc", ["i32"], ["i32"], (f) => f.localGet(0).i32Const(1).i32Add());
  m.addFunction("run", ["i32"], ["i32"], (f) => f.localGet(0).call(double).call(inc));
  const bytes = m.finish();
  assert.ok(WebAssembly.validate(bytes));
  const module = new WebAssembly.Module(bytes);
  assert.deepEqual(WebAssembly.Module.exports(module).map((e) => e.name), ["inc", "run"]);
  const ex = new WebAssembly.Instance(module).exports;
  assert.equal((ex["run"] as (x: number) => number)(20), 41);
  // One (i32) -> i32 type for all three: the type section holds one entry.
  assert.equal(bytes[8], 1); // section id 1
  assert.equal(bytes[10], 1); // one type
});

const I32_VALUES = [0, 1, -1, 7, -7, 123456789, -987654321, 0x7fffffff, -0x80000000, 31, 33];

test("i32: arithmetic, bitwise, shifts, comparisons vs JS", () => {
  const cases: [keyof FunctionBuilder, (a: number, b: number) => number][] = [
    ["i32Add", (a, b) => (a + b) | 0], ["i32Sub", (a, b) => (a - b) | 0], ["i32Mul", (a, b) => Math.imul(a, b)],
    ["i32And", (a, b) => a & b], ["i32Or", (a, b) => a | b], ["i32Xor", (a, b) => a ^ b],
    ["i32Shl", (a, b) => a << b], ["i32ShrS", (a, b) => a >> b], ["i32ShrU", (a, b) => (a >>> b) | 0],
    ["i32Rotl", (a, b) => ((a << (b & 31)) | (a >>> (32 - (b & 31)))) | 0], ["i32Rotr", (a, b) => ((a >>> (b & 31)) | (a << (32 - (b & 31)))) | 0],
    ["i32Eq", (a, b) => +(a === b)], ["i32Ne", (a, b) => +(a !== b)],
    ["i32LtS", (a, b) => +(a < b)], ["i32LtU", (a, b) => +(a >>> 0 < b >>> 0)], ["i32GtS", (a, b) => +(a > b)], ["i32GtU", (a, b) => +(a >>> 0 > b >>> 0)],
    ["i32LeS", (a, b) => +(a <= b)], ["i32LeU", (a, b) => +(a >>> 0 <= b >>> 0)], ["i32GeS", (a, b) => +(a >= b)], ["i32GeU", (a, b) => +(a >>> 0 >= b >>> 0)],
  ];
  for (const [op, ref] of cases) {
    const { run } = buildRun(["i32", "i32"], ["i32"], (f) => { f.localGet(0).localGet(1); (f[op] as () => FunctionBuilder).call(f); });
    for (const a of I32_VALUES) for (const b of I32_VALUES) assert.equal(run(a, b), ref(a, b), `${op}(${a}, ${b})`);
  }
  const division: [keyof FunctionBuilder, (a: number, b: number) => number][] = [
    ["i32DivS", (a, b) => (a / b) | 0], ["i32DivU", (a, b) => ((a >>> 0) / (b >>> 0)) | 0],
    ["i32RemS", (a, b) => (a % b) | 0], ["i32RemU", (a, b) => ((a >>> 0) % (b >>> 0)) | 0],
  ];
  for (const [op, ref] of division) {
    const { run } = buildRun(["i32", "i32"], ["i32"], (f) => { f.localGet(0).localGet(1); (f[op] as () => FunctionBuilder).call(f); });
    for (const a of [100, -100, 7, 0x7fffffff]) for (const b of [3, -3, 7, 1]) assert.equal(run(a, b), ref(a, b), `${op}(${a}, ${b})`);
  }
  const unary: [keyof FunctionBuilder, (a: number) => number][] = [
    ["i32Eqz", (a) => +(a === 0)], ["i32Clz", (a) => Math.clz32(a)], ["i32Ctz", (a) => (a === 0 ? 32 : 31 - Math.clz32(a & -a))],
    ["i32Popcnt", (a) => [...(a >>> 0).toString(2)].filter((c) => c === "1").length],
    ["i32Extend8S", (a) => (a << 24) >> 24], ["i32Extend16S", (a) => (a << 16) >> 16],
  ];
  for (const [op, ref] of unary) {
    const { run } = buildRun(["i32"], ["i32"], (f) => { f.localGet(0); (f[op] as () => FunctionBuilder).call(f); });
    for (const a of I32_VALUES) assert.equal(run(a), ref(a), `${op}(${a})`);
  }
  const consts = buildRun([], ["i32"], (f) => f.i32Const(-123456).i32Const(0x7fffffff).i32Add());
  assert.equal(consts.run(), (0x7fffffff - 123456) | 0);
});

test("i64: arithmetic, comparisons and extensions, stored to memory and read as BigInt", () => {
  const A = [0n, 1n, -1n, 5n, -(2n ** 40n) + 3n, 2n ** 62n + 17n, -(2n ** 63n)];
  const wrap = (x: bigint): bigint => BigInt.asIntN(64, x);
  const binary: [keyof FunctionBuilder, (a: bigint, b: bigint) => bigint][] = [
    ["i64Add", (a, b) => wrap(a + b)], ["i64Sub", (a, b) => wrap(a - b)], ["i64Mul", (a, b) => wrap(a * b)],
    ["i64And", (a, b) => a & b], ["i64Or", (a, b) => a | b], ["i64Xor", (a, b) => a ^ b],
    ["i64Shl", (a, b) => wrap(a << (b & 63n))], ["i64ShrS", (a, b) => a >> (b & 63n)], ["i64ShrU", (a, b) => wrap(BigInt.asUintN(64, a) >> (b & 63n))],
    ["i64Rotl", (a, b) => { const s = b & 63n; const u = BigInt.asUintN(64, a); return wrap((u << s) | (u >> ((64n - s) & 63n))); }],
    ["i64Rotr", (a, b) => { const s = b & 63n; const u = BigInt.asUintN(64, a); return wrap((u >> s) | (u << ((64n - s) & 63n))); }],
    ["i64Eq", (a, b) => BigInt(a === b)], ["i64Ne", (a, b) => BigInt(a !== b)], ["i64LtS", (a, b) => BigInt(a < b)], ["i64LtU", (a, b) => BigInt(BigInt.asUintN(64, a) < BigInt.asUintN(64, b))],
    ["i64GtS", (a, b) => BigInt(a > b)], ["i64GtU", (a, b) => BigInt(BigInt.asUintN(64, a) > BigInt.asUintN(64, b))], ["i64LeS", (a, b) => BigInt(a <= b)],
    ["i64LeU", (a, b) => BigInt(BigInt.asUintN(64, a) <= BigInt.asUintN(64, b))], ["i64GeS", (a, b) => BigInt(a >= b)], ["i64GeU", (a, b) => BigInt(BigInt.asUintN(64, a) >= BigInt.asUintN(64, b))],
  ];
  const isCompare = (op: string): boolean => /(Eq|Ne|Lt|Gt|Le|Ge)/.test(op);
  for (const [op, ref] of binary) {
    // run() loads a and b from memory [0] and [8], stores the result at [16].
    const { run, memory } = buildRun([], [], (f) => {
      f.i32Const(16).i32Const(0).i64Load().i32Const(0).i64Load(8);
      (f[op] as () => FunctionBuilder).call(f);
      if (isCompare(op)) f.i64ExtendI32U();
      f.i64Store();
    });
    const mem = new BigInt64Array(memory.buffer, 0, 3);
    for (const a of A) for (const b of A) {
      mem[0] = a; mem[1] = b; run();
      assert.equal(mem[2], ref(a, b), `${op}(${a}, ${b})`);
    }
  }
  const unary: [keyof FunctionBuilder, (a: bigint) => bigint][] = [
    ["i64Clz", (a) => BigInt(a === 0n ? 64 : 64 - BigInt.asUintN(64, a).toString(2).length)],
    ["i64Ctz", (a) => { if (a === 0n) return 64n; let n = 0n; let u = BigInt.asUintN(64, a); while ((u & 1n) === 0n) { u >>= 1n; n++; } return n; }],
    ["i64Popcnt", (a) => BigInt([...BigInt.asUintN(64, a).toString(2)].filter((c) => c === "1").length)],
    ["i64Extend8S", (a) => BigInt.asIntN(8, a)], ["i64Extend16S", (a) => BigInt.asIntN(16, a)], ["i64Extend32S", (a) => BigInt.asIntN(32, a)],
    ["i64Eqz", (a) => BigInt(a === 0n)],
  ];
  for (const [op, ref] of unary) {
    const { run, memory } = buildRun([], [], (f) => {
      f.i32Const(16).i32Const(0).i64Load();
      (f[op] as () => FunctionBuilder).call(f);
      if (op === "i64Eqz") f.i64ExtendI32U();
      f.i64Store();
    });
    const mem = new BigInt64Array(memory.buffer, 0, 3);
    for (const a of A) { mem[0] = a; run(); assert.equal(mem[2], ref(a), `${op}(${a})`); }
  }
  const { run, memory } = buildRun(["i32"], [], (f) => {
    f.i32Const(0).i64Const(-(2n ** 63n) + 5n).i64Const(-7).i64DivS().i64Store();
    f.i32Const(8).i64Const(-100).i64Const(7).i64RemS().i64Store();
    f.i32Const(16).i64Const(-1).i64Const(3).i64DivU().i64Store();
    f.i32Const(24).i64Const(-1).i64Const(10).i64RemU().i64Store();
    f.i32Const(32).localGet(0).i64ExtendI32S().i64Store();
    f.i32Const(40).localGet(0).i64ExtendI32U().i64Store();
    f.i32Const(48).i64Const(0x123456789abn).i32WrapI64().i64ExtendI32U().i64Store();
  });
  run(-5);
  const r = new BigInt64Array(memory.buffer, 0, 7);
  assert.deepEqual([...r], [
    (-(2n ** 63n) + 5n) / -7n, -100n % 7n, BigInt.asIntN(64, (2n ** 64n - 1n) / 3n), BigInt.asIntN(64, (2n ** 64n - 1n) % 10n),
    -5n, 2n ** 32n - 5n, 0x456789abn,
  ]);
});

const F_VALUES = [0, -0, 1.5, -2.25, 3.75, 1e-3, -1e30, 0.5, 2.5, -0.5, 7];

test("f32 and f64: arithmetic, rounding, comparisons vs JS", () => {
  for (const t of ["f32", "f64"] as const) {
    const round = t === "f32" ? Math.fround : (x: number) => x;
    const P = t === "f32" ? "f32" : "f64";
    const binary: [string, (a: number, b: number) => number][] = [
      ["Add", (a, b) => round(a + b)], ["Sub", (a, b) => round(a - b)], ["Mul", (a, b) => round(a * b)], ["Div", (a, b) => round(a / b)],
      ["Min", (a, b) => Math.min(a, b)], ["Max", (a, b) => Math.max(a, b)], ["Copysign", (a, b) => (Object.is(Math.sign(b), -1) || Object.is(b, -0) ? -Math.abs(a) : Math.abs(a))],
    ];
    for (const [name, ref] of binary) {
      const { run } = buildRun([t, t], [t], (f) => { f.localGet(0).localGet(1); (f[`${P}${name}` as keyof FunctionBuilder] as () => FunctionBuilder).call(f); });
      for (const a of F_VALUES) for (const b of F_VALUES) assert.ok(Object.is(run(round(a), round(b)), ref(round(a), round(b))), `${t}.${name}(${a}, ${b})`);
    }
    const compare: [string, (a: number, b: number) => boolean][] = [
      ["Eq", (a, b) => a === b], ["Ne", (a, b) => a !== b], ["Lt", (a, b) => a < b], ["Gt", (a, b) => a > b], ["Le", (a, b) => a <= b], ["Ge", (a, b) => a >= b],
    ];
    for (const [name, ref] of compare) {
      const { run } = buildRun([t, t], ["i32"], (f) => { f.localGet(0).localGet(1); (f[`${P}${name}` as keyof FunctionBuilder] as () => FunctionBuilder).call(f); });
      for (const a of [...F_VALUES, NaN]) for (const b of [...F_VALUES, NaN]) assert.equal(run(round(a), round(b)), +ref(round(a), round(b)), `${t}.${name}(${a}, ${b})`);
    }
    const even = (x: number): number => { const r = Math.round(x); return Math.abs(x % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r; };
    const unary: [string, (a: number) => number][] = [
      ["Abs", Math.abs], ["Neg", (a) => -a], ["Ceil", Math.ceil], ["Floor", Math.floor], ["Trunc", Math.trunc], ["Nearest", (a) => (a === 0 ? a : even(a) === 0 ? Math.sign(a) * 0 : even(a))], ["Sqrt", (a) => round(Math.sqrt(a))],
    ];
    for (const [name, ref] of unary) {
      const { run } = buildRun([t], [t], (f) => { f.localGet(0); (f[`${P}${name}` as keyof FunctionBuilder] as () => FunctionBuilder).call(f); });
      for (const a of F_VALUES) {
        if (name === "Sqrt" && a < 0) continue;
        assert.ok(Object.is(run(round(a)), ref(round(a))), `${t}.${name}(${a}) = ${run(round(a))}`);
      }
    }
  }
  assert.equal(buildRun([], ["f32"], (f) => f.f32Const(0.1)).run(), Math.fround(0.1));
  assert.equal(buildRun([], ["f64"], (f) => f.f64Const(0.1)).run(), 0.1);
});

test("conversions between integer and float types, reinterpretations, saturating truncations", () => {
  const one = (params: ("i32" | "f32" | "f64")[], result: "i32" | "f32" | "f64", body: (f: FunctionBuilder) => void) => buildRun(params, [result], (f) => { f.localGet(0); body(f); }).run;
  assert.equal(one(["f32"], "i32", (f) => f.i32TruncF32S())(-3.7), -3);
  assert.equal(one(["f32"], "i32", (f) => f.i32TruncF32U())(3e9), -1294967296);
  assert.equal(one(["f64"], "i32", (f) => f.i32TruncF64S())(-2.9), -2);
  assert.equal(one(["f64"], "i32", (f) => f.i32TruncF64U())(4e9), (4e9 | 0));
  assert.throws(() => one(["f32"], "i32", (f) => f.i32TruncF32S())(3e9), WebAssembly.RuntimeError);
  assert.equal(one(["f32"], "i32", (f) => f.i32TruncSatF32S())(3e9), 0x7fffffff);
  assert.equal(one(["f32"], "i32", (f) => f.i32TruncSatF32U())(-5), 0);
  assert.equal(one(["f64"], "i32", (f) => f.i32TruncSatF64S())(NaN), 0);
  assert.equal(one(["f64"], "i32", (f) => f.i32TruncSatF64U())(1e12), -1);
  assert.equal(one(["i32"], "f32", (f) => f.f32ConvertI32S())(-16777217), -16777216);
  assert.equal(one(["i32"], "f32", (f) => f.f32ConvertI32U())(-1), 4294967296);
  assert.equal(one(["i32"], "f64", (f) => f.f64ConvertI32S())(-5), -5);
  assert.equal(one(["i32"], "f64", (f) => f.f64ConvertI32U())(-1), 4294967295);
  assert.equal(one(["f64"], "f32", (f) => f.f32DemoteF64())(0.1), Math.fround(0.1));
  assert.equal(one(["f32"], "f64", (f) => f.f64PromoteF32())(0.1), Math.fround(0.1));
  assert.equal(one(["f32"], "i32", (f) => f.i32ReinterpretF32())(1), 0x3f800000);
  assert.equal(one(["i32"], "f32", (f) => f.f32ReinterpretI32())(0x40490fdb), Math.fround(Math.PI));
  // i64 <-> float, via memory.
  const { run, memory } = buildRun([], [], (f) => {
    f.i32Const(0).f64Const(-1e15).i64TruncF64S().i64Store();
    f.i32Const(8).f32Const(3e9).i64TruncF32U().i64Store();
    f.i32Const(16).f32Const(-7.5).i64TruncF32S().i64Store();
    f.i32Const(24).f64Const(1.8e19).i64TruncF64U().i64Store();
    f.i32Const(32).f64Const(1e300).i64TruncSatF64S().i64Store();
    f.i32Const(40).f32Const(-1).i64TruncSatF32U().i64Store();
    f.i32Const(48).f32Const(-1e30).i64TruncSatF32S().i64Store();
    f.i32Const(56).f64Const(-3).i64TruncSatF64U().i64Store();
    f.i32Const(64).f64Const(2.5).i64ReinterpretF64().i64Store();
    f.i32Const(72).i64Const(-3).f64ConvertI64S().f64Store();
    f.i32Const(80).i64Const(-1).f64ConvertI64U().f64Store();
    f.i32Const(88).i64Const(-3).f32ConvertI64S().f32Store();
    f.i32Const(92).i64Const(-1).f32ConvertI64U().f32Store();
    f.i32Const(96).i64Const(0x4004000000000000n).f64ReinterpretI64().f64Store();
  });
  run();
  const i64 = new BigInt64Array(memory.buffer, 0, 9);
  assert.deepEqual([...i64], [-(10n ** 15n), 3000000000n, -7n, BigInt.asIntN(64, 18000000000000000000n), 2n ** 63n - 1n, 0n, -(2n ** 63n), 0n, 0x4004000000000000n]);
  const f64 = new Float64Array(memory.buffer, 72, 2);
  assert.deepEqual([...f64], [-3, 2 ** 64]);
  const f32 = new Float32Array(memory.buffer, 88, 2);
  assert.deepEqual([...f32], [-3, 2 ** 64]);
  assert.equal(new Float64Array(memory.buffer, 96, 1)[0], 2.5);
});

test("loads and stores of every width, with sign and zero extension and offsets", () => {
  const { run, memory } = buildRun([], [], (f) => {
    const p = 0;
    const out = 64;
    // bytes [0..8): 0xf0 0x81 0x82 0x83 0x84 0x85 0x86 0x87
    f.i32Const(out).i32Const(p).i32Load8S().i32Store();
    f.i32Const(out).i32Const(p).i32Load8U().i32Store(4);
    f.i32Const(out).i32Const(p).i32Load16S().i32Store(8);
    f.i32Const(out).i32Const(p).i32Load16U().i32Store(12);
    f.i32Const(out).i32Const(p).i32Load(4).i32Store(16);
    f.i32Const(out).i32Const(p).i64Load8S(1).i64Store(24);
    f.i32Const(out).i32Const(p).i64Load8U(1).i64Store(32);
    f.i32Const(out).i32Const(p).i64Load16S(2).i64Store(40);
    f.i32Const(out).i32Const(p).i64Load16U(2).i64Store(48);
    f.i32Const(out).i32Const(p).i64Load32S(4).i64Store(56);
    f.i32Const(out).i32Const(p).i64Load32U(4).i64Store(64);
    f.i32Const(out).i32Const(p).i64Load().i64Store(72);
    f.i32Const(out).i32Const(0x11223344).i32Store8(80);
    f.i32Const(out).i32Const(0x11223344).i32Store16(82);
    f.i32Const(out).i64Const(0x55667788).i64Store8(84);
    f.i32Const(out).i64Const(0x55667788).i64Store16(86);
    f.i32Const(out).i64Const(0x55667788).i64Store32(88);
    f.i32Const(out).f32Const(1.5).f32Store(92);
    f.i32Const(out).f64Const(-2.5).f64Store(96);
    f.i32Const(out + 104).i32Const(0).f32Load(92 + out).f32Store();
    f.i32Const(out + 112).i32Const(0).f64Load(96 + out).f64Store();
  });
  const bytes = new Uint8Array(memory.buffer);
  bytes.set([0xf0, 0x81, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87]);
  run();
  const dv = new DataView(memory.buffer, 64);
  assert.equal(dv.getInt32(0, true), -16);
  assert.equal(dv.getInt32(4, true), 0xf0);
  assert.equal(dv.getInt32(8, true), (0x81f0 << 16) >> 16);
  assert.equal(dv.getInt32(12, true), 0x81f0);
  assert.equal(dv.getInt32(16, true), (0x87868584 | 0));
  assert.equal(dv.getBigInt64(24, true), -127n);
  assert.equal(dv.getBigInt64(32, true), 0x81n);
  assert.equal(dv.getBigInt64(40, true), BigInt.asIntN(16, 0x8382n));
  assert.equal(dv.getBigInt64(48, true), 0x8382n);
  assert.equal(dv.getBigInt64(56, true), BigInt.asIntN(32, 0x87868584n));
  assert.equal(dv.getBigInt64(64, true), 0x87868584n);
  assert.equal(dv.getBigInt64(72, true), BigInt.asIntN(64, 0x87868584838281f0n));
  assert.equal(dv.getUint8(80), 0x44);
  assert.equal(dv.getUint16(82, true), 0x3344);
  assert.equal(dv.getUint8(84), 0x88);
  assert.equal(dv.getUint16(86, true), 0x7788);
  assert.equal(dv.getUint32(88, true), 0x55667788);
  assert.equal(dv.getFloat32(104, true), 1.5);
  assert.equal(dv.getFloat64(112, true), -2.5);
});

test("control: loops, blocks, br_if, br_table, if/else, select, local.tee, return, memory.copy/fill/size", () => {
  // sum of 1..n with a loop
  const sum = buildRun(["i32"], ["i32"], (f) => {
    const acc = f.local("i32");
    f.block().loop();
    f.localGet(0).i32Eqz().brIf(1);
    f.localGet(acc).localGet(0).i32Add().localSet(acc);
    f.localGet(0).i32Const(1).i32Sub().localSet(0);
    f.br(0).end().end();
    f.localGet(acc);
  });
  assert.equal(sum.run(100), 5050);
  const table = buildRun(["i32"], ["i32"], (f) => {
    f.block().block().block();
    f.localGet(0).brTable([0, 1], 2);
    f.end().i32Const(10).return();
    f.end().i32Const(20).return();
    f.end().i32Const(30);
  });
  assert.deepEqual([0, 1, 2, 9].map((x) => table.run(x)), [10, 20, 30, 30]);
  const ifElse = buildRun(["i32"], ["f64"], (f) => { f.localGet(0).if("f64").f64Const(1.5).else().f64Const(-1.5).end(); });
  assert.equal(ifElse.run(1), 1.5);
  assert.equal(ifElse.run(0), -1.5);
  const sel = buildRun(["i32", "i32", "i32"], ["i32"], (f) => f.localGet(0).localGet(1).localGet(2).select());
  assert.equal(sel.run(5, 6, 1), 5);
  assert.equal(sel.run(5, 6, 0), 6);
  const selV = buildRun(["i32"], ["i32"], (f) => f.f32x4Const(1, 2, 3, 4).f32x4Const(5, 6, 7, 8).localGet(0).selectTyped("v128").i32x4ExtractLane(1));
  assert.equal(selV.run(0), 0x40c00000);
  const tee = buildRun(["i32"], ["i32"], (f) => { const t = f.local("i32"); f.localGet(0).i32Const(3).i32Mul().localTee(t).localGet(t).i32Add(); });
  assert.equal(tee.run(7), 42);
  const locals = buildRun([], ["f64"], (f) => {
    const a = f.local("f32"); const b = f.local("f32"); const c = f.local("f64"); const d = f.local("i64");
    f.f32Const(2).localSet(a).f32Const(3).localSet(b).i64Const(4).localSet(d);
    f.localGet(a).localGet(b).f32Mul().f64PromoteF32().localGet(d).f64ConvertI64S().f64Add().localTee(c).localGet(c).f64Add();
  });
  assert.equal(locals.run(), 20);
  const mem = buildRun([], ["i32"], (f) => {
    f.i32Const(0).i32Const(0xab).i32Const(10).memoryFill();
    f.i32Const(100).i32Const(2).i32Const(8).memoryCopy();
    f.memorySize().i32Const(0).memoryGrow().i32Add();
  }, { pages: 2 });
  assert.equal(mem.run(), 4);
  const b = new Uint8Array(mem.memory.buffer);
  assert.deepEqual([...b.subarray(98, 110)], [0, 0, 0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0, 0]);
  const trap = buildRun([], [], (f) => f.nop().unreachable());
  assert.throws(() => trap.run(), WebAssembly.RuntimeError);
  const drop = buildRun([], ["i32"], (f) => f.i32Const(1).i32Const(2).drop());
  assert.equal(drop.run(), 1);
});

test("atomics on shared memory: rmw add, cmpxchg, load/store, fence, notify", () => {
  const { run, memory } = buildRun([], ["i32"], (f) => {
    f.i32Const(0).i32Const(5).i32AtomicStore();
    f.i32Const(0).i32Const(3).i32AtomicRmwAdd().drop();
    f.i32Const(4).i32Const(0).i32Const(9).i32AtomicRmwCmpxchg().drop();
    f.atomicFence();
    f.i32Const(8).i32Const(1).memoryAtomicNotify().drop();
    f.i32Const(0).i32AtomicLoad().i32Const(4).i32AtomicLoad().i32Add();
  }, { shared: true });
  assert.equal(run(), 17);
  assert.ok(memory.buffer instanceof SharedArrayBuffer);
  // wait32 with a value that differs returns 1 ("not-equal") at once.
  const wait = buildRun([], ["i32"], (f) => f.i32Const(0).i32Const(1).i64Const(0).memoryAtomicWait32(), { shared: true });
  assert.equal(wait.run(), 1);
});

test("passive data: memory.init copies a segment's bytes (from any offset in it) to any address, again on every call (validation needs the data count section)", () => {
  const table = Uint8Array.from({ length: 300 }, (_, i) => (i * 7 + 3) & 0xff);
  let segment = -1;
  // run(dest, from, n): memory.init(dest, from, n)
  const { run, memory } = buildRun(["i32", "i32", "i32"], [], (f) => f.localGet(0).localGet(1).localGet(2).memoryInit(segment), {
    extra: (m) => { segment = m.addPassiveData(new Uint8Array([9, 9])); segment = m.addPassiveData(table); },
  });
  assert.equal(segment, 1);
  const view = new Uint8Array(memory.buffer);
  run(1000, 0, 300);
  assert.deepEqual([...view.subarray(1000, 1300)], [...table]);
  view.fill(0, 1000, 1300);
  run(1001, 10, 5);
  assert.deepEqual([...view.subarray(1000, 1007)], [0, ...table.subarray(10, 15), 0]);
  assert.throws(() => run(0, 290, 11), WebAssembly.RuntimeError, "reading past the segment traps");
});
