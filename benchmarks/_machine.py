"""Machine description printed in every benchmark's results file, and the timing helpers they share."""

import logging
import platform
import time
from pathlib import Path


def cpu_model():
    """The CPU's model name from /proc/cpuinfo, or what platform reports."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


class ProgressLog:
    """``log(message)``: a time-stamped line printed at once and kept for the results file."""

    def __init__(self):
        self.lines = []

    def __call__(self, message):
        import time

        line = f"{time.strftime('%H:%M:%S')} {message}"
        self.lines.append(line)
        print(line, flush=True)


def write_results(text, path):
    """Write a results file whole (through a temporary file beside it) and print it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text)
    tmp.replace(path)
    print(text)


def print_and_append(text, path=None):
    """Print a results section and, with ``path``, append it to that markdown file (after a blank line)."""
    print(text)
    if path:
        with open(path, "a") as handle:
            handle.write("\n" + text.rstrip("\n") + "\n")


def markdown_table(frame, floatfmt=".3g", index=False):
    """A pandas DataFrame as a Markdown table (without the optional ``tabulate`` package)."""
    import numpy as np

    if index:
        frame = frame.reset_index()

    def cell(value):
        if isinstance(value, (float, np.floating)):
            return "NA" if np.isnan(value) else format(value, floatfmt)
        return str(value)

    header = [str(c) for c in frame.columns]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join(lines)


class IterationClock(logging.Handler):
    """Time stamps of the EM iterations discrim logs (one after each iteration's E-step).

    Attach it to the ``discrim.mixture._em`` logger at DEBUG level; ``stamps`` then holds one
    ``time.perf_counter()`` per iteration, whose differences are the time per iteration.
    """

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.stamps = []

    def emit(self, record):
        if hasattr(record, "em_iteration"):
            self.stamps.append(time.perf_counter())
