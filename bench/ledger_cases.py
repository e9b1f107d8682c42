#!/usr/bin/env python3
"""ledger_cases.py - what the core ledger costs, and what it estimates
(cases 10 to 12 of bench/README.md).

bench.py imports this module (run() and markdown()); run() builds the
kernels and runs this file as a script under an interpreter that can import
torch, which times:

 10. the output checks: examples/relu_multicore on 2**24 float32 elements
     with the checks on (the default) and off, against torch.relu; the
     per-call cost on a 4x4 tensor, on 8 cores and on 1; and an element
     accessor writing 2**20 elements into the output (one recorded write
     each), on and off; and (bench/core_call.c, no torch needed) the
     runtime's own cost of a call with the sets recorded and without;
 11. the TCM checks: a tcm_malloc/tcm_free pair of 4 KiB (its own pages, the
     fill pattern, the checks at free), against a 4 KiB tensor_to_tcm copy;
and, from bench.py's interpreter:
 12. the profile of examples/mlp's three relu kernels on the official
     sample's shapes, beside the documented throughput.
"""
import ctypes
import json
import os
import random
import statistics
import subprocess
import sys
import time

import runner_cases

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORK = os.path.join(TOP, "obj", "bench", "ledger")
QUICK = "--quick" in sys.argv
LEDGER_OPS = ["element_store=my_ops::element_store(Tensor x) -> Tensor",
              "tcm_pairs=my_ops::tcm_pairs(Tensor x, int n) -> Tensor",
              "tcm_copies=my_ops::tcm_copies(Tensor x, int n) -> Tensor"]
MLP_OPS = ["relu_forward=my_ops::relu_forward(Tensor _0) -> Tensor",
           "relu_backward=my_ops::relu_backward(Tensor _0, Tensor _1) -> Tensor"]
VARIANTS = ("element", "tcm", "multicore")
SAMPLE_SHAPES = ((32, 4096), (32, 2048))


def build(name, sources, ops, multicore):
    directory = os.path.join(WORK, name)
    argv = [os.path.join(TOP, "build-custom-op"), "--target", "host", "--name", name, "-B", directory]
    if multicore:
        argv.append("--multicore")
    for op in ops:
        argv += ["--op", op]
    done = subprocess.run(argv + sources, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True)
    if done.returncode != 0:
        sys.exit("bench: building %s failed:\n%s" % (name, done.stderr))
    return os.path.join(directory, name)


def cost_constant(name):
    class Constant(ctypes.Structure):
        _fields_ = [("name", ctypes.c_char_p), ("value", ctypes.c_double),
                    ("unit", ctypes.c_char_p), ("source", ctypes.c_char_p)]
    library = ctypes.CDLL(os.path.join(TOP, "libruncustomop.so"))
    library.rco_cost_model.restype = ctypes.POINTER(Constant)
    count = ctypes.c_size_t()
    table = library.rco_cost_model(ctypes.byref(count))
    for i in range(count.value):
        if table[i].name.decode() == name:
            return table[i].value
    sys.exit("bench: the cost model has no constant %r" % name)


# ---- in bench.py's interpreter ----

def run(results):
    os.makedirs(WORK, exist_ok=True)
    multi = runner_cases.build("multi", "examples/relu_multicore/relu.cpp", True)
    single = runner_cases.build("single", "examples/relu/relu.cpp", False)
    ledger = build("ledger", [os.path.join(TOP, "bench", "kernels", "ledger.cpp")], LEDGER_OPS, False)
    results["core_call"] = core_call()
    c = results["core_call"]
    print("10. the runtime alone, one call of a 16-element relu: %.3f µs recording nothing, "
          "%.3f µs recording the sets (TCM: %.3f and %.3f)" % (c["element"] + c["tcm"]))
    python = runner_cases.torch_python()
    if python is None:
        print("10-11. skipped: no interpreter here can import torch "
              "(apt-get install python3-torch)")
    else:
        done = subprocess.run([python, os.path.abspath(__file__), "--measure", multi, single, ledger]
                              + (["--quick"] if QUICK else []),
                              check=True, stdout=subprocess.PIPE, text=True,
                              env=dict(os.environ, PYTHONPATH=os.path.join(TOP, "python")))
        results["ledger"] = json.loads(done.stdout.splitlines()[-1])
        r = results["ledger"]
        t = r["throughput"]
        print("10. relu on 2^24 float32, 8 cores: checks on %.1f ms, off %.1f ms, torch.relu %.1f ms:"
              " on / torch %.2f, on / off %.3f" % (t["on"] * 1e3, t["off"] * 1e3, t["torch"] * 1e3,
                                                    t["on"] / t["torch"], t["on"] / t["off"]))
        for cores in ("8", "1"):
            c = r["per_call"][cores]
            print("    relu 4x4 on %s core(s): %.1f µs per call with the checks, %.1f without"
                  % (cores, c["on"], c["off"]))
        e = r["element"]
        print("    element writes into the output: %.2f ns each with the checks, %.2f without"
              % (e["on"], e["off"]))
        p = r["tcm"]
        print("11. a tcm_malloc/tcm_free pair of 4 KiB: %.2f µs; a 4 KiB tensor_to_tcm: %.2f µs "
              "(ratio %.1f)" % (p["pair"], p["copy"], p["pair"] / p["copy"]))
    results["variants"] = profile_variants()
    for v in results["variants"]["rows"]:
        print("12. %-9s estimate %.1f µs an iteration (%s), model %.1f it/s, documented %.1f it/s"
              % (v["variant"], v["estimate"], v["counts"], v["model"], v["documented"]))


def core_call():
    """core_call's two figures for examples/relu (element accessors) and
    examples/mlp's TCM relu_forward (a tcm_malloc/tcm_free a call)."""
    program = os.path.join(WORK, "core_call")
    subprocess.run(["cc", "-O2", "-I", os.path.join(TOP, "sdk", "host", "include"), "-o", program,
                    os.path.join(TOP, "bench", "core_call.c"), "-ldl"], check=True)
    count = "2000" if QUICK else "20000"
    figures = {}
    for name, library, op in (("element", os.path.join(runner_cases.WORK, "single", "relu.so"), "relu"),
                              ("tcm", build("mlp-tcm", [os.path.join(TOP, "examples", "mlp", "tcm",
                                                                     "relu.cpp")],
                                            MLP_OPS, False) + ".so", "relu_forward")):
        done = subprocess.run([program, library, op, count], check=True, stdout=subprocess.PIPE,
                              text=True)
        figures[name] = tuple(float(v) for v in done.stdout.split())
    return figures


def profile_variants():
    sys.path.insert(0, os.path.join(TOP, "tests", "run"))
    import npy
    generator = random.Random(1)
    inputs = []
    for rows, columns in SAMPLE_SHAPES:
        path = os.path.join(WORK, "sample%d.npy" % columns)
        npy.make(path, "<f4", "%d,%d" % (rows, columns),
                 [generator.uniform(-1, 1) for _ in range(rows * columns)])
        inputs.append(path)
    rest = cost_constant("rest of the sample's MLP")
    documented = dict(element=cost_constant("element-accessor sample"),
                      tcm=cost_constant("TCM sample"), multicore=cost_constant("8-core TCM sample"))
    rows = []
    for variant in VARIANTS:
        library = build("mlp-" + variant, [os.path.join(TOP, "examples", "mlp", variant, "relu.cpp")],
                        MLP_OPS, variant == "multicore")
        estimate, totals = 0.0, {}
        for path in inputs:
            profile_path = os.path.join(WORK, "profile.json")
            subprocess.run([os.path.join(TOP, "run-custom-op"), "--op", "relu_forward", "--in", path,
                            "--profile", profile_path, library], check=True,
                           stderr=subprocess.DEVNULL)
            with open(profile_path) as stream:
                profile = json.load(stream)
            estimate += profile["estimated_device_us"]
            for core in profile["cores"]:
                for key in ("element_reads", "element_writes", "tensor_to_tcm_bytes",
                            "tcm_to_tensor_bytes"):
                    totals[key] = totals.get(key, 0) + core[key]
            totals["cores"] = len(profile["cores"])
        counts = ("%d element reads, %d writes" % (totals["element_reads"], totals["element_writes"])
                  if totals["element_reads"] else
                  "%d bytes to TCM, %d back, on %d core%s" % (totals["tensor_to_tcm_bytes"],
                                                            totals["tcm_to_tensor_bytes"],
                                                            totals["cores"],
                                                            "s" if totals["cores"] > 1 else ""))
        rows.append(dict(variant=variant, estimate=estimate, counts=counts,
                         model=1e6 / (rest + estimate), documented=documented[variant]))
    return dict(rows=rows, rest=rest)


def markdown(results):
    out = []
    c = results["core_call"]
    out += ["", "**10. The output checks' cost.** The runtime alone (bench/core_call.c: one core "
            "library called on this thread, best of 20 batches of each in turn): a call of "
            "examples/relu on 16 elements takes %.3f µs recording nothing and %.3f µs recording the "
            "output's sets; examples/mlp's TCM relu_forward %.3f and %.3f µs." % (
                c["element"] + c["tcm"])]
    if "ledger" in results:
        r = results["ledger"]
        t = r["throughput"]
        out += ["", "Through the runner (median of %d, alternating): examples/relu_multicore "
                "on 8 cores over 2^24 float32 elements takes %.1f ms with the checks on (the "
                "default) and %.1f ms with `output_checks='off'`, against torch.relu's %.1f ms: "
                "on / torch.relu **%.2f** (aim: at most 1.5), on / off %.3f." % (
                    t["runs"], t["on"] * 1e3, t["off"] * 1e3, t["torch"] * 1e3,
                    t["on"] / t["torch"], t["on"] / t["off"]), "",
                "| | checks on | checks off |", "|---|---:|---:|"]
        for cores in ("8", "1"):
            c = r["per_call"][cores]
            out.append("| relu 4×4, %s core%s: µs per call (best of %d batches of %d, in turn) "
                       "| %.1f | %.1f |" % (cores, "s" if cores == "8" else "", 2 * r["batches"],
                                           r["calls"], c["on"], c["off"]))
        e = r["element"]
        out.append("| element accessor writes into the output (2^20, median of %d): ns each "
                   "| %.2f | %.2f |" % (e["runs"], e["on"], e["off"]))
        p = r["tcm"]
        out += ["", "**11. The TCM checks' cost** (median of %d runs of %d each, less a run of "
                "none): a tcm_malloc/tcm_free pair of 4 KiB, with a float written into the "
                "block, takes %.2f µs (its pages, the fill, the checks at free); a 4 KiB "
                "tensor_to_tcm takes %.2f µs; ratio %.1f." % (p["runs"], p["count"], p["pair"],
                                                             p["copy"], p["pair"] / p["copy"])]
    v = results["variants"]
    out += ["", "**12. The profile of the official sample's three kernels** (examples/mlp's "
            "relu_forward on [32, 4096] and [32, 2048], uniform in [-1, 1]; the model's it/s is "
            "1 / (the rest of the MLP, %.1f µs, + the estimate); an estimate, not a "
            "measurement):" % v["rest"], "",
            "| variant | counts (both calls) | estimated µs an iteration | model it/s | "
            "documented it/s |", "|---|---|---:|---:|---:|"]
    for row in v["rows"]:
        out.append("| %s | %s | %.1f | %.1f | %.1f |" % (row["variant"], row["counts"],
                                                        row["estimate"], row["model"],
                                                        row["documented"]))
    return out


# ---- under the interpreter that can import torch ----

def alternating_medians(functions, runs):
    times = [[] for _ in functions]
    for _ in range(runs):
        for i, function in enumerate(functions):
            start = time.perf_counter()
            function()
            times[i].append(time.perf_counter() - start)
    return [statistics.median(t) for t in times]


def measure(multi, single, ledger):
    import torch
    from build_custom_op import runner
    quiet = dict(on_print=lambda core, text: None)
    calls, batches = (200, 3) if QUICK else (2000, 7)
    runs = 3 if QUICK else 9
    result = dict(calls=calls, batches=batches, per_call={})
    big = torch.randn(2 ** 24)
    with runner.open(multi, **quiet) as on, runner.open(multi, output_checks="off", **quiet) as off:
        if not torch.equal(on.run("relu", big), torch.relu(big)):
            sys.exit("bench: the multicore relu is wrong on 2^24 elements")
        checked, unchecked, theirs = alternating_medians(
            [lambda: on.run("relu", big), lambda: off.run("relu", big), lambda: torch.relu(big)],
            runs)
        result["throughput"] = dict(on=checked, off=unchecked, torch=theirs, runs=runs)
    del big
    x = torch.randn(4, 4)
    for cores, path, tensor in (("8", multi, x), ("1", single, x.reshape(16))):
        # Batches of the two in turn, so that the machine's other work
        # weighs on both alike; the best batch of each.
        best = dict(on=float("inf"), off=float("inf"))
        with runner.open(path, **quiet) as on, runner.open(path, output_checks="off", **quiet) as off:
            for _ in range(2 * batches):
                for mode, library in (("on", on), ("off", off)):
                    best[mode] = min(best[mode], runner_cases.best_per_call(
                        lambda: library.run("relu", tensor), calls, 1) * 1e6)
        result["per_call"][cores] = best
    values = torch.randn(2 ** 20)
    with runner.open(ledger, **quiet) as on, runner.open(ledger, output_checks="off", **quiet) as off:
        checked, unchecked = alternating_medians(
            [lambda: on.run("element_store", values), lambda: off.run("element_store", values)], runs)
        result["element"] = dict(on=checked / 2 ** 20 * 1e9, off=unchecked / 2 ** 20 * 1e9, runs=runs)
        count = 2000 if QUICK else 20000
        row = torch.randn(1024)
        none, pairs, copies = alternating_medians(
            [lambda: on.run("tcm_pairs", row, 0), lambda: on.run("tcm_pairs", row, count),
             lambda: on.run("tcm_copies", row, count)], runs)
        result["tcm"] = dict(pair=(pairs - none) / count * 1e6, copy=(copies - none) / count * 1e6,
                             runs=runs, count=count)
    print(json.dumps(result))


if __name__ == "__main__" and "--measure" in sys.argv:
    position = sys.argv.index("--measure")
    measure(*sys.argv[position + 1:position + 4])
