"""The dashboard's example games (issue 25): the links of analysis/pages/board_links.py made into board
pages by replaying each game exactly from the run folder (the checks of `replay RUN --game N`):
a bounded number carried in the offline file, or any game on demand under `--serve`."""

from __future__ import annotations

from analysis.pages import board_links, board_page
from analysis.pages.shell import GamePage
from analysis.runs.open import Runs, split_arm
from analysis.studies.balance.report import Report
from protolab.experiment.run.replay import OpenRun, ReplayError, ReplayMismatch, board_data, open_run

MAX_EMBEDDED = 12  # board pages carried in an offline dashboard by default (about 40-150 kB each)
ROLLOUTS = 8  # rollouts per turn end in a dashboard's game pages
GROUP_ORDER = ("flag", "run", "protocol")  # which examples are carried first


def example_section(
    run_arg: str, runs: Runs, report: Report, serve: bool, carried: int = MAX_EMBEDDED
) -> tuple[str, GamePage | None]:
    """(the section's HTML, the /game/N page maker when serving) for one run's dashboard; offline,
    the first `carried` example games are carried as board pages."""
    protos = report.tables["protocols"]
    ex = board_links.examples(runs, report.tables["balance_flags"], list(protos[protos["games"] > 0]["protocol"]))
    if serve:
        return board_links.section_html(ex, run_arg, lambda n: f"/game/{n}", {}), game_page(run_arg)
    order = ex.assign(rank=ex["group"].map(GROUP_ORDER.index)).sort_values("rank", kind="stable")
    embedded: dict[int, str] = {}
    try:
        opened = open_run(split_arm(run_arg)[0]) if len(order) and carried > 0 else None  # once for all its games
    except ReplayError:
        opened = None  # each example is then named by its replay command, which prints the reason
    for n in dict.fromkeys(int(x) for x in order["game_index"]):
        if len(embedded) >= carried or opened is None:
            break
        try:
            embedded[n] = board_page.json_for_script(board_data(run_arg, n, ROLLOUTS, opened=opened))
        except (ReplayError, ReplayMismatch):
            continue  # named by its replay command instead, which prints the reason
    return board_links.section_html(ex, run_arg, lambda n: None, embedded), None


def game_page(run_arg: str) -> GamePage:
    """game_index -> (status, board page or the replay's one-line error)."""

    opened: list[OpenRun] = []  # the run, opened at the first page asked for and kept

    def page(n: int) -> tuple[int, str]:
        try:
            if not opened:
                opened.append(open_run(split_arm(run_arg)[0]))
            return 200, board_page.render(board_data(run_arg, n, ROLLOUTS, opened=opened[0]))
        except ReplayError as e:
            return 404, str(e)
        except ReplayMismatch as e:
            return 409, str(e)

    return page
