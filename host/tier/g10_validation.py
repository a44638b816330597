"""G10's five published workloads under G10's published setup, beside G10's figures.

Needs a local copy of G10's repository (github.com/platformxlab/G10) in which G10's front
end has written ``results/<Model>/<B>-<run>/statistics/kernels.config`` for each workload
(docs/validation.md says how); the kernel times ``results/<Model>/cudnn<B>.txt`` and the
published execution times ``example_results/overall_performance/all.base.txt`` are in the
repository as it is. ``matndp tier validate-g10 G10_DIR`` prints the tables.
"""

from pathlib import Path

from ..workload import read_g10
from .comparison import tm_against
from .plan import InfeasibleError
from .presets import apply_overrides, setup_preset
from .run import run_tier


__all__ = ["G10_WORKLOADS", "SYSTEMS", "g10_validation", "g10_batch_sizes",
           "published_g10_times", "published_g10_traffic", "published_g10_breakdown",
           "published_g10_batch_sizes"]

# (name in G10's tables, results folder, batch): the workloads of G10's Figure 11.
G10_WORKLOADS = (("BERT", "BERT_Base", 256), ("ViT", "VIT", 1280),
                 ("Inceptionv3", "Inceptionv3", 1536), ("ResNet152", "ResNet152", 1280),
                 ("SENet154", "SENet154", 1024))
POLICIES = ("ideal", "uvm", "flashneuron", "deepum", "g10_gds_ssd", "g10_gds_full", "g10", "tm")
# G10's systems (its artifact's names) and the policy that models each here.
SYSTEMS = (("Base UVM", "lru", "uvm"), ("FlashNeuron", "FlashNeuron", "flashneuron"),
           ("DeepUM", "deepUM", "deepum"), ("G10-GDS-SSD", "G10GDSSSD", "g10_gds_ssd"),
           ("G10-GDS-FULL", "G10GDSFULL", "g10_gds_full"), ("G10", "prefetch_lru", "g10"))
_TRAFFIC = Path("example_results/overall_traffic/traffic.txt")
_BREAKDOWN = Path("example_results/overall_breakdown")
_BATCH_SIZES = Path("example_results/overall_batchsize")
# G10's batch-size figure: its file per workload (name in G10's tables), and the systems.
_BATCH_FILES = {"BERT": "bert.txt", "ViT": "vit.txt", "Inceptionv3": "inception.txt",
                "ResNet152": "resnet.txt", "SENet154": "senet.txt"}
# G10's simulator counts time in cycles of a 1.2 GHz GPU clock (GPU_frequency_GHz) and
# truncates each kernel's time to whole cycles: its ideal time is below the sum of the
# kernel times by less than one cycle per kernel (the bound the table prints).
G10_CLOCK_HZ = 1.2e9
_PUBLISHED = Path("example_results/overall_performance/all.base.txt")


def _published(path, rows):
    """{workload: {design: [values of each of ``rows`` lines]}} of one of G10's result
    tables: a header of designs, then per workload a title line and ``rows`` value lines."""
    lines = [line.strip() for line in path.read_text().splitlines() if line.strip()]
    designs = [name.strip() for name in lines[0].split("|")]
    table = {}
    block = rows + 1
    for start in range(1, len(lines), block):
        name = lines[start].split("|")[0]
        values = [[float(v) for v in line.split()] for line in lines[start + 1:start + block]]
        if len(values) != rows or any(len(v) != len(designs) for v in values):
            raise ValueError(f"{path}: {name}: expected {rows} lines of {len(designs)} values")
        table[name] = {d: [v[k] for v in values] for k, d in enumerate(designs)}
    return table


def published_g10_times(checkout):
    """{workload: {design: seconds}} from G10's published overall-performance table."""
    path = Path(checkout) / _PUBLISHED
    if not path.is_file():
        raise ValueError(f"{path}: missing; is {checkout} a G10 checkout?")
    return {name: {d: v[0] / G10_CLOCK_HZ for d, v in designs.items()}
            for name, designs in _published(path, 1).items()}


def published_g10_traffic(checkout):
    """{workload: {design: pages moved per iteration}} from G10's traffic table (SSD to GPU,
    GPU to SSD, host to GPU, GPU to host, in 4 KiB pages); None without the table."""
    path = Path(checkout) / _TRAFFIC
    if not path.is_file():
        return None
    return {name: {d: sum(v) for d, v in designs.items()}
            for name, designs in _published(path, 4).items()}


_PARTS = ("compute", "overlap", "stall")


def published_g10_breakdown(checkout):
    """{part: {workload: {design: time}}} from G10's breakdown tables (compute, overlap,
    stall; each design in its own unit), None without them."""
    folder = Path(checkout) / _BREAKDOWN
    if not all((folder / f"{part}.txt").is_file() for part in _PARTS):
        return None
    return {part: {name: {d: v[0] for d, v in designs.items()}
                   for name, designs in _published(folder / f"{part}.txt", 1).items()}
            for part in _PARTS}


def _shares(values):
    total = sum(values)
    return " / ".join(f"{v / total * 100:.0f}" for v in values) if total else "—"


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
        try:
            runs.append(run_tier(setup, graphs[name]))
        except InfeasibleError as error:
            runs.append({"workload": name, "policy": policy, "fails": str(error)})
    by = {(m["workload"], m["policy"]): m for m in runs}
    failures = [(name, policy, by[(name, policy)]["fails"]) for name, _, _ in G10_WORKLOADS
                for policy in POLICIES if "fails" in by[(name, policy)]]
    out = ["| workload (batch) | kernels | tensors | footprint GB | moved GB "
           + " / ".join(POLICIES[1:]) + " | ideal s (ours) | ideal s (G10) | ours − G10 µs (bound) |\n",
           "|---|---|---|---|---|---|---|---|\n"]
    for name, _, batch in G10_WORKLOADS:
        ideal = by[(name, "ideal")]
        moved = " / ".join("fails" if "fails" in by[(name, p)] else
                           f"{by[(name, p)]['inter_tier_bytes'] / 1e9:.0f}" for p in POLICIES[1:])
        out.append(f"| {name} ({batch}) | {ideal['ops']} | {ideal['tensors']} | "
                   f"{ideal['footprint_bytes'] / 1e9:.1f} | {moved} | "
                   f"{ideal['ideal_iteration_s']:.6f} | {published[name]['ideal']:.6f} | "
                   f"{(ideal['ideal_iteration_s'] - published[name]['ideal']) * 1e6:.3f} "
                   f"({ideal['ops'] / G10_CLOCK_HZ * 1e6:.3f}) |\n")
    out += ["\n", "Ideal / iteration time, G10's published figure / ours / difference (ours − G10):\n\n",
            "| workload (batch) | " + " | ".join(f"{label} (`{ours or '—'}`)"
                                             for label, _, ours in SYSTEMS) + " | `tm` |\n",
            "|---|" + "---|" * (len(SYSTEMS) + 1) + "\n"]
    for name, _, batch in G10_WORKLOADS:
        ideal_s = by[(name, "ideal")]["iteration_s"]
        g10 = published[name]
        cells = []
        for _, design, policy in SYSTEMS:
            theirs = g10["ideal"] / g10[design] if design in g10 else None
            theirs_text = "—" if theirs is None else "fails" if theirs == 0 else f"{theirs:.3f}"
            if "fails" in by[(name, policy)]:
                cells.append(f"{theirs_text} / fails")
                continue
            ours = ideal_s / by[(name, policy)]["iteration_s"]
            diff = f" / {ours - theirs:+.3f}" if theirs else ""
            cells.append(f"{theirs_text} / {ours:.3f}{diff}")
        tm = ideal_s / by[(name, "tm")]["iteration_s"]
        out.append(f"| {name} ({batch}) | " + " | ".join(cells) + f" | {tm:.3f} |\n")
    traffic = published_g10_traffic(checkout)
    if traffic is not None:
        out += ["\n", "Inter-tier traffic per iteration, millions of 4 KiB pages (both directions, "
                      "host DRAM and SSD), G10's published figure / ours / difference:\n\n",
                "| workload (batch) | " + " | ".join(f"{label} (`{ours}`)" for label, design, ours
                                                   in SYSTEMS) + " | `tm` |\n",
                "|---|" + "---|" * (len(SYSTEMS) + 1) + "\n"]
        page = 4096
        for name, _, batch in G10_WORKLOADS:
            cells = []
            for _, design, policy in SYSTEMS:
                theirs = traffic.get(name, {}).get(design)
                if "fails" in by[(name, policy)]:
                    cells.append("— / fails" if theirs is None else
                                 "fails / fails" if theirs == float("inf") else
                                 f"{theirs / 1e6:.2f} / fails")
                    continue
                ours = by[(name, policy)]["inter_tier_bytes"] / page
                if theirs is None or theirs == float("inf"):
                    cells.append(f"— / {ours / 1e6:.2f}")
                else:
                    change = f"{(ours / theirs - 1) * 100:+.0f} %" if theirs else "—"
                    cells.append(f"{theirs / 1e6:.2f} / {ours / 1e6:.2f} / {change}")
            tm = by[(name, "tm")]["inter_tier_bytes"] / page
            out.append(f"| {name} ({batch}) | " + " | ".join(cells) + f" | {tm / 1e6:.2f} |\n")
    breakdown = published_g10_breakdown(checkout)
    if breakdown is not None:
        designs = [(label, design, ours) for label, design, ours in SYSTEMS
                   if any(design in breakdown[part].get(name, {}) for part in _PARTS
                          for name, _, _ in G10_WORKLOADS)]
        out += ["\n", "Time breakdown, compute / overlap / stall in % of the iteration, "
                      "G10's published figure; ours:\n\n",
                "| workload (batch) | " + " | ".join(f"{label} (`{ours}`)" for label, _, ours
                                                   in designs) + " | `tm` |\n",
                "|---|" + "---|" * (len(designs) + 1) + "\n"]
        for name, _, batch in G10_WORKLOADS:
            cells = []
            for _, design, policy in designs:
                theirs = [breakdown[part].get(name, {}).get(design) for part in _PARTS]
                mine = by[(name, policy)]
                theirs_text = ("fails" if any(v in (None, float("inf")) for v in theirs)
                               else _shares(theirs))
                mine_text = ("fails" if "fails" in mine else
                             _shares([mine["time_breakdown_s"][part] for part in _PARTS]))
                cells.append(f"{theirs_text}; {mine_text}")
            tm = by[(name, "tm")]["time_breakdown_s"]
            out.append(f"| {name} ({batch}) | " + " | ".join(cells) + " | "
                       + _shares([tm[part] for part in _PARTS]) + " |\n")
    out += ["\n", "`tm` against every system on G10's traces:\n\n", tm_against(runs)]
    if failures:
        out += ["\n", "Runs that fail (ours), with the reason:\n\n"]
        out += [f"- {name}, `{policy}`: {reason}\n" for name, policy, reason in failures]
    return "".join(out)


def published_g10_batch_sizes(checkout):
    """{workload: {batch: {design: seconds}}} from G10's batch-size figure (designs as its
    header names them, ``inf`` where a system fails); None without the files."""
    folder = Path(checkout) / _BATCH_SIZES
    table = {}
    for name, filename in _BATCH_FILES.items():
        path = folder / filename
        if not path.is_file():
            return None
        lines = [line.strip() for line in path.read_text().splitlines() if line.strip()]
        designs = [d.strip() for d in lines[0].split("|")]
        rows = {}
        for number, (head, values) in enumerate(zip(lines[1::2], lines[2::2]), start=1):
            numbers = values.split()
            if not head.isdigit() or len(numbers) != len(designs):
                raise ValueError(f"{path}: block {number}: expected a batch size and "
                                 f"{len(designs)} values")
            rows[int(head)] = {d: float(v) / G10_CLOCK_HZ for d, v in zip(designs, numbers)}
        table[name] = rows
    return table


def g10_batch_sizes(checkout, *, progress=False):
    """Markdown: ideal / iteration time of G10's systems at every batch size of G10's
    batch-size figure, G10's figure beside ours, for every batch whose kernels.config G10's
    front end has written (the others are listed as missing)."""
    checkout = Path(checkout)
    published = published_g10_batch_sizes(checkout)
    if published is None:
        raise ValueError(f"{checkout / _BATCH_SIZES}: missing; is {checkout} a G10 checkout?")
    systems = [(label, design, ours) for label, design, ours in SYSTEMS
               if design in next(iter(next(iter(published.values())).values()))]
    folders = {name: folder for name, folder, _ in G10_WORKLOADS}
    jobs = [(name, batch) for name, rows in published.items() for batch in rows]
    if progress:
        from tqdm import tqdm
        jobs = tqdm(jobs, desc="G10 batch sizes", unit="trace")
    out = ["| workload | batch | " + " | ".join(f"{label} (`{ours}`)" for label, _, ours in systems)
           + " | `tm` |\n", "|---|---|" + "---|" * (len(systems) + 1) + "\n"]
    missing, too_large = [], []
    for name, batch in jobs:
        folder = folders[name]
        times = checkout / "results" / folder / f"cudnn{batch}.txt"
        found = sorted((checkout / "results" / folder).glob(f"{batch}-*/statistics/kernels.config"))
        if not found or not times.is_file():
            missing.append(f"{name} {batch}")
            continue
        graph = read_g10(checkout, batch=batch, kernels=found[0], times=times, name=name)
        ours = {}
        try:
            for policy in ["ideal"] + [p for _, _, p in systems] + ["tm"]:
                setup = apply_overrides(setup_preset("g10"), [f'run.policy="{policy}"'])
                try:
                    ours[policy] = run_tier(setup, graph)["iteration_s"]
                except InfeasibleError:
                    ours[policy] = None
        except ValueError as error:
            if "working set" not in str(error):
                raise
            # One op needs more than the GPU: G10's UVM faults it in while it runs, our
            # model needs every tensor of an op resident before it starts.
            too_large.append(f"{name} {batch}: {error}")
            continue
        g10 = published[name][batch]
        cells = []
        for _, design, policy in systems:
            theirs = g10["ideal"] / g10[design] if g10[design] != float("inf") else None
            mine = None if ours[policy] is None else ours["ideal"] / ours[policy]
            cells.append(f"{'fails' if theirs is None else f'{theirs:.3f}'} / "
                         f"{'fails' if mine is None else f'{mine:.3f}'}")
        out.append(f"| {name} | {batch} | " + " | ".join(cells)
                   + f" | {ours['ideal'] / ours['tm']:.3f} |\n")
    if missing:
        out += ["\n", "No trace (G10's front end not run at that batch): " + ", ".join(missing) + "\n"]
    if too_large:
        out += ["\n", "Not run here, an op larger than the GPU:\n\n"]
        out += [f"- {line}\n" for line in too_large]
    return "".join(out)
