// Shardings from the builder: a two-layer perceptron on a 2x2 mesh, propagated by
// Shardy's pipeline, with `--explain`'s account of where each axis came from.
import { XlaBuilder, arrayShape, parameter, dot, max, constantR0, sharding, passNamed, runPass, printStableHlo } from "../src/index.js";

const b = new XlaBuilder("main");
const mesh = b.mesh("mesh", { data: 2, model: 2 });
const [B, D, H, O] = [8, 16, 32, 4];
const x = parameter(b, 0, arrayShape("f32", [B, D]), { name: "x", sharding: sharding(mesh, [["data"], []]) });
const w1 = parameter(b, 1, arrayShape("f32", [D, H]), { name: "w1", sharding: sharding(mesh, [[], ["model"]]) });
const w2 = parameter(b, 2, arrayShape("f32", [H, O]), { name: "w2", sharding: '<@mesh, [{"model"}, {}]>' });
const hidden = max(dot(x, w1), constantR0(b, "f32", 0));
const module = b.buildModule(dot(hidden, w2));

let explanation = "";
const propagated = runPass(passNamed("-sdy-propagation-pipeline"), module, {
  verify: true, log: () => {}, explain: (_pass, lines) => { explanation = lines.join("\n"); },
});
console.log(printStableHlo(propagated).trimEnd());
console.log(explanation);
