// Shape rules of host and device transfers (seed 000: Infeed, Outfeed, Send, Recv).
// Every transfer threads a token so side effects keep their order.

import type { ChannelHandle } from "../attributes.js";
import { shapesEqual, shapeToString, TOKEN_SHAPE, tupleShape, type Shape } from "../../types/shape.js";
import { expectOperandCount, shapeError, type ShapeRuleTable } from "./rule.js";

type TransferOpcode = "infeed" | "outfeed" | "send" | "recv";

function expectToken(opcode: TransferOpcode, s: Shape | undefined): void {
  if (s === undefined || s.kind !== "token") {
    throw shapeError(opcode, "token", `must be a token, got ${s === undefined ? "nothing" : shapeToString(s)}`);
  }
}

/** Data that crosses to or from the host or another device: arrays, or tuples of data (no tokens). */
function expectData(opcode: TransferOpcode, argument: string, s: Shape, allowNestedTuples: boolean): void {
  if (s.kind === "token") throw shapeError(opcode, argument, "cannot be a token");
  if (s.kind === "array" && s.dynamicDimensions.some((d) => d)) {
    throw shapeError(opcode, argument, `must have static dimensions, got ${shapeToString(s)}`);
  }
  if (s.kind === "tuple") {
    for (const e of s.elements) {
      if (e.kind === "tuple" && !allowNestedTuples) {
        throw shapeError(opcode, argument, `nested tuple shapes are not supported, got ${shapeToString(s)}`);
      }
      expectData(opcode, argument, e, allowNestedTuples);
    }
  }
}

function expectChannel(opcode: "send" | "recv", channel: ChannelHandle, isHostTransfer: boolean): void {
  if (!Number.isInteger(channel.handle) || channel.handle < 0) {
    throw shapeError(opcode, "channel_handle", `handle must be a non-negative integer, got ${channel.handle}`);
  }
  const hostType = opcode === "send" ? "DEVICE_TO_HOST" : "HOST_TO_DEVICE";
  const expected = isHostTransfer ? hostType : "DEVICE_TO_DEVICE";
  if (channel.type !== expected) {
    throw shapeError(opcode, "channel_handle",
      `type ${channel.type} does not match is_host_transfer=${isHostTransfer}; expected ${expected}`);
  }
}

export const transferShapeRules: ShapeRuleTable<TransferOpcode> = {
  infeed: (operands, attrs) => {
    expectOperandCount("infeed", operands, 1);
    expectToken("infeed", operands[0]);
    expectData("infeed", "shape", attrs.shape, false);
    return tupleShape([attrs.shape, TOKEN_SHAPE]);
  },

  outfeed: (operands, attrs) => {
    expectOperandCount("outfeed", operands, 2);
    expectToken("outfeed", operands[1]);
    expectData("outfeed", "operand", operands[0]!, true);
    if (!shapesEqual(operands[0]!, attrs.outfeedShape)) {
      throw shapeError("outfeed", "shape_with_layout",
        `${shapeToString(attrs.outfeedShape)} does not match the operand ${shapeToString(operands[0]!)}`);
    }
    return TOKEN_SHAPE;
  },

  send: (operands, attrs) => {
    expectOperandCount("send", operands, 2);
    expectToken("send", operands[1]);
    expectData("send", "operand", operands[0]!, true);
    expectChannel("send", attrs.channel, attrs.isHostTransfer);
    return TOKEN_SHAPE;
  },

  recv: (operands, attrs) => {
    expectOperandCount("recv", operands, 1);
    expectToken("recv", operands[0]);
    expectData("recv", "shape", attrs.shape, true);
    expectChannel("recv", attrs.channel, attrs.isHostTransfer);
    return tupleShape([attrs.shape, TOKEN_SHAPE]);
  },
};
