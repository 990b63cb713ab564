"""Download the intersphinx inventories of the projects docs/conf.py links to, for offline builds.

Run once on a machine with internet access: ``python docs/_intersphinx/fetch.py``; commit the
``*.inv`` files it writes next to this script. docs/conf.py uses a local inventory when present.
The committed ones come from Debian's documentation packages instead (no access to the projects'
sites where they were taken); README beside this script says which package and version each is.
"""

import sys
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))


def main():
    from conf import INTERSPHINX_PROJECTS  # noqa: PLC0415  (docs/conf.py, the one list of projects)

    for key, url in INTERSPHINX_PROJECTS.items():
        target = HERE / f"{key}.inv"
        with urllib.request.urlopen(f"{url}/objects.inv", timeout=30) as response:
            target.write_bytes(response.read())
        print(f"{key}: {target.stat().st_size:,} bytes from {url}/objects.inv")


if __name__ == "__main__":
    main()
