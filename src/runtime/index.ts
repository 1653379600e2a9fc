// The multi-device runtime's public API. Nothing here imports Node modules statically:
// the Node worker adapter is loaded on demand by createClient.

export {
  Client, createClient, Device, DeviceBuffer, Executable,
  type ClientOptions, type CompileOptions, type ExecuteOptions, type ProgramGrid,
} from "./client.js";
export type { Backend, BackendCompileOptions, DeviceBackend, DeviceContext, DeviceEnvironment, DeviceProgram } from "./backend.js";
export { interpreterBackend, interpreterDeviceBackend, interpreterEntry } from "./interpreter_backend.js";
export {
  backendNames, findBackend, getBackend, registerBackend, type BackendEntry, type DumpOptions,
} from "./backend_registry.js";
export { DEFAULT_BACKEND, defaultBackend } from "./backends.js";
export type { WorkerFactory, WorkerHandle } from "./worker_host.js";
export { serveDevice, type DevicePort } from "./device_worker.js";
export type { DeviceMessage, HostMessage, ProcessInfo, WireValue } from "./protocol.js";
export {
  deserializeComputation, deserializeLiteral, serializeComputation, serializeLiteral,
  type SerializedComputation, type SerializedLiteral, type SerializedProgram,
} from "./serialize.js";
export { SharedCollectives, allocateRendezvous, type RendezvousMemory } from "./shared_collectives.js";
