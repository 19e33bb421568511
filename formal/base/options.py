"""The options every command shares with ruff, mypy and pytest, and the help that says them.

Three conventions, added to the parser ``formal.cli`` builds, after its own options:

    -q, --quiet        the problems only: no check marks, no counts of what passed, no
                       progress bar (prove, diff, evidence, audit)
    --select KIND      only findings whose kind starts with KIND (repeatable, or
                       comma-separated: ``--select inj,surj``); ``--ignore KIND`` the others
                       (prove, diff, evidence, audit: each its own kinds, ``SELECT``)
    --format json      evidence's report as JSON (docs/schema/evidence.schema.json)

and two rules for ``--help``: it ends with what each exit status means for this command
(``exit_help``: for diff, 1 is "a map changed, was removed or could not be compared"), and
every option says what it does and, where it has one, its default.  ``document_options``
fills in the words for the options every command names alike (``--output``, ``--format``) and
appends ``(default: ...)`` where the help does not say it; ``undocumented`` lists what is
still missing (a test walks the tree with it).  For ``--trials`` with ``default=4`` and the
help "random trials (warps) per run" the help becomes "random trials (warps) per run
(default: 4)".
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Iterator, Sequence
from difflib import get_close_matches

QUIET = ("prove", "diff", "evidence", "audit cute", "audit triton")

# the commands with --select / --ignore, and what a "kind" is in each (prove's: the finding
# kinds of writers.kinds, handed to ``unknown_prefixes`` by writers.config).  A diff's kinds are
# the changes that fail or inform; evidence's, the instruction of the stale variant (``mma.sp``
# picks mma.sp's, ``mma`` both); the audit's, an operand's verdict other than equal (SARIF's
# rule is ``audit-`` + the kind).  What is not a finding (an unchanged map, an equal operand)
# is reported whatever is selected.
SELECT_KINDS: dict[str, tuple[str, ...]] = {
    "diff": ("different-map", "removed", "not-comparable", "added"),
    "evidence": ("mma", "mma.sp", "ldmatrix", "stmatrix", "movmatrix", "wgmma", "wgmma.sp",
                 "wgmma.smem", "tcgen05.mma"),
    "audit": ("differs", "not-in-spec", "unreadable"),
}
SELECT = ("prove", "diff", "evidence", "audit cute", "audit triton")
# what --select names in each command's help
_SELECT_WHAT = {
    "prove": "the finding kinds of docs/obligations.md, e.g. 'inj,surj'",
    "diff": "the changes " + ", ".join(SELECT_KINDS["diff"]),
    "evidence": "the instructions " + ", ".join(SELECT_KINDS["evidence"]),
    "audit": "the verdicts " + ", ".join(SELECT_KINDS["audit"]),
}

# the help of the options that mean the same in every command that has them
COMMON_HELP = {
    "--format": "the report's format",
    "--output": "write the report to FILE (atomically; a missing folder is made) instead of "
                "stdout",
    "docs": "spec text: plain text, Markdown or the HTML page (none: the embedded catalog)",
    "id": "a layout id, e.g. mma.m16n8k16.A.s8 (leading parts suffice when they name one)",
    "ids": "layout ids (none: every layout)",
    "old": "the older revision of the spec",
    "new": "the newer revision of the spec",
    "--svg": "write the figure as SVG to FILE",
    "--png": "write the figure as PNG to FILE (needs Pillow)",
    "--ascii": "print the figure as text (the default)",
    "--out": "the folder the kernels are written to",
}


# what exit status 1 means for each command (docs/cli.md's table, "Exit status")
EXIT_ONE = {
    "prove": "an error finding nobody accepted, an undecided obligation (unless "
             "--allow-unknown), or drift from --check-ledger",
    "extract": "an error finding (not one of the catalog's accepted errata)",
    "show": "a block-scaled opcode with no legal form, or a form that is refuted",
    "export": "a named layout the format cannot express",
    "diff": "a map changed, was removed or could not be compared",
    "ptx": "a kernel ptxas does not assemble",
    "gpu": "a mismatch, an error, or an erratum the device did not refute",
    "evidence": "a variant without current evidence",
    "audit cute": "an atom whose layout differs from the spec's",
    "audit triton": "a layout that differs from the spec's",
}


def exit_help(command: str) -> str:
    """The exit statuses of ``command`` as its ``--help`` ends."""
    one = EXIT_ONE.get(command)
    return ("exit status: 0 done, nothing wrong found; "
            + (f"1 {one}; " if one else "1 is not used; ")
            + "2 a usage error, an input that cannot be read or nothing checked (one line on "
              "stderr, no traceback); 130 interrupted (Ctrl-C)")


def kinds(values: Iterable[str] | None) -> list[str]:
    """The kinds of repeated, comma-separated ``--select`` / ``--ignore`` values."""
    return [k.strip() for v in values or () for k in v.split(",") if k.strip()]


def picked(kind: str, select: Sequence[str] = (), ignore: Sequence[str] = ()) -> bool:
    """Does ``--select`` / ``--ignore`` keep a finding of ``kind``: it starts with a ``select``
    prefix (any, when none is given) and with no ``ignore`` prefix (ignore wins, as in ruff)."""
    return ((not select or any(kind.startswith(p) for p in select))
            and not any(kind.startswith(p) for p in ignore))


def selection(args: object) -> tuple[list[str], list[str]]:
    """A command's (select, ignore) as ``writers.config`` settled them (none: every kind)."""
    return (list(getattr(args, "select", None) or ()),
            list(getattr(args, "ignore", None) or ()))


def unknown_prefixes(prefixes: Iterable[str], vocabulary: Iterable[str],
                     hint: str = "the kinds are listed in docs/obligations.md") -> list[str]:
    """One line per prefix that starts no kind of ``vocabulary``, with the closest kinds
    (``--select injectve``: "unknown finding kind 'injectve'; did you mean injective?")."""
    known = list(vocabulary)
    out = []
    for p in prefixes:
        if any(k.startswith(p) for k in known):
            continue
        close = get_close_matches(p, known, n=3, cutoff=0.5)
        out.append(f"unknown finding kind '{p}'" + (
            f"; did you mean {' or '.join(close)}?" if close else
            f" ({hint})"))
    return out


def select_of(command: str) -> str:
    """The key of ``command``'s kinds and its ``[tool.ptxlayout]`` table: ``audit cute`` and
    ``audit triton`` share ``audit``'s."""
    return command.split()[0]


def add_conventions(commands: dict[str, argparse.ArgumentParser]) -> None:
    """Each command's exit statuses in its help; ``-q`` on the commands of ``QUIET``,
    ``--select`` / ``--ignore`` on those of ``SELECT``, ``--format`` on evidence, ``--family``
    on list
    (``commands``: name -> its parser; ``audit cute`` for a subcommand's)."""
    for name, p in commands.items():
        if name != "audit":
            p.epilog = exit_help(name)
    for name in QUIET:
        if name in commands:
            commands[name].add_argument(
                "--quiet", "-q", action="store_true",
                help="print the problems only: no line for what was proved or equal, no "
                     "totals of what passed, no progress bar")
    for name in SELECT:
        if name in commands:
            p = commands[name]
            what = _SELECT_WHAT[select_of(name)]
            p.add_argument("--select", action="append", metavar="KIND",
                           help="report only the findings whose kind starts with KIND, of "
                                f"{what} (repeatable or comma-separated; default: every "
                                "kind); the exit status counts only these")
            p.add_argument("--ignore", action="append", metavar="KIND",
                           help="leave out the findings whose kind starts with KIND "
                                "(repeatable or comma-separated; wins over --select; "
                                "default: none)")
    if "list" in commands:
        commands["list"].add_argument(
            "--family", metavar="FAMILY",
            help="only FAMILY's ids, e.g. wgmma.smem, or tcgen05 for its .ld, .st, .smem and "
                 ".datapath (default: every family)")
    if "evidence" in commands:
        commands["evidence"].add_argument(
            "--format", choices=("text", "json"), default="text",
            help="text: one line per stale run and a total; json: "
                 "docs/schema/evidence.schema.json")


def _walk(ap: argparse.ArgumentParser) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    yield ap.prog, ap
    for action in ap._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):
                yield from _walk(sub)


def _options(ap: argparse.ArgumentParser) -> Iterator[argparse.Action]:
    for a in ap._actions:
        if not isinstance(a, (argparse._HelpAction, argparse._VersionAction,
                              argparse._SubParsersAction)):
            yield a


def _name(a: argparse.Action) -> str:
    return max(a.option_strings, key=len) if a.option_strings else a.dest


def _says_default(a: argparse.Action) -> bool:
    """Has the option a default worth saying (not None, not off, not an empty list)?"""
    return a.default not in (None, False, [], argparse.SUPPRESS) and a.nargs != 0


def document_options(ap: argparse.ArgumentParser) -> None:
    """Fill in the help of every option of ``ap`` and its subcommands that has none (from
    ``COMMON_HELP``), and append its default where the help does not name one."""
    for _prog, p in _walk(ap):
        for a in _options(p):
            if not a.help:
                a.help = COMMON_HELP.get(_name(a)) or COMMON_HELP.get(a.dest)
            if a.help and _says_default(a) and "default" not in a.help:
                a.help += " (default: %(default)s)"


def undocumented(ap: argparse.ArgumentParser) -> list[str]:
    """``prog option`` for every option without help, or with a default its help does not
    name; and every command whose help does not give the exit statuses."""
    out = []
    for prog, p in _walk(ap):
        if "exit status" not in (p.epilog or ""):
            out.append(f"{prog}: no exit statuses in --help")
        for a in _options(p):
            if not a.help:
                out.append(f"{prog} {_name(a)}: no help")
            elif _says_default(a) and "default" not in a.help:
                out.append(f"{prog} {_name(a)}: the default {a.default!r} is not said")
    return out
