"""Warnings as the command line shows them: one paragraph, and parameter advice in its own spelling.

Python shows a warning with the file and line that raised it and that line's source (for an
estimator's ``fit``, a line of scikit-learn's ``base.py``), which tells a command-line user nothing.
Advice such as "Set reg_param (for example reg_param=0.1)" names a parameter as Python spells it;
on the command line it is ``--param reg_param=0.1``, which the shown warning then recalls.
"""

import re
import warnings

import click

__all__ = ["OPTION_OF", "command_line_advice", "command_line_warnings", "show_warning"]

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
    from discrim.cli._io import FEATURE_NAMES, name_feature_positions

    context = click.get_current_context(silent=True)
    text = str(message)
    if FEATURE_NAMES.get() is not None:  # a fit's features, listed by position in its warnings
        text = name_feature_positions(text, FEATURE_NAMES.get())
    text = command_line_advice(text, None if context is None else context.command)
    name = "Warning" if category is UserWarning else category.__name__
    click.echo(f"{name}: {text}", err=True)


def command_line_advice(text, command=None):
    """``text`` with, where it names a parameter setting as Python spells it, how to give it here.

    Parameters
    ----------
    text : str
        A warning's or an error's message, e.g. "Set reg_param (for example reg_param=0.1)".
    command : click.Command or None
        The command that ran: one with a ``--param`` option is told to use it, one without (``discrim
        mixture``) that the setting is Python's; None (outside a command) offers ``--param``.

    Returns
    -------
    text : str
    """
    settings = [match.group(1) for match in _SETTING.finditer(text)]
    if not settings:  # e.g. "reg_param=0.1" (or a current value: "em_max_iter=1000")
        return text
    opts = {opt for option in getattr(command, "params", ()) for opt in getattr(option, "opts", ())}
    options = list(dict.fromkeys(OPTION_OF[name] for name in settings if OPTION_OF.get(name) in opts))
    if options:  # the command's own options for those parameters (discrim mixture's --max-iter)
        return text + f" (On the command line: {', '.join(options)}.)"
    if command is None or "--param" in opts:
        return text + " (On the command line a model parameter is set with --param NAME=VALUE.)"
    return text + " (This command has no option for that parameter: set it in Python, on the estimator.)"


#: Parameters that commands take as options of their own (discrim mixture), by Python's name.
OPTION_OF = {"n_components": "--components", "max_iter": "--max-iter", "tol": "--tol", "n_init": "--n-init",
            "init_params": "--init", "random_state": "--random-state", "n_trials": "--n-trials",
            "n_categories": "--n-categories", "prior": "--prior", "noise": "--noise"}


def command_line_warnings():
    """Show every warning of this process with :func:`show_warning` (called by the ``discrim`` entry point)."""
    warnings.showwarning = show_warning
