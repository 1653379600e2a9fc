# numpy (on its BLAS, OpenBLAS in the wheels) as a benchmark peer: a long-lived process
# that bench/peers/numpy.mjs drives with one JSON command a line on stdin, answering one
# JSON line on stdout. Arrays travel as raw little-endian f32 files. The workloads are
# the same as every runner's (bench/workloads/specs.ts), written the way a numpy user
# would; conv2d NHWC is im2col (sliding_window_view) + one matmul on the BLAS.
import json
import sys
import time

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view


def conv_same(x, w):
    kh, kw = w.shape[0], w.shape[1]
    ph, pw = (kh - 1) // 2, (kw - 1) // 2
    xp = np.pad(x, ((0, 0), (ph, kh - 1 - ph), (pw, kw - 1 - pw), (0, 0)))
    # [n, h, w, c, kh, kw] -> [n, h, w, kh, kw, c]: the kernel's HWIO order.
    win = sliding_window_view(xp, (kh, kw), axis=(1, 2)).transpose(0, 1, 2, 4, 5, 3)
    n, h, wd = x.shape[0], x.shape[1], x.shape[2]
    cols = np.ascontiguousarray(win).reshape(n * h * wd, -1)
    return (cols @ w.reshape(-1, w.shape[3])).reshape(n, h, wd, w.shape[3])


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def program(w, a):
    kind = w["kind"]
    if kind == "matmul":
        return lambda: [a[0] @ a[1]]
    if kind == "fused":
        return lambda: [np.tanh(a[0] * a[1] + a[2])]
    if kind == "add":
        return lambda: [a[0] + a[1]]
    if kind == "sum":
        return lambda: [np.asarray(a[0].sum(dtype=np.float32), dtype=np.float32)]
    if kind == "softmax":
        return lambda: [softmax(a[0])]
    if kind == "conv":
        return lambda: [conv_same(a[0], a[1])]
    return None


def main():
    fn = None
    for line in sys.stdin:
        cmd = json.loads(line)
        try:
            op = cmd["op"]
            if op == "setup":
                arrays = [np.fromfile(f, dtype="<f4").reshape(s) for f, s in zip(cmd["files"], cmd["shapes"])]
                fn = program(cmd["workload"], arrays)
                reply = {"ok": fn is not None, "reason": None if fn else "not written for numpy"}
            elif op == "result":
                outs = fn()
                for o, f in zip(outs, cmd["files"]):
                    np.ascontiguousarray(o, dtype=np.float32).tofile(f)
                reply = {"ok": True, "shapes": [list(np.shape(o)) for o in outs]}
            elif op == "time":
                for _ in range(cmd["warmup"]):
                    fn()
                # "cpu": the process's CPU time per run instead of wall time (one thread on a
                # loaded machine: the time it computed, not the time it waited for a core).
                clock = time.process_time if cmd.get("cpu") else time.perf_counter
                times = []
                start = time.perf_counter()
                while len(times) < cmd["maxRuns"]:
                    t0 = clock()
                    fn()
                    times.append(clock() - t0)
                    if len(times) >= cmd["minRuns"] and time.perf_counter() - start > cmd["budgetS"]:
                        break
                reply = {"ok": True, "times": times}
            elif op == "info":
                cfg = np.show_config(mode="dicts") if hasattr(np, "show_config") else {}
                blas = cfg.get("Build Dependencies", {}).get("blas", {}) if isinstance(cfg, dict) else {}
                reply = {"ok": True, "numpy": np.__version__, "blas": f"{blas.get('name', '?')} {blas.get('version', '')}".strip()}
            else:
                reply = {"ok": False, "reason": f"unknown op {op}"}
        except Exception as e:  # reported to the table as this cell's failure
            reply = {"ok": False, "reason": f"{type(e).__name__}: {e}"}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


main()
