// Host and device transfers (seed 000: Infeed, Outfeed, Send, Recv), with the cases of
// StableHLO's interpreter tests infeed.mlir, outfeed.mlir and send_recv.mlir.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  ExecutionError, HostQueues, Literal, ShapeError, TOKEN_SHAPE, XlaBuilder, arrayShape, constantLiteral,
  createToken, getTupleElement, infeed, infeedWithToken, outfeed, outfeedWithToken, parameter, recv,
  recvFromHost, send, sendToHost, tuple, tupleShape,
} from "../../src/index.js";
import { evaluate } from "../support/backend.js";

const s64Matrix = (rows: number[][]): Literal => Literal.from("s64", rows.map((r) => r.map(BigInt)));

test("StableHLO infeed.mlir: two infeeds read the host's queue in order", () => {
  const b = new XlaBuilder("infeed");
  const token = parameter(b, 0, TOKEN_SHAPE);
  const shape = arrayShape("s64", [2, 2]);
  const r0 = infeedWithToken(token, shape);
  const r1 = infeedWithToken(token, shape);
  assert.deepEqual(r0.shape, tupleShape([shape, TOKEN_SHAPE]));
  const host = new HostQueues();
  host.infeed.push(s64Matrix([[1, 2], [3, 4]]), s64Matrix([[5, 6], [7, 8]]));
  const r = evaluate(b.build(tuple(b, [getTupleElement(r0, 0), getTupleElement(r1, 0)])), [Literal.token()], { host });
  assert.deepEqual(r.elements[0]!.values(), [1n, 2n, 3n, 4n]);
  assert.deepEqual(r.elements[1]!.values(), [5n, 6n, 7n, 8n]);
  assert.equal(host.infeed.length, 0);
});

test("Infeed: empty queue and wrong shape are ExecutionErrors; the empty tuple reads nothing", () => {
  const b = new XlaBuilder("i");
  const c = b.build(infeed(b, arrayShape("f32", [2])));
  assert.throws(() => evaluate(c, []), (e: unknown) => e instanceof ExecutionError && /queue is empty/.test(e.message));
  const host = new HostQueues();
  host.infeed.push(Literal.fromValues("f32", [3], [1, 2, 3]));
  assert.throws(() => evaluate(c, [], { host }), /queued a value of shape f32\[3\], the program reads f32\[2\]/);
  const b2 = new XlaBuilder("unit");
  const empty = new HostQueues();
  empty.infeed.push(Literal.fromValues("f32", [2], [1, 2]));
  const r = evaluate(b2.build(infeed(b2, tupleShape([]))), [], { host: empty });
  assert.equal(r.elements.length, 0);
  assert.equal(empty.infeed.length, 1);
  assert.throws(() => infeed(new XlaBuilder("n"), tupleShape([tupleShape([])])), /nested tuple/);
  assert.throws(() => infeedWithToken(constantLiteral(new XlaBuilder("t"), Literal.scalar("s32", 0)), arrayShape("f32", [1])), /token/);
});

test("StableHLO outfeed.mlir: the operand reaches the host's outfeed", () => {
  const b = new XlaBuilder("outfeed");
  const data = Literal.from("s64", [[[1n, 2n], [3n, 4n]], [[5n, 6n], [7n, 8n]]]);
  const x = parameter(b, 0, data.shape);
  const t = outfeedWithToken(x, createToken(b), data.shape);
  assert.deepEqual(t.shape, TOKEN_SHAPE);
  const host = new HostQueues();
  evaluate(b.build(t), [data], { host });
  assert.equal(host.outfeed.length, 1);
  assert.deepEqual(host.outfeed[0]!.values(), [1n, 2n, 3n, 4n, 5n, 6n, 7n, 8n]);
});

test("Outfeed lays the data out as shape_with_layout says and checks it matches the operand", () => {
  const b = new XlaBuilder("o");
  const x = constantLiteral(b, Literal.fromValues("s32", [2, 3], [1, 2, 3, 4, 5, 6]));
  const colMajor = arrayShape("s32", [2, 3], { layout: { minorToMajor: [0, 1] } });
  assert.throws(() => outfeed(x, arrayShape("s32", [3, 2])), /shape_with_layout/);
  const host = new HostQueues();
  evaluate(b.build(outfeed(x, colMajor)), [], { host });
  assert.deepEqual([...host.outfeed[0]!.data], [1, 4, 2, 5, 3, 6]);
});

test("StableHLO send_recv.mlir: host sends on channel 1 arrive in order; host recvs take them back", () => {
  const b = new XlaBuilder("send");
  const operand = parameter(b, 0, arrayShape("s64", [2, 2]));
  const token = parameter(b, 1, TOKEN_SHAPE);
  const t0 = sendToHost(operand, token, 1);
  const t1 = sendToHost(constantLiteral(b, s64Matrix([[5, 6], [7, 8]])), token, 1);
  const host = new HostQueues();
  evaluate(b.build(tuple(b, [t0, t1])), [s64Matrix([[1, 2], [3, 4]]), Literal.token()], { host });
  const sent = host.toHost.get(1)!;
  assert.deepEqual(sent.map((l) => l.values()), [[1n, 2n, 3n, 4n], [5n, 6n, 7n, 8n]]);

  const rb = new XlaBuilder("recv");
  const rt = parameter(rb, 0, TOKEN_SHAPE);
  const r0 = recvFromHost(rt, arrayShape("s64", [2, 2]), 1);
  const r1 = recvFromHost(rt, arrayShape("s64", [2, 2]), 1);
  host.fromHost.set(1, [...sent]);
  const r = evaluate(rb.build(tuple(rb, [getTupleElement(r0, 0), getTupleElement(r1, 0)])), [Literal.token()], { host });
  assert.deepEqual(r.elements.map((l) => l.values()), [[1n, 2n, 3n, 4n], [5n, 6n, 7n, 8n]]);
});

test("Device Send/Recv on one device pair up by channel; a Recv with nothing sent is an error", () => {
  const b = new XlaBuilder("d2d");
  const token = createToken(b);
  const t1 = send(constantLiteral(b, Literal.fromValues("f32", [2], [1, 2])), token, 7);
  const t2 = send(constantLiteral(b, Literal.fromValues("f32", [2], [3, 4])), token, 8);
  const r8 = recv(t2, arrayShape("f32", [2]), 8);
  const r7 = recv(t1, arrayShape("f32", [2]), 7);
  const c = b.build(tuple(b, [getTupleElement(r7, 0), getTupleElement(r8, 0)]));
  const r = evaluate(c, []);
  assert.deepEqual(r.elements.map((l) => l.toNumbers()), [[1, 2], [3, 4]]);

  const lonely = new XlaBuilder("lonely");
  const c2 = lonely.build(recv(createToken(lonely), arrayShape("f32", [2]), 3));
  assert.throws(() => evaluate(c2, []), (e: unknown) => e instanceof ExecutionError && /channel 3 has no value sent on this device/.test(e.message));

  const mismatch = new XlaBuilder("mismatch");
  const tk = send(constantLiteral(mismatch, Literal.fromValues("f32", [2], [1, 2])), createToken(mismatch), 1);
  const c3 = mismatch.build(recv(tk, arrayShape("f32", [3]), 1));
  assert.throws(() => evaluate(c3, []), /carries f32\[2\], expected f32\[3\]/);
});

test("Send/Recv shape rules: tokens, channel types", () => {
  const b = new XlaBuilder("bad");
  const x = constantLiteral(b, Literal.scalar("f32", 1));
  assert.throws(() => send(x, x, 1), /token/);
  assert.throws(() => send(x, createToken(b), { handle: 1, type: "DEVICE_TO_HOST" }), /does not match is_host_transfer=false/);
  assert.throws(() => recv(createToken(b), arrayShape("f32", [1]), -1), ShapeError);
  assert.throws(() => send(createToken(b), createToken(b), 1), /cannot be a token/);
});
