"""Machine description printed in every benchmark's results file."""

import platform
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
