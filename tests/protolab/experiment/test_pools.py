"""The card files of a job as paths (protolab/experiment/pools.py, `written`): an official pool makes
no temporary folder at all, and a folder made for card files goes on every way out: the block's
end, an exception, and a stop cut short (stopnote.BEFORE_EXIT, run before os._exit)."""

from __future__ import annotations

import pytest

from protolab.experiment import stopnote
from protolab.experiment.pools import written


def test_no_card_files_make_no_folder(monkeypatch):
    import tempfile

    monkeypatch.setattr(tempfile, "mkdtemp", lambda **_: pytest.fail("a folder for no files"))
    with written([], "protolab-cards-") as paths:
        assert paths == []


def test_the_folder_of_card_files_goes_on_every_way_out():
    files = [("variants/a.toml", "variant = 'a'\n"), ("b.toml", "variant = 'b'\n")]
    before = len(stopnote.BEFORE_EXIT)
    with written(files, "protolab-cards-") as paths:
        folder = paths[0].parent
        assert [p.read_text() for p in paths] == [t for _, t in files] and folder.name.startswith("protolab-cards-")
        assert [p.name for p in paths] == ["00-a.toml", "01-b.toml"]
    assert not folder.exists() and len(stopnote.BEFORE_EXIT) == before
    with pytest.raises(KeyboardInterrupt), written(files, "protolab-cards-") as paths:
        folder = paths[0].parent
        raise KeyboardInterrupt
    assert not folder.exists()
    with written(files, "protolab-cards-") as paths:
        folder = paths[0].parent
        for end in stopnote.BEFORE_EXIT[before:]:  # what StopDeadline runs before os._exit (this block's)
            end()
        assert not folder.exists()
    assert len(stopnote.BEFORE_EXIT) == before
