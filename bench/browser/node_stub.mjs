// What the page's import map gives for the Node built-ins that the peers' browser builds
// name but never use in a browser (tfjs-backend-wasm's "fs", "path", "os", "perf_hooks").
export default {};
