#!/usr/bin/env python3
"""Every catalogue generator x schedule, exported as KTIR by spyre-gen and run on IBM's KTIR
interpreter (ktir-cpu) against spyre-run, through ibm_oracle.py. A developer's check, never in CI
(ktir-cpu is not a Debian package): docs/ktir.md, "Checked against IBM's files".

    python3 tests/ktir/ibm_conformance.py --ktir-cpu ~/ktir-cpu [--bin build/bin] [--only APP ...]

Prints a line per kernel (agrees / differs / fails, with the oracle's words) and a summary. The
shapes are small (ktir-cpu is a Python interpreter): each size parameter a generator lists is
shrunk to the value below (never grown: softmax's `dim` is an axis). A kernel that differs is run
again with ktir-cpu folding reductions in lane order and rounding exp once (ibm_oracle.py
--device-order); one that then agrees is reported as "agrees in device order". Exit status 0 when
every kernel agrees within --max-ulp, either way.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

# Small values for the size parameters the generators list (spyre-gen -l); others keep their defaults.
SMALL = {"rows": 64, "cols": 128, "inner": 128, "seq": 128, "dim": 64, "hidden": 256,
         "heads": 2, "batch": 2, "cores": 4, "head_dim": 64}


# Parameters a schedule needs besides the small shape (spyre-gen refuses it without them).
NEEDS = {"flash_attention/kv_chunked": ["mask=causal"]}


def generators(spyre_gen):
    """[(name, [schedules], {param: default})] from `spyre-gen -l`."""
    out = subprocess.run([spyre_gen, "-l"], capture_output=True, text=True, check=True).stdout
    gens, cur = [], None
    for line in out.splitlines():
        m = re.match(r"^(\w+): ", line)
        if m:
            cur = [m.group(1), [], {}]
            gens.append(cur)
        elif line.strip().startswith("schedules:"):
            cur[1] = [s.strip() for s in line.split(":", 1)[1].split("(")[0].split(",") if s.strip()]
        elif line.strip().startswith("params:"):
            for kv in line.split(":", 1)[1].split(","):
                k, v = kv.strip().split("=", 1)
                cur[2][k] = v
    return gens


def oracle_verdict(oracle, o, run, ktir, extra=()):
    """(agrees | differs | fails, the oracle's words) for one exported file."""
    try:
        r = subprocess.run([sys.executable, oracle, "--ktir-cpu", o.ktir_cpu, "--spyre-run", run,
                            "--max-ulp", str(o.max_ulp), *extra, ktir], capture_output=True, text=True,
                           timeout=o.timeout)
    except subprocess.TimeoutExpired:
        return "fails", f"ktir-cpu took over {o.timeout} s"
    text = (r.stdout.strip() or r.stderr.strip()).splitlines()[-1].split(": ", 1)[-1]
    return {0: "agrees", 1: "differs"}.get(r.returncode, "fails"), text


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ktir-cpu", required=True, help="a checkout of torch-spyre/ktir-cpu")
    ap.add_argument("--bin", default="build/bin", help="where spyre-gen and spyre-run are")
    ap.add_argument("--only", nargs="*", default=[], help="apps (or app/schedule) to run")
    ap.add_argument("--max-ulp", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=600, help="seconds per kernel on ktir-cpu")
    o = ap.parse_args()
    oracle = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ibm_oracle.py")
    gen = os.path.join(o.bin, "spyre-gen")
    run = os.path.join(o.bin, "spyre-run")
    tmp = tempfile.mkdtemp(prefix="ibm_conformance_")
    counts = {}
    for name, schedules, params in generators(gen):
        for sched in schedules:
            key = f"{name}/{sched}"
            if o.only and name not in o.only and key not in o.only:
                continue
            kv = [f"{k}={SMALL[k]}" for k, v in params.items() if k in SMALL and v.isdigit() and int(v) > SMALL[k]]
            kv += [f"schedule={sched}"]
            if NEEDS.get(key):
                kv += NEEDS[key]
            outdir = os.path.join(tmp, name + "_" + sched)
            g = subprocess.run([gen, "-g", name, "-o", outdir, "-e", "ktir"] + kv,
                               capture_output=True, text=True)
            if g.returncode != 0:
                verdict, text = "export", g.stderr.strip().splitlines()[-1] if g.stderr.strip() else "?"
            else:
                ktir = os.path.join(outdir, name + ".ktir")
                verdict, text = oracle_verdict(oracle, o, run, ktir)
                if verdict == "differs":  # the same, with ktir-cpu's open choices made as the device's
                    again, again_text = oracle_verdict(oracle, o, run, ktir, ["--device-order"])
                    if again == "agrees":
                        verdict, text = "agrees in device order", text + "; in device order: " + again_text
            counts[verdict] = counts.get(verdict, 0) + 1
            print(f"{key:32} {verdict:8} {text[:240]}", flush=True)
    print("summary: " + ", ".join(f"{v} {n}" for v, n in sorted(counts.items())))
    return 0 if set(counts) <= {"agrees", "agrees in device order"} else 1


if __name__ == "__main__":
    sys.exit(main())
