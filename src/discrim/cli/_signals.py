"""SIGINT and SIGTERM end a command through the normal clean-up path, with the usual exit codes.

Python's default SIGTERM action kills the process at once: context managers and ``finally``
blocks do not run, so temporary output files and forked search workers stay behind. While a
command runs, both signals instead raise :class:`Interrupted` where the main thread is, which
unwinds the stack like any exception (temporary files are removed, worker pools terminated), and
the process then exits with 128 + the signal number (130 for SIGINT, 143 for SIGTERM), as a shell
reports a process killed by that signal.
"""

import contextlib
import gc
import signal
import sys

_HANDLED = (signal.SIGINT, signal.SIGTERM)


class Interrupted(BaseException):
    """Raised in the main thread when the process receives SIGINT or SIGTERM.

    A BaseException, like KeyboardInterrupt, so that ``except Exception`` clauses of library code
    do not swallow it; unlike KeyboardInterrupt, click does not turn it into ``Abort`` (exit 1).

    Parameters
    ----------
    signum : int
        The signal received.
    """

    def __init__(self, signum):
        super().__init__(signum)
        self.signum = signum

    @property
    def exit_code(self):
        """128 + the signal number, the shell's convention for a process ended by a signal."""
        return 128 + self.signum


def _raise_interrupted(signum, frame):
    # A second signal during the clean-up ends the process the default way, at once.
    for handled in _HANDLED:
        signal.signal(handled, signal.SIG_DFL)
    raise Interrupted(signum)


@contextlib.contextmanager
def signals_raise():
    """Within the block, SIGINT and SIGTERM raise :class:`Interrupted`; the old handlers return after.

    Only the main thread can install handlers; elsewhere (a command run from a worker thread of a
    host program) the block runs with the handlers as they are.
    """
    try:
        previous = {signum: signal.signal(signum, _raise_interrupted) for signum in _HANDLED}
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def run_command(command, args=None, prog_name="discrim"):
    """Run a click command; on SIGINT/SIGTERM clean up, say so in one line, exit 130/143.

    Parameters
    ----------
    command : click.Command or callable
        The command, or a function without arguments that imports and returns it: its imports
        (scikit-learn, scipy: about a second) then run with the handlers in place too, so that
        Ctrl-C at once ends the command like Ctrl-C later, not with a traceback of the import.
    args : list of str or None
        Arguments (``sys.argv[1:]`` when None).
    prog_name : str

    Returns
    -------
    Never returns normally: click's standalone mode ends with ``SystemExit``.
    """
    code = None
    try:
        with signals_raise():
            if not hasattr(command, "main"):
                command = command()
            return command.main(args=args, prog_name=prog_name)
    except Interrupted as exc:
        code, name = exc.exit_code, signal.Signals(exc.signum).name
    # The exception's traceback held the interrupted frames (and any worker pool's generator);
    # dropping it and collecting runs their clean-up before the process leaves.
    gc.collect()
    print(f"discrim: stopped by {name}; temporary files removed.", file=sys.stderr)
    sys.exit(code)
