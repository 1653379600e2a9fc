// A minimal ONNX model encoder: just the protobuf messages and fields the benchmark's graphs
// need (ModelProto, GraphProto, NodeProto, AttributeProto, TensorProto, ValueInfoProto), so the
// onnxruntime peers run models built here, in code, from the same description as the others.
// Field numbers are those of onnx.proto3.

class Writer {
  constructor() { this.parts = []; this.length = 0; }
  bytes(b) { this.parts.push(b); this.length += b.length; }
  varint(v) {
    let n = BigInt.asUintN(64, BigInt(v));
    const out = [];
    do { let byte = Number(n & 0x7fn); n >>= 7n; if (n !== 0n) byte |= 0x80; out.push(byte); } while (n !== 0n);
    this.bytes(Uint8Array.from(out));
  }
  tag(field, wire) { this.varint((field << 3) | wire); }
  int(field, v) { this.tag(field, 0); this.varint(v); }
  string(field, s) { this.message(field, new TextEncoder().encode(s)); }
  message(field, body) { this.tag(field, 2); this.varint(body.length); this.bytes(body); }
  float(field, f) { this.tag(field, 5); const b = new Uint8Array(4); new DataView(b.buffer).setFloat32(0, f, true); this.bytes(b); }
  packedInts(field, vs) { const w = new Writer(); for (const v of vs) w.varint(v); this.message(field, w.finish()); }
  finish() { const out = new Uint8Array(this.length); let o = 0; for (const p of this.parts) { out.set(p, o); o += p.length; } return out; }
}

const DATA_TYPE = { float32: 1, int64: 7 };

function encodeAttribute(name, value) {
  const w = new Writer();
  w.string(1, name);
  if (typeof value === "number" && Number.isInteger(value)) { w.int(3, value); w.int(20, 2); }
  else if (typeof value === "number") { w.float(2, value); w.int(20, 1); }
  else if (typeof value === "string") { w.message(4, new TextEncoder().encode(value)); w.int(20, 3); }
  else if (Array.isArray(value)) { w.packedInts(8, value); w.int(20, 7); }
  else throw new Error(`onnx attribute ${name}: unsupported value`);
  return w.finish();
}

function encodeTensor(name, dtype, dims, data) {
  const w = new Writer();
  w.packedInts(1, dims);
  w.int(2, DATA_TYPE[dtype]);
  w.string(8, name);
  w.message(9, new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
  return w.finish();
}

function encodeValueInfo(name, dtype, dims) {
  const shape = new Writer();
  for (const d of dims) { const dim = new Writer(); dim.int(1, d); shape.message(1, dim.finish()); }
  const tensor = new Writer();
  tensor.int(1, DATA_TYPE[dtype]);
  tensor.message(2, shape.finish());
  const type = new Writer();
  type.message(1, tensor.finish());
  const w = new Writer();
  w.string(1, name);
  w.message(2, type.finish());
  return w.finish();
}

/** Builds one graph: inputs, nodes (op(inputs...) → fresh output names), constants, outputs. */
export class OnnxGraph {
  constructor(name) { this.name = name; this.nodes = []; this.inputs = []; this.outputs = []; this.initializers = []; this.count = 0; }
  input(name, dims) { this.inputs.push({ name, dims }); return name; }
  /** A float32 or int64 constant (an initializer). */
  constant(dtype, dims, values) {
    const name = `const_${this.count++}`;
    const data = dtype === "int64" ? BigInt64Array.from(values, (v) => BigInt(v)) : Float32Array.from(values);
    this.initializers.push(encodeTensor(name, dtype, dims, data));
    return name;
  }
  /** A float32 initializer holding `data` as is (a model's weight). */
  weight(name, dims, data) { this.initializers.push(encodeTensor(name, "float32", dims, data)); return name; }
  scalar(v) { return this.constant("float32", [], [v]); }
  ints(vs) { return this.constant("int64", [vs.length], vs); }
  /** Adds one node; returns its output name (or names when `outputs` > 1). */
  op(opType, inputs, attrs = {}, outputs = 1) {
    const outs = Array.from({ length: outputs }, () => `${opType.toLowerCase()}_${this.count++}`);
    this.nodes.push({ opType, inputs, outputs: outs, attrs });
    return outputs === 1 ? outs[0] : outs;
  }
  output(name, dims) { this.outputs.push({ name, dims }); }
  /** The serialized ModelProto (opset 17 of the default domain). */
  encode(opset = 17) {
    const g = new Writer();
    for (const n of this.nodes) {
      const w = new Writer();
      for (const i of n.inputs) w.string(1, i);
      for (const o of n.outputs) w.string(2, o);
      w.string(3, n.outputs[0]);
      w.string(4, n.opType);
      for (const [k, v] of Object.entries(n.attrs)) w.message(5, encodeAttribute(k, v));
      g.message(1, w.finish());
    }
    g.string(2, this.name);
    for (const t of this.initializers) g.message(5, t);
    for (const i of this.inputs) g.message(11, encodeValueInfo(i.name, "float32", i.dims));
    for (const o of this.outputs) g.message(12, encodeValueInfo(o.name, "float32", o.dims));
    const opsetId = new Writer();
    opsetId.string(1, "");
    opsetId.int(2, opset);
    const m = new Writer();
    m.int(1, 8); // ir_version 8 (ONNX 1.10+), enough for opset 17
    m.string(2, "xlats-bench");
    m.message(7, g.finish());
    m.message(8, opsetId.finish());
    return m.finish();
  }
}
