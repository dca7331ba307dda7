"""The ``mantle-lsp`` console script (and ``python -m mantle_lsp``).

It imports as little as it can before it knows the command: ``mantle-lsp serve`` over
stdio answers the editor's ``initialize`` request before the server is imported
(``lsp/handshake.py``), and every other command imports :mod:`.main`.
"""

from __future__ import annotations

import gc
import os
import sys

EXIT_ERRORS = 1


def entry() -> None:
    """Run the command, then leave at once.

    A ``check`` of a large project builds a graph of millions of objects; a normal exit
    would free them one by one (~0.2 s on 1,000 skills) although the process is over.
    Output is flushed first, so nothing is lost. A reader that goes away (``check … |
    head``) ends the output quietly, with status 1 when the command was cut short.
    """
    try:
        from .. import bytecode

        bytecode.install()  # no compiling on every start (bytecode.py)
        argv = sys.argv[1:]
        if argv[:1] == ["serve"]:
            from ..lsp import handshake

            jobs = handshake.stdio_jobs(argv)
            if jobs is not None:
                early = handshake.answer_first(sys.stdin.buffer, sys.stdout.buffer, jobs)
                if early.answer is not None and not os.environ.get("MANTLE_LSP_NO_EARLY_LOOK"):
                    # the documents opened with the workspace, before pygls (early.py)
                    from ..lsp import early as first

                    first.look_first(sys.stdin.buffer, sys.stdout.buffer, early.params, early.raw)
        # The imports create ~10^5 objects, none of them garbage: without the cyclic
        # collector running over them (~30 collections, ~5 ms of every `check`'s start).
        gc.disable()
        try:
            from . import main as command
        finally:
            gc.enable()

        command.live_until_exit = []  # the process ends right after (os._exit below)
        rc = command.main(argv)
    except BrokenPipeError:
        rc = EXIT_ERRORS
    except KeyboardInterrupt:
        rc = 130
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BrokenPipeError:  # the reader went away: what was left is lost
            rc = rc or EXIT_ERRORS
        except (ValueError, OSError):  # already closed (pygls closes stdout at `exit`)
            pass
    os._exit(rc)
