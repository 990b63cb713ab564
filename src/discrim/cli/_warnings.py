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
# what comes just before a setting that states the value in force rather than advising one: "EM
# stopped at tol=0.001", "in max_iter=100 iterations", "its variance is reg_covar=1e-06 alone",
# "|change| >= tol=0.001"
_REPORTED = re.compile(r"(?:\b(?:at|in|is)|[<>]=?)\s*$")
# a clause of advice ("Increase max_iter or tol", "Raise reg_covar, set a prior"): the parameters
# it names bare are the ones to set
_ADVICE = re.compile(r"(?:^|(?<=[.;:)] ))(?:Increase|Raise|Lower|Reduce|Set|Use|Pass|Try)\b[^.;]*")
# a parameter named bare in advice: a snake_case name, or a one-word one a command has an option for
_BARE_NAME = re.compile(r"\b([a-z][a-z0-9]*_[a-z0-9_]*[a-z0-9]|[a-z]+)\b")


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
    settings = _advised_parameters(text)
    if not settings:
        return text
    opts = {opt for option in getattr(command, "params", ()) for opt in getattr(option, "opts", ())}
    options = list(dict.fromkeys(OPTION_OF[name] for name in settings if OPTION_OF.get(name) in opts))
    if options:  # the command's own options for those parameters (discrim mixture's --max-iter)
        return text + f" (On the command line: {', '.join(options)}.)"
    if command is None or "--param" in opts:
        return text + " (On the command line a model parameter is set with --param NAME=VALUE.)"
    return text + " (This command has no option for that parameter: set it in Python, on the estimator.)"


def _advised_parameters(text):
    """The parameters ``text`` advises setting: its settings ("for example reg_param=0.1") but those that
    state the value in force ("EM stopped at tol=0.001"), and the names its advice gives bare
    ("Increase max_iter or tol", "set a prior"), in order of appearance.

    Parameters
    ----------
    text : str

    Returns
    -------
    names : list of str
    """
    found = [(match.start(), match.group(1)) for match in _SETTING.finditer(text)
             if not _REPORTED.search(text[:match.start()])]
    for advice in _ADVICE.finditer(text):
        found += [(advice.start() + name.start(), name.group(1)) for name in _BARE_NAME.finditer(advice.group(0))
                  if "_" in name.group(1) or name.group(1) in OPTION_OF]
    return list(dict.fromkeys(name for _, name in sorted(found)))


#: Parameters that commands take as options of their own (discrim mixture), by Python's name.
OPTION_OF = {"n_components": "--components", "max_iter": "--max-iter", "tol": "--tol", "n_init": "--n-init",
            "init_params": "--init", "random_state": "--random-state", "n_trials": "--n-trials",
            "n_categories": "--n-categories", "prior": "--prior", "noise": "--noise"}


def command_line_warnings():
    """Show every warning of this process with :func:`show_warning` (called by the ``discrim`` entry point)."""
    warnings.showwarning = show_warning
