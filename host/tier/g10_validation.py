"""G10's five published workloads under G10's published setup, beside G10's figures.

Needs a local copy of G10's repository (github.com/platformxlab/G10) in which G10's front
end has written ``results/<Model>/<B>-<run>/statistics/kernels.config`` for each workload
(docs/validation.md says how); the kernel times ``results/<Model>/cudnn<B>.txt`` and the
published execution times ``example_results/overall_performance/all.base.txt`` are in the
repository as it is. ``matndp tier validate-g10 G10_DIR`` prints the tables.
"""

from pathlib import Path

from ..workload import read_g10
from .presets import apply_overrides, setup_preset
from .run import run_tier


__all__ = ["G10_WORKLOADS", "g10_validation", "published_g10_times"]

# (name in G10's tables, results folder, batch): the workloads of G10's Figure 11.
G10_WORKLOADS = (("BERT", "BERT_Base", 256), ("ViT", "VIT", 1280),
                 ("Inceptionv3", "Inceptionv3", 1536), ("ResNet152", "ResNet152", 1280),
                 ("SENet154", "SENet154", 1024))
POLICIES = ("ideal", "lru", "g10", "tm")
# G10's simulator counts time in cycles of a 1.2 GHz GPU clock (GPU_frequency_GHz) and
# truncates each kernel's time to whole cycles: its ideal time is below the sum of the
# kernel times by less than one cycle per kernel (the bound the table prints).
G10_CLOCK_HZ = 1.2e9
_PUBLISHED = Path("example_results/overall_performance/all.base.txt")


def published_g10_times(checkout):
    """{workload: {design: seconds}} from G10's published overall-performance table."""
    path = Path(checkout) / _PUBLISHED
    if not path.is_file():
        raise ValueError(f"{path}: missing; is {checkout} a G10 checkout?")
    lines = [line.strip() for line in path.read_text().splitlines() if line.strip()]
    designs = [name.strip() for name in lines[0].split("|")]
    table = {}
    for head, values in zip(lines[1::2], lines[2::2]):
        name = head.split("|")[0]
        cycles = [float(v) for v in values.split()]
        if len(cycles) != len(designs):
            raise ValueError(f"{path}: {name}: {len(cycles)} values for {len(designs)} designs")
        table[name] = {d: c / G10_CLOCK_HZ for d, c in zip(designs, cycles)}
    return table


def _kernels_config(checkout, folder, batch):
    found = sorted((Path(checkout) / "results" / folder).glob(f"{batch}-*/statistics/kernels.config"))
    if not found:
        raise ValueError(
            f"no kernels.config for {folder} at batch {batch} under {checkout}/results/{folder}/"
            f"{batch}-*/statistics/: run G10's front end on that workload first "
            "(docs/validation.md, 'G10's workloads', lists the steps)")
    return found[0]


def g10_validation(checkout, *, progress=False):
    """The Markdown tables of docs/validation.md's G10 section."""
    checkout = Path(checkout)
    if not checkout.is_dir():
        raise ValueError(f"G10 checkout not found at {checkout}: clone "
                         "https://github.com/platformxlab/G10 and give the path of the clone")
    published = published_g10_times(checkout)
    runs = []
    jobs = [(w, p) for w in G10_WORKLOADS for p in POLICIES]
    if progress:
        from tqdm import tqdm
        jobs = tqdm(jobs, desc="G10 workloads", unit="run")
    graphs = {}
    for (name, folder, batch), policy in jobs:
        if name not in graphs:
            graphs[name] = read_g10(checkout, batch=batch,
                                    kernels=_kernels_config(checkout, folder, batch),
                                    times=checkout / "results" / folder / f"cudnn{batch}.txt",
                                    name=name)
        setup = apply_overrides(setup_preset("g10"), [f'run.policy="{policy}"'])
        runs.append(run_tier(setup, graphs[name]))
    by = {(m["workload"], m["policy"]): m for m in runs}
    out = ["| workload (batch) | kernels | tensors | footprint GB | moved GB lru / g10 / tm | "
           "ideal s (ours) | ideal s (G10) | ours − G10 µs (bound) |\n",
           "|---|---|---|---|---|---|---|---|\n"]
    for name, _, batch in G10_WORKLOADS:
        ideal = by[(name, "ideal")]
        moved = " / ".join(f"{by[(name, p)]['inter_tier_bytes'] / 1e9:.0f}" for p in POLICIES[1:])
        out.append(f"| {name} ({batch}) | {ideal['ops']} | {ideal['tensors']} | "
                   f"{ideal['footprint_bytes'] / 1e9:.1f} | {moved} | "
                   f"{ideal['ideal_iteration_s']:.6f} | {published[name]['ideal']:.6f} | "
                   f"{(ideal['ideal_iteration_s'] - published[name]['ideal']) * 1e6:.3f} "
                   f"({ideal['ops'] / G10_CLOCK_HZ * 1e6:.3f}) |\n")
    out += ["\n", "| workload (batch) | ideal / lru (ours) | ideal / Base UVM (G10) | "
                  "ideal / g10 (ours) | ideal / G10 (G10) | ideal / tm (ours) |\n",
            "|---|---|---|---|---|---|\n"]
    for name, _, batch in G10_WORKLOADS:
        ideal_s = by[(name, "ideal")]["iteration_s"]
        ours = {p: ideal_s / by[(name, p)]["iteration_s"] for p in POLICIES[1:]}
        g10 = published[name]
        out.append(f"| {name} ({batch}) | {ours['lru']:.3f} | {g10['ideal'] / g10['lru']:.3f} | "
                   f"{ours['g10']:.3f} | {g10['ideal'] / g10['prefetch_lru']:.3f} | "
                   f"{ours['tm']:.3f} |\n")
    return "".join(out)
