// The MLIR importer shares one computation between regions that read the same
// (case branches of two functions with the same body, say). In MLIR each is its own
// region, and explicit reshards may differ between them (each follows its own op's
// shardings), so before the pass every region gets a computation of its own: a region
// computation met a second time is replaced by a deep copy. Functions (the targets of
// calls) stay shared.

import { calleesFirst, Computation, type HloModule, type Instruction } from "../../../ir/computation.js";
import { setSourceLocation, sourceLocation } from "../../../ir/locations.js";
import { withEntry, withInstructions } from "../../../ir/rewrite.js";

class RegionUnsharer {
  private readonly seen = new Set<Computation>();
  private readonly names: Set<string>;

  constructor(private readonly functions: ReadonlySet<Computation>, private readonly renamed: ReadonlyMap<Computation, Computation>, module: HloModule) {
    this.names = new Set(module.computations.map((c) => c.name));
  }

  private freshName(base: string): string {
    for (let n = 1; ; n++) {
      const name = `${base}.${n}`;
      if (!this.names.has(name)) {
        this.names.add(name);
        return name;
      }
    }
  }

  /** `c` with each region it uses its own (a copy when `copy`, or when met before). */
  rebuild(c: Computation, copy: boolean): Computation {
    const copies = new Map<Instruction, Instruction>();
    let changed = copy;
    const instructions = c.instructions.map((inst) => {
      const operands = inst.operands.map((o) => copies.get(o) ?? o);
      let attrsChanged = false;
      const attrs: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(inst.attrs as Record<string, unknown>)) {
        const region = (x: unknown): unknown => {
          if (!(x instanceof Computation)) return x;
          if (this.functions.has(x)) {
            const callee = this.renamed.get(x) ?? x;
            if (callee !== x) attrsChanged = true;
            return callee;
          }
          const again = copy || this.seen.has(x);
          this.seen.add(x);
          const out = this.rebuild(x, again);
          if (out !== x) attrsChanged = true;
          return out;
        };
        attrs[k] = Array.isArray(v) ? v.map(region) : region(v);
      }
      const same = !copy && !attrsChanged && operands.every((o, i) => o === inst.operands[i]);
      if (same) return inst;
      changed = true;
      const out = { ...inst, operands, attrs } as Instruction;
      const at = sourceLocation(inst);
      if (at !== undefined) setSourceLocation(out, at);
      copies.set(inst, out);
      return out;
    });
    if (!changed) return c;
    const parameters = c.parameters.map((p) => (copies.get(p) ?? p) as Instruction<"parameter">);
    const out = withInstructions(c, instructions, copies.get(c.root) ?? c.root, copy ? this.freshName(c.name) : c.name, parameters);
    const at = sourceLocation(c);
    if (at !== undefined) setSourceLocation(out, at);
    return out;
  }
}

/** The module with no region computation used twice (see the file comment); the same module when none is. */
export function unshareRegions(module: HloModule): HloModule {
  const functions = module.functions ?? [module.entry];
  const renamed = new Map<Computation, Computation>();
  const unsharer = new RegionUnsharer(new Set(functions), renamed, module);
  // Callees first, so that a call's callee is already rebuilt when its caller is.
  for (const f of calleesFirst(module.computations).filter((c) => functions.includes(c))) {
    const out = unsharer.rebuild(f, false);
    if (out !== f) renamed.set(f, out);
  }
  if (renamed.size === 0) return module;
  return withEntry(module, renamed.get(module.entry) ?? module.entry, renamed);
}
