// A test-only backend that keeps buffers in device memory (Backend.createMemory), as the
// WebAssembly backend does, in the same kind of memory (a shared LinearMemory): its
// device programs read their arguments from the device's memory at the offsets the host gives (not from the literals passed
// alongside), evaluate with the interpreter, and write their results where the host
// reserved them. Each run also scribbles over its whole scratch range, so a scratch
// range that overlapped any buffer would corrupt results. Importing this module registers it; workers import it through
// Backend.deviceModule.

import { evaluate } from "../../src/interpreter/evaluate.js";
import { LinearMemory } from "../../src/compiler/linear_memory.js";
import type { Backend, DeviceBackend } from "../../src/runtime/backend.js";
import { registerBackend } from "../../src/runtime/backend_registry.js";
import { deserializeComputation, serializeComputation, type SerializedProgram } from "../../src/runtime/serialize.js";
import { allocateStorage, Literal, type Storage } from "../../src/types/literal.js";
import type { ArrayShape, Shape } from "../../src/types/shape.js";
import { elementCount } from "../../src/types/shape.js";

export const MEMORY_BACKEND = "device-memory-test";
/** Scratch bytes every program asks for (a multiple of the allocator's 64-byte alignment). */
export const SCRATCH_BYTES = 1024;

export const memoryBackend: Backend = {
  name: MEMORY_BACKEND,
  deviceModule: import.meta.url,
  createMemory: () => new LinearMemory({ shared: true }),
  prepare: (program) => serializeComputation(program),
  scratchBytes: () => SCRATCH_BYTES,
};

type Ctor = new (b: ArrayBufferLike, o: number, n: number) => Storage;

/** A literal of `shape` viewing `memory` at the given offsets (array leaves in order). */
function view(shape: Shape, memory: LinearMemory, offsets: readonly number[]): Literal {
  let k = 0;
  const build = (s: Shape): Literal => {
    if (s.kind === "tuple") return Literal.tuple(s.elements.map(build));
    if (s.kind === "token") return Literal.token();
    const a = s as ArrayShape;
    const count = allocateStorage(a.elementType, elementCount(a.dimensions)).length;
    const ctor = allocateStorage(a.elementType, 0).constructor as Ctor;
    return Literal.fromStorage(a, new ctor(memory.buffer, offsets[k++]!, count));
  };
  return build(shape);
}

export const memoryDeviceBackend: DeviceBackend = {
  name: MEMORY_BACKEND,
  load(prepared, device) {
    const memory = device.memory;
    const scratch = device.scratch;
    if (!(memory instanceof LinearMemory) || scratch === undefined) throw new Error(`${MEMORY_BACKEND}: loaded without device memory or scratch`);
    if (scratch.bytes !== SCRATCH_BYTES) throw new Error(`${MEMORY_BACKEND}: scratch of ${scratch.bytes} bytes`);
    const computation = deserializeComputation(prepared as SerializedProgram);
    return {
      run(args, env) {
        if (env.memory !== memory) throw new Error(`${MEMORY_BACKEND}: run without the memory the program was loaded with`);
        const { argumentLeafOffsets, resultOffsets } = env;
        if (argumentLeafOffsets === undefined || resultOffsets === undefined) throw new Error(`${MEMORY_BACKEND}: no offsets`);
        const inMemory = computation.parameters.map((p, k) => view(p.shape, memory, argumentLeafOffsets[k]!));
        const result = evaluate(computation, inMemory, {
          replicaId: env.replicaId, partitionId: env.partitionId, replicaCount: env.replicaCount,
          partitionCount: env.partitionCount, deviceId: env.replicaId * env.partitionCount + env.partitionId,
          collectives: env.collectives,
        });
        void args;
        new Uint8Array(memory.buffer, scratch.offset, scratch.bytes).fill(0xa5);
        const out = view(computation.root.shape, memory, resultOffsets);
        const copy = (from: Literal, to: Literal): void => {
          if (from.shape.kind === "tuple") from.elements.forEach((e, i) => copy(e, to.elements[i]!));
          else if (from.shape.kind === "array") (to.data as { set(d: unknown): void }).set(from.toDefaultLayout().data);
        };
        copy(result, out);
        return out;
      },
    };
  },
  openMemory: (handle) => LinearMemory.open(handle),
};

registerBackend({ host: memoryBackend, device: memoryDeviceBackend });
