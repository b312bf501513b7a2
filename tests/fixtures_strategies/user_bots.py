"""User strategies (strategies/user.py) in a module a test writes into its temporary folder and
plays by name (`MODULE:Class`)."""

import textwrap

SOURCE = textwrap.dedent('''
    from strategies.user import Strategy

    class Cautious(Strategy):
        """Plays its highest card face-down, otherwise the first option."""
        def __init__(self):
            self.calls = 0

        def choose(self, observation, decision):
            self.calls += 1
            assert "hand" in observation and "sides" in observation
            for i, o in enumerate(decision.options):
                if o.endswith("down left"):
                    return i
            return 0

    class Broken(Strategy):
        def choose(self, observation, decision):
            return 99

    class First(Strategy):
        def choose(self, observation, decision):
            return 0
''')


def write_user_bots(tmp_path, monkeypatch, module: str) -> None:
    """SOURCE as `module`.py in `tmp_path`, importable for the rest of the test (the test drops
    `module` from sys.modules at its end)."""
    (tmp_path / f"{module}.py").write_text(SOURCE)
    monkeypatch.syspath_prepend(str(tmp_path))
