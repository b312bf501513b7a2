"""Generate the engine's Cython includes from the card vocabulary (sim/cards/vocabulary/).

setup.py runs this before every build, so the generated files (git-ignored) always match the
table:

- _vocab_decl.pxi  (included by _core.pxd) the Verb and CountKind enums, the log kinds and their
                   notes, the selector, trigger, zone, phase, decision, event and restriction
                   enums (ENUMS), the Step struct and the bots' default target per verb
- _vocab_impl.pxi  (included last by _core.pyx) the verb dispatch tables, bound by name to the
                   implementations in verbs.pxi, and the reading of a step record into a Step

    python -m sim.engine.vocab_gen          # write them (setup.py does)
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path

from sim.cards import vocabulary as V

HERE = Path(__file__).resolve().parent
DECL = HERE / "_vocab_decl.pxi"
IMPL = HERE / "_vocab_impl.pxi"
HEADER = "# Generated from sim/cards/vocabulary/ by sim/engine/vocab_gen.py on every build: do not edit.\n"


def _enum(name: str, members: list[tuple[str, int]]) -> list[str]:
    return [f"cdef enum {name}:".replace(" :", ":"), *(f"    {m} = {code}" for m, code in members), ""]


def _engine_enum(e: V.EngineEnum) -> list[str]:
    """One of ENUMS, with each member's meaning as a comment."""
    out = [f"# {e.doc}" if e.doc else "", f"cdef enum {e.name}:"]
    for m, code in e.codes():
        out.append(f"    {e.cname(m)} = {code}" + (f"    # {m.meaning}" if m.meaning else ""))
    return [*filter(None, out[:1]), *out[1:], ""]


def _log_notes() -> list[str]:
    """LN_<KIND>_<NOTE>: the meanings of a log entry's note number (LOG_FORMS)."""
    notes = [c for f in V.LOG_FORMS for c in f.constants()]
    return ["# what a log entry's note number (its a or b, LogForm.note) means", *_enum("", notes)]


def _bot_target_fn() -> list[str]:
    """An inline lookup the bots call on the verb that asks for a target."""
    out = [
        "cdef inline int bot_target(int verb) noexcept nogil:",
        '    """The built-in bots\' default way to pick a target of this verb (vocabulary.py)."""',
    ]
    for style in V.BOT_TARGETS[1:]:
        verbs = [v.cname for v in V.VERBS if v.bot_target == style]
        if verbs:
            test = " or ".join(f"verb == {c}" for c in verbs)
            out += [f"    if {test}:", f"        return BT_{style.upper()}"]
    out += ["    return BT_FIRST", ""]
    return out


def decl_text() -> str:
    """The declarations _core.pxd includes."""
    lines = [HEADER]
    lines += _enum("Verb", [("V_NONE", 0)] + [(v.cname, v.code) for v in V.VERBS])
    lines += ["cdef enum:", f"    NVERBS = {max(v.code for v in V.VERBS) + 1}", ""]
    lines += _enum("CountKind", [(c.cname, i) for i, c in enumerate(V.COUNTS)])
    lines += _enum("LogKind", [(f"LG_{k.upper()}", i + 1) for i, k in enumerate(V.log_kinds())])
    lines += _enum("BotTarget", [(f"BT_{s.upper()}", i) for i, s in enumerate(V.BOT_TARGETS)])
    lines += _log_notes()
    for e in V.ENUMS:
        lines += _engine_enum(e)
    lines += ["cdef struct Step:"]
    for f in V.STEP_RECORD:
        lines.append(f"    {f.ctype} {f.name}" + (f"    # {f.doc}" if f.doc else ""))
    lines += ["", *_bot_target_fn()]
    return "\n".join(lines)


def _py_dict(name: str, pairs: list[tuple[str, str]]) -> str:
    """A module-level dict of names to the compiled enum values."""
    body = "".join(f"\n    {key!r}: {cname}," for key, cname in pairs)
    return f"{name} = {{{body}\n}}"


def _inline_dict(e: V.EngineEnum) -> str:
    """Word -> compiled member, for one of ENUMS."""
    return "{" + ", ".join(f"{m.word!r}: {e.cname(m)}" for m, _ in e.codes() if m.word is not None) + "}"


def _bindings() -> list[str]:
    out = []
    for v in V.VERBS:
        if v.on_field:
            out += [
                f"    VERB_DO[<int>{v.cname}] = verb_field",
                f"    VERB_POSSIBLE[<int>{v.cname}] = possible_field",
                f"    VERB_ACT[<int>{v.cname}] = act_{v.name}",
            ]
        else:
            out.append(f"    VERB_DO[<int>{v.cname}] = verb_{v.name}")
            if v.possible:
                out.append(f"    VERB_POSSIBLE[<int>{v.cname}] = possible_{v.name}")
    return out


def impl_text() -> str:
    """The dispatch tables and record reader _core.pyx includes (after every implementation)."""
    lines = [
        HEADER,
        "ctypedef int (*verb_fn)(State* g, Frame* fr, const Step* st, int dec) noexcept nogil",
        "ctypedef bint (*possible_fn)(State* g, Frame* fr, const Step* st, int dec) noexcept nogil",
        "ctypedef int (*act_fn)(State* g, Frame* fr, const Step* st, int c, int dec) noexcept nogil",
        "",
        "cdef verb_fn VERB_DO[NVERBS]              # resolve a step",
        "cdef possible_fn VERB_POSSIBLE[NVERBS]    # could it change the game (6.2, `may`)",
        "cdef act_fn VERB_ACT[NVERBS]              # field verbs: act on one chosen card",
        "",
        "cdef void bind_verbs() noexcept:",
        "    cdef int v",
        "    for v in range(NVERBS):",
        "        VERB_DO[v] = verb_none",
        "        VERB_POSSIBLE[v] = possible_always",
        "        VERB_ACT[v] = act_none",
        *_bindings(),
        "",
        "bind_verbs()",
        "",
        "",
        "cdef void step_from_record(Step* s, dict rec):",
        '    """Fill a Step from the loader\'s record (a dict with every STEP_FIELDS key)."""',
        *(f'    s.{f.name} = rec["{f.name}"]' for f in V.STEP_RECORD),
        "",
        "",
        f'VOCAB_DIGEST = "{V.engine_digest()}"',
        _py_dict("VERB_CODES", [(v.name, v.cname) for v in V.VERBS]),
        _py_dict("COUNT_KINDS", [(c.word, c.cname) for c in V.COUNTS]),
        _py_dict("LOG_KINDS", [(k, f"LG_{k.upper()}") for k in V.log_kinds()]),
        "ENUM_WORDS = {" + "".join(f"\n    {e.key!r}: {_inline_dict(e)}," for e in V.ENUMS) + "\n}",
        "",
    ]
    return "\n".join(lines)


def write_changed(files: Iterable[tuple[Path, str]]) -> list[Path]:
    """Write each generated (path, text), leaving a file untouched when its text is unchanged: an
    unchanged include must not make the build compile its extension again. Used by every generator."""
    written = []
    for path, text in files:
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
            written.append(path)
    return written


def write_includes() -> list[Path]:
    """Write both includes (the ones whose text changed)."""
    return write_changed(((DECL, decl_text()), (IMPL, impl_text())))


if __name__ == "__main__":
    for p in write_includes():
        print(f"wrote {p}")
    sys.exit(0)
