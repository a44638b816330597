"""Running the command line in-process as a shell would: the exit code, whether the
command returned it or argparse ended the parse with it."""

from matndp.sim.cli import main


def exit_code(argv):
    try:
        return main(argv)
    except SystemExit as exit:
        return exit.code
