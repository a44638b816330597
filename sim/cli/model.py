"""``matndp model``: the model zoo (training iterations of reference models)."""

import json


def _positive_int(text):
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"expected a positive integer, got {text!r}") from None
    return value


def run_list(args):
    from matndp.host.zoo import MODEL_NAMES
    for name in MODEL_NAMES:
        print(name)
    return 0


def _format_bytes(value):
    return f"{value / 1e9:.3f} GB" if value >= 1e8 else f"{value / 1e6:.3f} MB"


def run_summary(args):
    from matndp.host.zoo import build_model
    from matndp.host.zoo.summary import summarize
    graph = build_model(args.name, batch=args.batch, dtype=args.dtype, seq_len=args.seq_len)
    summary = summarize(graph)
    if args.json:
        print(json.dumps(summary, indent=2))
        return 0
    print(f"{summary['model']}: batch {summary['batch']}, {summary['dtype']}"
          + (f", sequence length {summary['seq_len']}" if summary["seq_len"] else "")
          + f", optimizer {summary['optimizer']}")
    print(f"  parameters              {summary['parameters']:,}")
    print(f"  FLOPs / iteration       {summary['flops_per_iteration'] / 1e12:.3f} TFLOP")
    for key in ("weight_bytes", "weight_gradient_bytes", "optimizer_state_bytes",
                "activation_bytes", "footprint_bytes"):
        print(f"  {key:<24}{_format_bytes(summary[key])}")
    print(f"  ops                     {summary['ops']}: "
          + ", ".join(f"{kind} {count}" for kind, count in summary["ops_by_kind"].items()))
    for name, shape in summary["outputs"].items():
        print(f"  output {name:<12} {tuple(shape)}")
    return 0


def register(subparsers):
    parser = subparsers.add_parser("model", help="the model zoo", description=__doc__)
    commands = parser.add_subparsers(dest="model_command", metavar="COMMAND", required=True)
    listing = commands.add_parser("list", help="names of the zoo's models",
                                  description="Print the names of the zoo's models.")
    listing.set_defaults(func=run_list)
    summary = commands.add_parser(
        "summary", help="size and cost of one training iteration",
        description="Parameters, FLOPs, tensor bytes and op counts of one training "
                    "iteration (forward, backward, optimizer step).")
    summary.add_argument("name", help="resnet50, vgg16_bn, bert-base or gpt2")
    summary.add_argument("--batch", type=_positive_int, default=1, help="batch size (default 1)")
    summary.add_argument("--dtype", default="fp32",
                         help="fp32, or bf16/fp16 for mixed precision (default fp32)")
    summary.add_argument("--seq-len", type=_positive_int, default=None,
                         help="sequence length of bert-base / gpt2 (default 128 / 1024)")
    summary.add_argument("--json", action="store_true", help="print JSON")
    summary.set_defaults(func=run_summary)
