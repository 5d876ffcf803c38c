#!/usr/bin/python3
"""Print tabulate(rows, headers, tablefmt="github") for every case of cases.json.

Test tooling for report/tabulate_test.go, for Debian's python3-tabulate
(0.8.9, the reference for report.GithubTable). Rewrite the golden with:

    apt-get install -y python3-tabulate
    /usr/bin/python3 report/testdata/tabulate/render.py > report/testdata/tabulate/golden.txt

The first line names the tabulate version; then each case prints as a line
"=== <name>", its table (no trailing newline, as tabulate returns it) and
a blank line.
"""

import json
import os
import sys

import tabulate


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "cases.json"), encoding="utf-8") as f:
        cases = json.load(f)
    out = ["# tabulate %s, tablefmt=\"github\": written by render.py from cases.json" % tabulate.__version__]
    for case in cases:
        out.append("=== " + case["name"])
        out.append(tabulate.tabulate(case["rows"], case["headers"], tablefmt="github"))
        out.append("")
    sys.stdout.buffer.write(("\n".join(out) + "\n").encode("utf-8"))


if __name__ == "__main__":
    main()
