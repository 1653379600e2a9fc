// The parts of the WebAssembly JavaScript API that xlats uses. Neither ES2022 nor
// Node's types declare them (the DOM library does, but the code must not depend on
// the DOM), and the same API exists in Node and in every browser.

declare namespace WebAssembly {
  interface MemoryDescriptor {
    initial: number;
    maximum?: number;
    shared?: boolean;
  }
  class Memory {
    constructor(descriptor: MemoryDescriptor);
    readonly buffer: ArrayBuffer | SharedArrayBuffer;
    grow(deltaPages: number): number;
  }
  class Module {
    constructor(bytes: BufferSource);
    static exports(module: Module): { name: string; kind: string }[];
    static imports(module: Module): { module: string; name: string; kind: string }[];
  }
  type ExportValue = ((...args: number[]) => number | void) | Memory;
  type Exports = Record<string, ExportValue>;
  type ImportValue = Memory | ((...args: never[]) => unknown) | number;
  type Imports = Record<string, Record<string, ImportValue>>;
  class Instance {
    constructor(module: Module, imports?: Imports);
    readonly exports: Exports;
  }
  class CompileError extends Error {}
  class LinkError extends Error {}
  class RuntimeError extends Error {}
  type BufferSource = ArrayBufferView | ArrayBuffer;
  function validate(bytes: BufferSource): boolean;
  function compile(bytes: BufferSource): Promise<Module>;
  function instantiate(module: Module, imports?: Imports): Promise<Instance>;
}
