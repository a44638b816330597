"""Sub-commands of the ``matndp`` command line, one module each.

Each module defines ``register(subparsers)``, which adds its parser(s) and sets
``func`` to a callable ``func(args) -> int`` (the exit code). Modules import heavy
dependencies (simulators, plotting) inside their commands, so ``--help`` stays fast.
"""

COMMAND_MODULES = [
    "host.commands.doctor",
    "host.commands.csr",
    "host.commands.model",
    "host.commands.gpu",
    "host.commands.tier",
    "sim.commands",
    "sim.synth",
]
