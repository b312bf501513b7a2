"""The play page as a board of cards, in a real headless Chromium: at every decision of a game the
page is read back from the DOM and compared with GET /api/state: each face-up card (and the
person's own face-down ones) drawn with its three boxes as printed, the opponent's hidden cards and
hand as backs, the top card of each stack marked, who holds control, the options grouped under the
card they concern; a decision the disk cannot keep says the game is not being saved."""

from __future__ import annotations

import errno
import json
import random
import re
import threading

import pytest
from fixtures_analysis.chromium import launched

from protolab.play.playtest import create, spec_of
from protolab.play.server import Table, make_server

TRIOS = [["Fire", "Water", "Death"], ["Hate", "Light", "Life"]]
browser = pytest.fixture(scope="module")(launched)

DOM = """(() => {
  const card = c => ({face: c.dataset.face, name: c.dataset.card || null, top: c.classList.contains('top-card'),
    ribbon: !!c.querySelector('.ribbon'),
    boxes: Array.from(c.querySelectorAll('.box')).map(b => [b.dataset.box, b.textContent])});
  const sides = {};
  for (const s of document.querySelectorAll('#sides .side')) {
    sides[s.dataset.seat] = {
      stacks: Array.from(s.querySelectorAll('.line .stack')).map(st => Array.from(st.children).map(card)),
      hand: Array.from(s.querySelectorAll('.hand .card')).map(card),
      control: !!s.querySelector('.control-badge')};
  }
  const groups = Array.from(document.querySelectorAll('#options .group')).map(g => ({key: g.dataset.group,
    card: g.querySelector(':scope > .card') ? card(g.querySelector(':scope > .card')) : null,
    buttons: Array.from(g.querySelectorAll('button[data-option]')).map(b => [+b.dataset.option, b.textContent])}));
  const asking = document.querySelector('#asker .box.asking');
  return {sides, groups, control: document.body.dataset.control,
    controlText: document.getElementById('control').textContent,
    asking: asking ? [asking.closest('.card').dataset.card, asking.dataset.box] : null,
    unsaved: document.getElementById('unsaved').textContent, text: document.body.innerText,
    decision: +document.body.dataset.decision};
})()"""

CLICK = """(async () => {
  const before = document.body.dataset.decision;
  document.querySelector('#options button[data-option="%d"]').click();
  for (let k = 0; k < 2000; k++) {
    await new Promise(r => setTimeout(r, 5));
    if (document.body.dataset.decision !== before || document.getElementById('error').textContent) return true;
  }
  return false;
})()"""


def boxes(cards: dict, name: str) -> list[list[str]]:
    return [[k, cards[name][k] or "\u2014"] for k in ("top", "middle", "bottom")]


def check_board(dom: dict, s: dict) -> None:
    """The DOM's board is the state's view, each card drawn with its printed boxes."""
    view, cards = s["view"], s["cards"]
    for seat, side in view["sides"].items():
        shown = dom["sides"][seat]
        for stack, drawn in zip(side["stacks"], shown["stacks"], strict=True):
            assert len(drawn) == len(stack)
            for k, (c, d) in enumerate(zip(stack, drawn, strict=True)):
                top = k == len(stack) - 1
                assert d["top"] == top and d["ribbon"] == top, (seat, stack)
                if c["card"] is None:  # the opponent's face-down card: a back, no name, no text
                    assert d["face"] == "back" and d["name"] is None and d["boxes"] == []
                else:
                    assert d["name"] == c["card"] and d["face"] == ("up" if c["face_up"] else "down")
                    assert d["boxes"] == boxes(cards, c["card"])
        if seat == view["player"]:
            assert [d["name"] for d in shown["hand"]] == view["hand"]
            assert all(d["boxes"] == boxes(cards, d["name"]) for d in shown["hand"])
        else:
            assert [d["face"] for d in shown["hand"]] == ["back"] * side["hand_count"]
        assert shown["control"] == (view["control"] == seat)
    assert dom["control"] == view["control"] and view["control"].replace("none", "nobody") in dom["controlText"]


def check_options(dom: dict, s: dict) -> None:
    """Every option once, under the card it concerns (that card drawn with its boxes), as its short words."""
    listed = sorted(o for g in dom["groups"] for o, _ in g["buttons"])
    assert listed == [o["option"] for o in s["options"]]
    by_option = {o["option"]: o for o in s["options"]}
    for g in dom["groups"]:
        for i, text in g["buttons"]:
            o = by_option[i]
            if o["card"] is not None:
                assert g["key"] == "card:" + o["card"] and text == o["short"]
                assert g["card"]["name"] == o["card"] and g["card"]["boxes"] == boxes(s["cards"], o["card"])
            elif o["hidden_card"]:
                assert g["key"] == "hidden" and g["card"]["face"] == "back" and text == o["short"]
            else:
                assert g["key"] == "plain" and g["card"] is None and text == o["label"]
    keys = [g["key"] for g in dom["groups"]]
    assert len(keys) == len(set(keys))  # one group per card
    assert dom["asking"] == (None if s.get("asking") is None else [s["asking"]["card"], s["asking"]["box"]])


def hidden_names(table: Table) -> set[str]:
    """The names of B's cards that A may not see: B's hand, deck and face-down cards."""
    opp = table.live.game.state()["B"]
    names = set(opp["hand"]) | set(opp["deck"])
    return names | {c.removeprefix("down:") for st in opp["stacks"] for c in st if c.startswith("down:")}


@pytest.fixture
def served(tmp_path):
    table = Table(create(str(tmp_path / "pt"), spec_of("greedy", 4, 1, TRIOS, [], None)), {})
    server = make_server(table, 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield table, f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


def wait_drawn(browser) -> None:
    browser.evaluate(
        "new Promise(r => { const t = setInterval(() => { if (document.body.dataset.decision) "
        "{ clearInterval(t); r(); } }, 10); })"
    )


def test_the_page_draws_the_seats_view_as_cards_with_their_boxes(browser, served):
    table, url = served
    browser.open(url)
    wait_drawn(browser)
    rng, seen = random.Random(6), {"kinds": set(), "groups": 0, "control": set(), "down": 0, "covered": 0}
    while True:
        s = json.loads(browser.evaluate("fetch('/api/state').then(r => r.text())"))
        dom = browser.evaluate(DOM)
        assert dom["decision"] == s["decision"]
        check_board(dom, s)
        hidden = hidden_names(table)
        assert not [n for n in hidden if re.search(rf"\b{re.escape(n)}(?!\d)", dom["text"])], s["decision"]
        if s["over"]:
            break
        check_options(dom, s)
        seen["kinds"].add(s["kind"])
        seen["groups"] = max(seen["groups"], sum(g["card"] is not None for g in dom["groups"]))
        seen["control"].add(s["view"]["control"])
        seen["down"] += sum(d["face"] == "down" for st in dom["sides"]["A"]["stacks"] for d in st)
        seen["covered"] += sum(len(st) > 1 for st in dom["sides"]["B"]["stacks"])
        assert browser.evaluate(CLICK % rng.randrange(len(s["options"])))
    # the game exercised what is checked: several kinds, cards grouped, control changing hands,
    # the person's own face-down cards shown to them, covered cards
    assert {"action", "target"} <= seen["kinds"] and seen["groups"] >= 3, seen
    assert len(seen["control"]) >= 2 and seen["down"] and seen["covered"], seen
    assert browser.errors() == []


def test_a_decision_the_disk_cannot_keep_says_the_game_is_not_saved(browser, served, monkeypatch):
    table, url = served
    browser.open(url)
    wait_drawn(browser)
    before = table.state()
    real = table.playtest.save

    def full(rec):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(table.playtest, "save", full)
    assert browser.evaluate(CLICK % 0)
    browser.evaluate(  # the refusal's answer, then the state the page loads after it (a loaded machine: up to 20 s)
        "new Promise(r => { let k = 0; const t = setInterval(() => { if (document.getElementById('unsaved')"
        ".textContent || ++k > 2000) { clearInterval(t); r(); } }, 10); })"
    )
    dom = browser.evaluate(DOM)
    assert dom["unsaved"].startswith("This game is not being saved: not saved, so not taken")
    assert dom["decision"] == before["decision"] and table.state()["decision"] == before["decision"]
    assert browser.evaluate("getComputedStyle(document.getElementById('unsaved')).display") == "block"
    monkeypatch.setattr(table.playtest, "save", real)  # space freed: the same click is taken, the banner goes
    assert browser.evaluate(CLICK % 0)
    dom = browser.evaluate(DOM)
    assert dom["unsaved"] == "" and dom["decision"] == before["decision"] + 1
    assert browser.evaluate("getComputedStyle(document.getElementById('unsaved')).display") == "none"
    assert [e for e in browser.errors() if "status of 507" not in e] == []  # the browser logs the 507 itself
