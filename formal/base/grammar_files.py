"""Where the grammar files are, and where Lark keeps their built tables between runs.

``grammar_dir()`` is ``grammar/`` beside the package (an installed wheel carries it inside);
``table_cache("fragment", text)`` names a file under the user's cache directory whose name
carries a hash of the grammar text, e.g. ``~/.cache/ptxlayout/fragment-3f2a....lark-tables``.
The text stage (``grammar/lines.lark``) and the parse stage (``pseudocode.lark``,
``fragment.lark``) both load their grammars through these two.
"""

from __future__ import annotations

from pathlib import Path


def grammar_dir() -> Path:
    """Where the ``.lark`` files are: inside the installed package, or the repository root."""
    package = Path(__file__).resolve().parents[1]  # formal/
    for candidate in (package / "grammar", package.parent / "grammar"):
        if (candidate / "pseudocode.lark").is_file():
            return candidate
    raise FileNotFoundError("grammar/pseudocode.lark not found next to the formal package")


def table_cache(name: str, text: str) -> str | bool:
    """Where Lark keeps the built LALR tables of a grammar between runs (building them is
    about a third of a second), or False for no cache.

    ``PTXLAYOUT_CACHE_DIR`` names the directory (empty: no cache); by default the user's
    cache directory.  The file name carries a hash of the grammar text, and Lark itself
    checks a hash of the grammar, its options, its own version and Python's before it uses
    a file, so an edited grammar or another Lark never loads stale tables.  A directory that
    cannot be made or written means no cache, not an error."""
    import hashlib
    import os

    where = os.environ.get("PTXLAYOUT_CACHE_DIR")
    if where is None:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"),
                                                                ".cache")
        where = os.path.join(base, "ptxlayout")
    if not where:
        return False
    try:
        os.makedirs(where, mode=0o700, exist_ok=True)
    except OSError:
        return False
    if not os.access(where, os.W_OK | os.X_OK):
        return False
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
    return os.path.join(where, f"{name}-{digest}.lark-tables")
