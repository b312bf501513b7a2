"""The option families of protolab/commands/common.py: each option is declared once, so every command
that takes it says the same thing about it, and a bad value is refused the same way on each."""

import argparse
import os

import pytest

from protolab.cli import build_parser, main
from protolab.commands.common import add_ray, check_ray, ray_runner
from protolab.commands.errors import UsageError
from protolab.experiment.jobs import Local
from protolab.experiment.session import CONNECT_TIMEOUT

FAMILIES = ("--workers", "--address", "--connect-timeout", "--no-progress", "--decision-timeout", "--storage-timeout")


def _commands() -> dict[str, argparse.ArgumentParser]:
    """Every subcommand's parser (the nested `cards` ones too), by its prog."""
    found: dict[str, argparse.ArgumentParser] = {}

    def walk(p: argparse.ArgumentParser) -> None:
        for a in p._actions:
            if isinstance(a, argparse._SubParsersAction):
                for sub in a.choices.values():
                    found[sub.prog] = sub
                    walk(sub)

    walk(build_parser())
    return found


def _option(p: argparse.ArgumentParser, flag: str) -> argparse.Action | None:
    return next((a for a in p._actions if flag in a.option_strings), None)


@pytest.mark.parametrize("flag", FAMILIES)
def test_an_option_family_says_one_thing_on_every_command(flag):
    helps = {prog: a.help for prog, p in _commands().items() if (a := _option(p, flag))}
    assert helps, f"no command takes {flag}"
    if flag == "--workers":  # one text; each command says what it plays on without the option
        helps = {prog: h.split("(default:")[0] for prog, h in helps.items()}
    assert len(set(helps.values())) == 1, helps


def test_every_command_on_ray_takes_the_whole_ray_family():
    takes = {
        prog: {f for f in ("--workers", "--address", "--connect-timeout") if _option(p, f)}
        for prog, p in _commands().items()
    }
    partial = {prog: fs for prog, fs in takes.items() if fs and len(fs) < 3}
    assert not partial
    assert {"protolab run", "protolab cardvalue", "protolab train", "protolab tune", "protolab power"} <= {
        prog for prog, fs in takes.items() if fs
    }


def test_format_choices_and_default_are_the_same_everywhere():
    for prog, p in _commands().items():
        a = _option(p, "--format")
        if a is not None:
            assert a.default == "table" and tuple(a.choices)[:2] == ("table", "json"), prog
            assert a.help.startswith("table (default)"), prog


def test_the_connect_timeout_default_is_the_session_s():
    p = argparse.ArgumentParser()
    add_ray(p, "here")
    args = p.parse_args([])
    assert args.connect_timeout == CONNECT_TIMEOUT
    assert f"(default {CONNECT_TIMEOUT:g})" in _option(p, "--connect-timeout").help


@pytest.mark.parametrize(
    "argv, flag",
    [
        (["--workers", "0"], "--workers"),
        (["--workers", str(4 * (os.cpu_count() or 1) + 1)], "--workers"),  # a local Ray: a few per core at most
        (["--address", "10.0.0.1:6379", "--workers", "100001"], "--workers"),
        (["--connect-timeout", "0"], "--connect-timeout"),
        (["--connect-timeout", "nan"], "--connect-timeout"),
    ],
)
def test_check_ray_refuses_a_bad_value_naming_the_option(argv, flag):
    p = argparse.ArgumentParser()
    add_ray(p, "here")
    with pytest.raises(UsageError, match=flag):
        check_ray(p.parse_args(argv))


def test_check_ray_takes_the_defaults_and_a_cluster_s_width():
    p = argparse.ArgumentParser()
    add_ray(p, "here")
    check_ray(p.parse_args([]))
    check_ray(p.parse_args(["--address", "10.0.0.1:6379", "--workers", "5000", "--connect-timeout", "3"]))


@pytest.mark.parametrize("command", [["cardvalue", "Fire"], ["power", "demo"]])
def test_a_command_refuses_zero_workers_before_it_plays(command, capsys):
    # the commands call check_ray before any Ray starts (tests above: what it refuses)
    assert main([*command, "--workers", "0"]) == 2
    assert "--workers" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv, local_by_default", [(["--workers", "1"], False), ([], True), (["--workers", "1"], True)]
)
def test_ray_runner_plays_in_this_process_when_asked(argv, local_by_default):
    p = argparse.ArgumentParser()
    add_ray(p, "here")
    assert isinstance(ray_runner(p.parse_args(argv), local_by_default), Local)
