"""Warnings as the command line shows them: one paragraph, and parameter advice in its own spelling.

Python shows a warning with the file and line that raised it and that line's source (for an
estimator's ``fit``, a line of scikit-learn's ``base.py``), which tells a command-line user nothing.
Advice such as "Set reg_param (for example reg_param=0.1)" names a parameter as Python spells it;
on the command line it is ``--param reg_param=0.1``, which the shown warning then recalls.
"""

import re
import warnings

import click

__all__ = ["show_warning", "command_line_warnings"]

# "name=value" in a message: a parameter setting as Python spells it (value a number, word or quoted)
_SETTING = re.compile(r"\b([a-z][a-z0-9_]*)=('[^']*'|\"[^\"]*\"|[\w.+-]+)")


def show_warning(message, category, filename, lineno, file=None, line=None):
    """Write a warning to stderr as one paragraph, with the command line's spelling of settings.

    Parameters
    ----------
    message : Warning or str
    category : type
    filename, lineno, file, line
        As :func:`warnings.showwarning` takes them (not shown).
    """
    text = str(message)
    if _SETTING.search(text):  # e.g. "reg_param=0.1" (or a current value: "em_max_iter=1000")
        if _command_takes_param():
            text += " (On the command line a model parameter is set with --param NAME=VALUE.)"
        else:
            text += " (This command has no option for that parameter: set it in Python, on the estimator.)"
    name = "Warning" if category is UserWarning else category.__name__
    click.echo(f"{name}: {text}", err=True)


def _command_takes_param():
    """Whether the command running (if any) has a ``--param`` option (``discrim mixture`` has none)."""
    context = click.get_current_context(silent=True)
    return context is None or any("--param" in getattr(option, "opts", ()) for option in context.command.params)


def command_line_warnings():
    """Show every warning of this process with :func:`show_warning` (called by the ``discrim`` entry point)."""
    warnings.showwarning = show_warning
