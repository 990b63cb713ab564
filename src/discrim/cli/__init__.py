"""The ``discrim`` command-line tool: a thin layer over the public API."""


def run(argv=None):
    """Entry point of the ``discrim`` command: the signal handlers first, then the imports.

    ``discrim.cli.main`` imports click, pandas, scikit-learn and scipy (about a second); the
    handlers of :mod:`discrim.cli._signals` are installed before, so that an interruption then
    ends the command as one during its work does (exit 130/143, one line), not with a traceback.

    Parameters
    ----------
    argv : sequence of str or None
        Arguments (``sys.argv[1:]`` when None).
    """
    from discrim.cli._signals import run_command

    def load():
        from discrim.cli._warnings import command_line_warnings
        from discrim.cli.main import cli

        command_line_warnings()  # warnings as one paragraph each
        return cli

    run_command(load, argv, prog_name="discrim")
