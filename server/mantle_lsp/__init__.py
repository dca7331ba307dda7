"""mantle-lsp: language server and checker for Rasa Mantle agent projects."""

import os
import sys

__version__ = "0.1.0"


def _forget_the_working_directory() -> None:
    """``python -m mantle_lsp.cli.main`` puts the working directory first on ``sys.path``,
    and editors start the server from the workspace folder: a ``yaml.py`` or a ``pygls/``
    there would be imported (executed) instead of the real library. While ``-m`` is still
    locating our module (``sys.argv[0] == "-m"``), take that entry off the path; the
    package's own modules are found through its ``__path__``. (A ``mantle_lsp/`` folder in
    the working directory would be found before this code runs: clients must start the
    server from a folder they trust, see docs/security.md.)"""
    if sys.argv[:1] != ["-m"] or not sys.path:
        return
    try:
        first = os.path.realpath(sys.path[0] or os.curdir)
        here = os.path.realpath(os.getcwd())
    except OSError:
        return
    if first == here:
        del sys.path[0]


_forget_the_working_directory()
