"""``python -m mantle_lsp check|explain|serve …``: the command line, started safely.

``python -m`` puts the working directory first on ``sys.path``, and editors start the
server from the workspace folder: a ``yaml.py``, ``lark.py`` or ``pygls/`` there would be
imported (executed) instead of the real library. So the first thing this module does,
before it imports anything of ours or of our dependencies, is take that entry off the
path. Only the entry point does this: importing ``mantle_lsp`` leaves ``sys.path`` alone.

What it cannot prevent: a ``mantle_lsp/`` folder in the working directory is found before
this code runs (and, on Python 3.10, a ``runpy.py``). Clients start the server from a
folder they trust, or with ``-P`` / ``PYTHONSAFEPATH=1`` (3.11+): see docs/security.md.
"""

import os
import sys


def _forget_the_working_directory() -> None:
    """Drop ``sys.path[0]`` when it is the working directory (as ``-m`` put it there)."""
    if getattr(sys.flags, "safe_path", False) or not sys.path:
        return  # -P / PYTHONSAFEPATH: the working directory was never added
    try:
        first = os.path.realpath(sys.path[0] or os.curdir)
        here = os.path.realpath(os.getcwd())
    except OSError:
        return
    if first == here:
        del sys.path[0]


if __name__ == "__main__":
    _forget_the_working_directory()
    from mantle_lsp.cli.entry import entry

    entry()
