"""``matndp model``: the model zoo (training iterations of reference models)."""


from matndp.host.zoo import MODELS, PRECISIONS

from matndp.host.units import format_bytes

from matndp.sim.cli.arguments import integer, name_in
from matndp.sim.cli.output import add_result_options, write_result


def seq_len_help():
    """Help of a ``--seq-len`` option: the transformers of the zoo and their defaults."""
    sequence = [model for model in MODELS.values() if model.takes_seq_len]
    return (f"sequence length of {' / '.join(model.name for model in sequence)} (default "
            f"{' / '.join(str(model.default_seq_len) for model in sequence)})")


def add_model_options(parser):
    """``--dtype`` and ``--seq-len``, as every command that builds a zoo model has them."""
    parser.add_argument("--dtype", default="fp32", type=name_in(PRECISIONS),
                        choices=PRECISIONS.names,
                        help=f"tensor dtype; {PRECISIONS.hint} (default %(default)s)")
    parser.add_argument("--seq-len", type=integer(1), default=None, help=seq_len_help())


def run_list(args):
    for name in MODELS:
        print(name)
    return 0


def run_summary(args):
    from matndp.host.zoo import build_model
    from matndp.host.zoo.summary import summarize
    graph = build_model(args.name, batch=args.batch, dtype=args.dtype, seq_len=args.seq_len)
    summary = summarize(graph)
    if write_result(args, summary):
        return 0
    print(f"{summary['model']}: batch {summary['batch']}, {summary['dtype']}"
          + (f", sequence length {summary['seq_len']}" if summary["seq_len"] else "")
          + f", optimizer {summary['optimizer']}")
    print(f"  parameters              {summary['parameters']:,}")
    print(f"  FLOPs / iteration       {summary['flops_per_iteration'] / 1e12:.3f} TFLOP")
    for key in ("weight_bytes", "weight_gradient_bytes", "optimizer_state_bytes",
                "activation_bytes", "footprint_bytes"):
        print(f"  {key:<24}{format_bytes(summary[key])}")
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
    summary.add_argument("name", type=name_in(MODELS), choices=MODELS.names, help="zoo model")
    summary.add_argument("--batch", type=integer(1), default=1,
                         help="batch size (default %(default)s)")
    add_model_options(summary)
    add_result_options(summary, "the summary")
    summary.set_defaults(func=run_summary)
