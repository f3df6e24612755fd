#!/usr/bin/env python3
"""FGD's replay with the nodes taken away: each GPU a bin of 1000 milli, no
CPU, memory or models, a k-GPU pod any k empty GPUs. How much of the gap
between a scheduler and fgd_bound's offline bound is the online order,
and how much the nodes? Policies, each placing a share on one GPU:

  bestfit     the fullest GPU it fits
  fgd         least growth of FGD's measure (the idle milli on a GPU that
              a pod of the arrived mix could not use, weighed by its share)
  fragaware   the same, each size weighed by its share per GPU asked
  planned     follows a plan: the GPU fillings (810+160, 470+470, ...) of
              the packing LP over the pods to come (known in advance: an
              oracle), a share goes to a planned slot for its size, else
              opens a planned GPU, else best fit
  fillplan    fragaware's rule today (policy/fragaware/fill_plan.h): a
              thousand GPUs' worth of the mix packed by minimum bin slack;
              a share goes to a GPU where it can still make one of those
              fillings, fragaware's measure deciding among them (and among
              the rest when there is none); no oracle: the mix is the
              stream's, which fragaware learns in its first pods

Pods come as in the replay (trace shuffled, samples appended to 130 %),
with Python's random, not deviceshare's std::mt19937_64: same kind of
streams, not the same ones. Needs python3 and glpsol (glpk-utils).

  bench/fgd_bound/gpu_level_online.py data/alibaba-gpu-v2023 default 42-45
  bench/fgd_bound/gpu_level_online.py data/alibaba-gpu-v2023 default 42-45 fillplan
"""
import collections
import csv
import os
import random
import subprocess
import sys
import tempfile

GPU = 1000
STEP = 10  # every share of the traces is a multiple of 10 milli


def stream(data, trace, seed, gpus):
    pods = []
    with open(os.path.join(data, f"openb_pod_list_{trace}.csv")) as f:
        for row in csv.DictReader(f):
            count, milli = int(row["num_gpu"]), int(row["gpu_milli"])
            if count == 0:
                continue
            pods.append((1, milli) if count == 1 and milli < GPU else (count, GPU))
    rng = random.Random(seed)
    rng.shuffle(pods)
    out, arrived = [], 0
    while arrived < gpus * GPU:
        pod = pods[len(out)] if len(out) < len(pods) else rng.choice(pods)
        out.append(pod)
        arrived += pod[0] * pod[1]
    return out


def weights(items, per_gpu):
    mix = collections.Counter(m for c, m in items for _ in range(c if m == GPU else 1))
    total = sum(mix.values())
    w = {m: n / total / (m / GPU if per_gpu else 1) for m, n in mix.items()}
    z = sum(w.values())
    return [(m, v / z) for m, v in w.items()]


def plan(items, gpus):
    """GPU fillings of the packing LP (arc flow), solved with glpsol."""
    mix = collections.Counter(m for c, m in items if m < GPU)
    whole = sum(c for c, m in items if m == GPU)
    sizes, top = sorted(mix), GPU // STEP
    arc = lambda s, i: f"a{s}_{i}"
    rows = []
    for i in range(top + 1):
        out = [arc(s, i) for s in sizes if i + s // STEP <= top] + ([f"l{i}"] if i < top else [])
        into = [arc(s, i - s // STEP) for s in sizes if i >= s // STEP] + ([f"l{i - 1}"] if i else [])
        if i == 0:
            rows.append(f" n{i}: " + " + ".join(out) + " - z = 0")
        elif i == top:
            rows.append(f" n{i}: " + " + ".join(into) + " - z = 0")
        else:
            rows.append(f" n{i}: " + " + ".join(out) + " - " + " - ".join(into) + " = 0")
    for s in sizes:
        rows.append(f" c{s}: " + " + ".join(arc(s, i) for i in range(top + 1) if i + s // STEP <= top) + f" <= {mix[s]}")
    objective = " + ".join(f"{s} {arc(s, i)}" for s in sizes for i in range(top + 1) if i + s // STEP <= top)
    text = "\n".join(["Maximize", f" obj: {objective} + 1000 y", "Subject To"] + rows +
                     [f" g: z + y <= {gpus}", "Bounds", f" y <= {whole}", "End"]) + "\n"
    with tempfile.TemporaryDirectory() as folder:
        lp, sol = os.path.join(folder, "plan.lp"), os.path.join(folder, "plan.sol")
        with open(lp, "w") as f:
            f.write(text)
        subprocess.run(["glpsol", "--lp", lp, "-o", sol], check=True, capture_output=True)
        flow = {}
        with open(sol) as f:
            for line in f:
                p = line.split()
                if len(p) >= 4 and p[0].isdigit() and p[1][0] in "al":
                    try:
                        if float(p[3]) > 1e-9:
                            flow[p[1]] = float(p[3])
                    except ValueError:
                        pass
    fillings = collections.Counter()
    while True:  # peel paths 0 -> 1000 off the flow
        i, shares, amount, used = 0, [], float("inf"), []
        while i < top:
            step = next(((arc(s, i), s // STEP, s) for s in sizes if flow.get(arc(s, i), 0) > 1e-6), None)
            if step is None and flow.get(f"l{i}", 0) > 1e-6:
                step = (f"l{i}", 1, 0)
            if step is None:
                break
            used.append(step[0])
            amount = min(amount, flow[step[0]])
            i += step[1]
            if step[2]:
                shares.append(step[2])
        if i < top or not used:
            return fillings
        for name in used:
            flow[name] -= amount
        fillings[tuple(sorted(shares, reverse=True))] += amount


def fullest_subset(room, left):
    """The shares of `left` (size -> count) that fill most of `room`."""
    best = {0: ()}
    for size in sorted(left, reverse=True):
        grown = dict(best)
        for total, shares in best.items():
            for k in range(1, left[size] + 1):
                if total + k * size > room:
                    break
                grown.setdefault(total + k * size, shares + (size,) * k)
        best = grown
    return best[max(best)]


def fill_levels(items):
    """(used milli, share) pairs of fill_plan.h: minimum bin slack over a
    thousand GPUs' worth of the mix (at most 4,000 pods)."""
    mix = collections.Counter(m for c, m in items if c == 1 and m < GPU)
    total, pods = sum(m * n for m, n in mix.items()), sum(mix.values())
    scale = min(1000 * GPU / total, 4000 / pods)
    left = {m: round(n * scale) for m, n in mix.items() if round(n * scale) > 0}
    fillings = set()
    while left:
        largest = max(left)
        left[largest] -= 1
        filling = (largest,) + fullest_subset(GPU - largest, left)
        left[largest] += 1
        takes = collections.Counter(filling)
        times = min(left[s] // n for s, n in takes.items())
        for s, n in takes.items():
            left[s] -= n * times
        left = {m: n for m, n in left.items() if n > 0}
        fillings.add(filling)
    levels = set()
    for shares in fillings:
        for i, s in enumerate(shares):
            sums = {0}
            for r in shares[:i] + shares[i + 1:]:
                sums |= {x + r for x in sums}
            levels |= {(u, s) for u in sums}
    return levels


def replay(items, gpus, policy):
    """Unallocated % at 100 % arrived (the stream stops there)."""
    gaps = [0] * (GPU // STEP + 1)  # GPUs per free milli / STEP
    gaps[-1] = gpus
    failed = 0
    mix = weights(items, policy in ("fragaware", "fillplan"))
    levels = fill_levels(items) if policy == "fillplan" else set()
    planned_sizes = {s for u, s in levels}
    frag = lambda free: sum(w for m, w in mix if free < m) * free
    budget = {k: round(v) for k, v in plan(items, gpus).items()} if policy == "planned" else {}
    planned = []  # [free, Counter of sizes still planned]
    for count, milli in items:
        if milli == GPU:
            if gaps[-1] >= count:
                gaps[-1] -= count
                gaps[0] += count
            else:
                failed += count * GPU
            continue
        if policy == "planned":
            failed += place_planned(milli, gaps, planned, budget)
            continue
        size = milli // STEP
        fits = [g for g in range(size, len(gaps)) if gaps[g]]
        if not fits:
            failed += milli
            continue
        if policy == "bestfit":
            g = fits[0]
        elif milli in planned_sizes:
            g = min(fits, key=lambda g: ((GPU - g * STEP, milli) not in levels,
                                         frag((g - size) * STEP) - frag(g * STEP), g))
        else:
            g = min(fits, key=lambda g: (frag((g - size) * STEP) - frag(g * STEP), g))
        gaps[g] -= 1
        gaps[g - size] += 1
    return 100.0 * failed / (gpus * GPU)


def place_planned(milli, gaps, planned, budget):
    slot = min((b for b in planned if b[1][milli] > 0), key=lambda b: b[0], default=None)
    if slot is None and gaps[-1]:
        fillings = [k for k, v in budget.items() if v > 0 and milli in k]
        if fillings:
            filling = max(fillings, key=lambda k: budget[k])
            budget[filling] -= 1
            gaps[-1] -= 1
            slot = [GPU, collections.Counter(filling)]
            planned.append(slot)
    if slot is None:
        slot = min((b for b in planned if b[0] >= milli), key=lambda b: b[0], default=None)
        if slot is None and gaps[-1]:
            gaps[-1] -= 1
            slot = [GPU, collections.Counter()]
            planned.append(slot)
        if slot is None:
            return milli
    slot[0] -= milli
    slot[1][milli] -= 1
    for size in list(slot[1]):
        if size > slot[0]:
            slot[1][size] = 0
    return 0


def main():
    data, trace = sys.argv[1], sys.argv[2]
    first, last = (int(x) for x in (sys.argv[3] if len(sys.argv) > 3 else "42-51").split("-"))
    with open(os.path.join(data, "openb_node_list_gpu_node.csv")) as f:
        gpus = sum(int(row["gpu"]) for row in csv.DictReader(f))
    policies = sys.argv[4].split(",") if len(sys.argv) > 4 else (
        "bestfit", "fgd", "fragaware", "fillplan", "planned")
    for policy in policies:
        runs = [replay(stream(data, trace, s, gpus), gpus, policy) for s in range(first, last + 1)]
        mean = sum(runs) / len(runs)
        sd = (sum((r - mean) ** 2 for r in runs) / max(1, len(runs) - 1)) ** 0.5
        print(f"{trace} {policy} {mean:.2f} ± {sd:.2f}", flush=True)


if __name__ == "__main__":
    main()
