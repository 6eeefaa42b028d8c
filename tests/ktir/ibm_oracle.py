#!/usr/bin/env python3
"""Runs a KTIR file on spyre-run and on IBM's KTIR interpreter (ktir-cpu) with the same random
inputs and compares every buffer the kernel writes. A developer's check against IBM's semantics,
not part of `make test` (ktir-cpu is not a Debian package): see docs/ktir.md, "Checked against IBM's
files".

    python3 tests/ktir/ibm_oracle.py --ktir-cpu ~/ktir-cpu --spyre-run build/bin/spyre-run \
        FILE.ktir [--arg NAME=VALUE ...]

Prints one line: the file, then per written buffer the elements compared, how many are bit-identical
and the largest difference in units of the last place (ULP) of the output type. Exit status 0 when
every buffer is within --max-ulp (default 0: bit-exact), 1 otherwise, 2 when a side fails to run.
With IBM_ORACLE_DUMP=PREFIX in the environment, the inputs and both sides' results are also saved as
PREFIX_<buffer>_input.npy, PREFIX_<buffer>_spyre.npy and PREFIX_<buffer>_ktircpu.npy.

--device-order runs ktir-cpu with the two choices its semantics leave open made as the device makes
them: a `linalg.reduce` folds its elements in lane order (MLIR requires the combiner to be
associative and fixes no order; ktir-cpu folds pairwise), and `math.exp` is rounded once from the
exact value (ktir-cpu calls NumPy's float32 exp, which can be 1 ULP off the correctly rounded one).
Nothing else of ktir-cpu changes. A kernel that agrees only so differs by summation order and exp
rounding alone (docs/ktir.md, "Reduction order").
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

DTYPES = {"f16": np.float16, "f32": np.float32, "i32": np.int32, "i8": np.int8}


def device_buffers(spyre_run, path, args):
    """(name, kind, dtype, shape outermost first) of each buffer, from spyre-run's disassembly."""
    out = subprocess.run([spyre_run, path, "--dis"] + sum((["--arg", a] for a in args), []),
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(out.stderr.strip())
    bufs = []
    for line in out.stdout.splitlines():
        m = re.match(r"\s+\d+ (\S+) (input|output|inout|temp) (\S+) \[([0-9, ]+)\]", line)
        if m:
            shape = [int(x) for x in m.group(4).split(",")][::-1]  # Halide order -> outermost first
            bufs.append((m.group(1), m.group(2), m.group(3), shape))
        if line.startswith("dma descriptors"):
            break
    return bufs


def without_locations(text):
    """The text without `loc(...)` annotations and `#loc` aliases, which ktir-cpu's parser does not
    read (torch-spyre writes them on every op and argument), and without `//` comments, since
    ktir-cpu ends a function's argument list at a parenthesis in one (spyre-kernels'
    silu_and_mul: `%X: index,  // X (gate || up concatenated)` left it one argument)."""
    text = re.sub(r"^#loc\d* = .*$", "", text, flags=re.M)
    text = re.sub(r'//[^\n"]*$', "", text, flags=re.M)
    out, i = [], 0
    while True:
        j = text.find("loc(", i)
        if j < 0:
            return "".join(out) + text[i:]
        if j > 0 and (text[j - 1].isalnum() or text[j - 1] in "_#"):
            out.append(text[i:j + 4])
            i = j + 4
            continue
        out.append(text[i:j])
        depth, k = 0, j + 3
        while k < len(text):
            depth += text[k] == "("
            depth -= text[k] == ")"
            k += 1
            if depth == 0:
                break
        i = k


def ulp_diff(a, b):
    if a.dtype.kind != "f":
        return np.abs(a.astype(np.int64) - b.astype(np.int64))
    ia = a.view(np.int16 if a.dtype == np.float16 else np.int32).astype(np.int64)
    ib = b.view(np.int16 if b.dtype == np.float16 else np.int32).astype(np.int64)
    # Map sign-magnitude to a monotonic integer line so ULP distances are differences.
    top = 1 << (8 * a.dtype.itemsize - 1)
    ia = np.where(ia < 0, -top - ia, ia)
    ib = np.where(ib < 0, -top - ib, ib)
    return np.abs(ia - ib)


def in_device_order():
    """Makes ktir-cpu's open choices as the device does (see --device-order): a lane-order fold for
    `linalg.reduce`, a correctly rounded `math.exp`. Patches the loaded modules, not the checkout."""
    from ktir_cpu.dialects import linalg_ops, registry
    from ktir_cpu.dialects._helpers import _unary
    from ktir_cpu.ops._helpers import tile_unary_float

    def lane_order_fold(tile, dim, bb0_names, body_ops, context, env):
        data = tile.data.reshape(-1) if dim is None else tile.data
        axis = 0 if dim is None else dim
        take = lambda i: np.take(data, [i], axis=axis)  # noqa: E731
        acc = take(0)
        for i in range(1, data.shape[axis]):
            c = linalg_ops._run_combiner(bb0_names, body_ops, linalg_ops.Tile(acc.copy(), tile.dtype, acc.shape),
                                         linalg_ops.Tile(take(i), tile.dtype, acc.shape), context, env)
            acc = c.data if isinstance(c, linalg_ops.Tile) else np.asarray(c)
        return acc

    linalg_ops._tree_fold = lane_order_fold
    exact_exp = lambda v: tile_unary_float(lambda x: np.exp(np.asarray(x, dtype=np.float64)), v)  # noqa: E731
    registry._REGISTRY["math.exp"] = lambda op, context, env: _unary(op, context, exact_exp)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file")
    ap.add_argument("--ktir-cpu", required=True, help="a checkout of torch-spyre/ktir-cpu")
    ap.add_argument("--spyre-run", default="build/bin/spyre-run")
    ap.add_argument("--arg", action="append", default=[], help="NAME=VALUE for a scalar argument")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--max-ulp", type=int, default=0)
    ap.add_argument("--range", type=float, default=2.0, help="inputs are uniform in [-range, range]")
    ap.add_argument("--device-order", action="store_true",
                    help="ktir-cpu folds linalg.reduce in lane order and rounds exp once, as the device does")
    ap.add_argument("--ints", action="append", default=[],
                    help="NAME=LO:HI: random integers for buffer NAME in [LO, HI] (an int buffer's default -8:8; a float "
                         "buffer holds them as floats); the indices of a gather or scatter must lie in the rows they "
                         "index")
    ap.add_argument("--i64", action="append", default=[],
                    help="NAME: buffer NAME is an i64 view (spyre-run lists its i32 words): ktir-cpu is given int64 "
                         "values, spyre-run their bytes")
    ap.add_argument("--quantum", type=float, default=0.0,
                    help="round float inputs to multiples of this (e.g. 0.125): sums of few terms are then exact "
                         "in fp16, so two orders of addition agree bit for bit")
    o = ap.parse_args()
    sys.path.insert(0, o.ktir_cpu)
    from ktir_cpu import KTIRInterpreter  # noqa: E402  (IBM's interpreter, from the checkout)
    if o.device_order:
        in_device_order()

    try:
        bufs = device_buffers(o.spyre_run, o.file, o.arg)
    except RuntimeError as e:
        print(f"{o.file}: spyre-run: {e}")
        return 2
    interp = KTIRInterpreter()
    with open(o.file) as f:
        interp.load(without_locations(f.read()))
    func = next(iter(interp.module.functions))
    arg_names = interp.arg_names(func)
    scalars = dict(a.split("=", 1) for a in o.arg)

    def arg_of(buffer):  # the importer drops a trailing _ptr / _addr / _address
        for a in arg_names:
            if a == buffer or a in (buffer + "_ptr", buffer + "_addr", buffer + "_address"):
                return a
        raise KeyError(buffer)

    ints = {}
    for a in o.ints:
        name, _, span = a.partition("=")
        lo, _, hi = span.partition(":")
        ints[name] = (int(lo), int(hi))
    rng = np.random.default_rng(o.seed)
    kwargs, files = {}, {}
    tmp = tempfile.mkdtemp(prefix="ibm_oracle_")
    run = [o.spyre_run, o.file, "--no-reference"] + sum((["--arg", a] for a in o.arg), [])
    for name, kind, dt, shape in bufs:
        t = DTYPES[dt]
        if kind in ("input", "inout"):
            if t in (np.float16, np.float32) and name in ints:  # integral values, e.g. slots held as floats
                lo, hi = ints[name]
                data = rng.integers(lo, hi + 1, size=shape).astype(t)
            elif t in (np.float16, np.float32):
                data = rng.uniform(-o.range, o.range, size=shape)
                if o.quantum > 0:
                    data = np.round(data / o.quantum) * o.quantum
                data = data.astype(t)
            elif name in o.i64:
                # The importer declares an i64 view as its i32 words, low first (docs/ktir.md,
                # "Indirect access"): ktir-cpu takes the int64 values, spyre-run their bytes.
                lo, hi = ints.get(name, (-8, 8))
                wide = rng.integers(lo, hi + 1, size=shape[:-1] + [shape[-1] // 2]).astype(np.int64)
                f = os.path.join(tmp, name + ".in")
                wide.tofile(f)
                run += ["--input", f"{name}={f}"]
                kwargs[arg_of(name)] = wide
                continue
            else:
                lo, hi = ints.get(name, (-8, 8))
                data = rng.integers(lo, hi + 1, size=shape).astype(t)
            f = os.path.join(tmp, name + ".in")
            data.tofile(f)
            run += ["--input", f"{name}={f}"]
            if os.environ.get("IBM_ORACLE_DUMP"):
                np.save(os.environ["IBM_ORACLE_DUMP"] + "_" + name + "_input.npy", data)
        else:
            data = np.zeros(shape, dtype=t)
        if kind in ("output", "inout"):
            files[name] = os.path.join(tmp, name + ".out")
            run += ["--output", f"{name}={files[name]}"]
        kwargs[arg_of(name)] = data
    for k, v in scalars.items():
        kwargs[k] = float(v) if re.search(r"[.eE]", v) and not v.startswith("0x") else int(v, 0)
    out = subprocess.run(run, capture_output=True, text=True)
    if out.returncode != 0:
        print(f"{o.file}: spyre-run: {out.stderr.strip()}")
        return 2
    try:
        want = interp.execute_function(func, **kwargs)
    except Exception as e:  # noqa: BLE001  (report whatever IBM's interpreter raises)
        print(f"{o.file}: ktir-cpu: {type(e).__name__}: {e}")
        return 2
    worst, parts = 0, []
    for name, f in files.items():
        shape = next(b[3] for b in bufs if b[0] == name)
        t = DTYPES[next(b[2] for b in bufs if b[0] == name)]
        got = np.fromfile(f, dtype=t).reshape(shape)
        ref = np.asarray(want[arg_of(name)]).astype(t).reshape(shape)
        d = ulp_diff(got, ref)
        worst = max(worst, int(d.max()) if d.size else 0)
        absd = np.abs(got.astype(np.float64) - ref.astype(np.float64))
        parts.append(f"{name}: {d.size} elements, {int((d == 0).sum())} identical, max {int(d.max())} ULP, "
                     f"max |diff| {absd.max():.3g}")
        if os.environ.get("IBM_ORACLE_DUMP"):
            np.save(os.environ["IBM_ORACLE_DUMP"] + "_" + name + "_spyre.npy", got)
            np.save(os.environ["IBM_ORACLE_DUMP"] + "_" + name + "_ktircpu.npy", ref)
    print(f"{o.file}: " + "; ".join(parts))
    return 0 if worst <= o.max_ulp else 1


if __name__ == "__main__":
    sys.exit(main())
