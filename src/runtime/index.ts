// The multi-device runtime's public API. Nothing here imports Node modules statically:
// the Node worker adapter is loaded on demand by createClient.

export {
  Client, createClient, Device, DeviceBuffer, LoadedExecutable,
  type ClientOptions, type ClientCompileOptions, type ExecuteOptions, type ProgramGrid,
} from "./client.js";
export {
  evaluateOptionsOf, type Backend, type BackendCompileOptions, type DeviceBackend, type DeviceContext, type DeviceEnvironment, type DeviceProgram,
} from "./backend.js";
export {
  backendNames, defaultBackend, findBackend, getBackend, registerBackend, registerBackends, type BackendEntry, type DumpOptions,
} from "./backend_registry.js";
export { BufferAllocator, BUFFER_ALIGNMENT, type DeviceMemory } from "./device_memory.js";
export { WorkerMemory, type MemoryRequest, type WorkerLink, type WorkerMemoryOptions } from "./worker_memory.js";
export type { WorkerFactory, WorkerHandle } from "./worker_host.js";
export { serveDevice, type DevicePort } from "./device_worker.js";
export type { DeviceMessage, HostMessage, ProcessInfo, WireValue } from "./protocol.js";
export {
  deserializeComputation, deserializeLiteral, serializeComputation, serializeLiteral,
  type SerializedComputation, type SerializedLiteral, type SerializedProgram,
} from "./serialize.js";
export { SharedCollectives, allocateRendezvous, type RendezvousMemory } from "./shared_collectives.js";
