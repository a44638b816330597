"""What `--help` and the docs say of the options' defaults is what the parser does: an on/off
option states its default, and the docs that name one agree with it."""

import argparse
import re

from matndp.sim.cli import build_parser, parsers

from tests.paths import DOCS


def _options(prog):
    parser = next(each for each in parsers(build_parser()) if each.prog == prog)
    return {option: action for action in parser._actions for option in action.option_strings}


def test_every_on_off_option_states_its_default():
    for parser in parsers(build_parser()):
        formatter = parser._get_formatter()
        for action in parser._actions:
            if isinstance(action, argparse.BooleanOptionalAction):
                text = formatter._get_help_string(action)
                assert "default" in text, f"{parser.prog} {action.option_strings[0]}: {text}"
                if action.default in (True, False) and "default" not in (action.help or ""):
                    assert text.endswith(f"(default {'on' if action.default else 'off'})"), text


def test_sim_help_says_the_engine_part_is_off_unless_asked_for():
    engine = _options("matndp sim")["--engine"]
    assert engine.default is False
    help_text = build_parser()._subparsers._group_actions[0].choices["sim"].format_help()
    assert re.search(r"--engine, --no-engine\s+also run the engine part", help_text)
    assert "(default off)" in " ".join(help_text.split())


def test_the_docs_describe_the_engine_part_as_the_parser_runs_it():
    text = (DOCS / "engine.md").read_text()
    assert _options("matndp sim")["--engine"].default is False
    assert "The engine part is off by default" in text and "`matndp sim\n--engine` adds it" in text
    for path in DOCS.glob("*.md"):
        assert "--no-engine" not in path.read_text(), f"{path.name} speaks of --no-engine as if it were needed"
