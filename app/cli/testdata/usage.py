# Regenerates usage_80.txt: Python argparse's format_usage() for our flag table.
#   go test ./app/cli -run TestDumpFlags -dump-flags=/tmp/flags.json
#   COLUMNS=80 python3 app/cli/testdata/usage.py /tmp/flags.json > app/cli/testdata/usage_80.txt
import argparse, json, sys

flags = json.load(open(sys.argv[1]))
p = argparse.ArgumentParser(prog="benchserve")
p.add_argument("--version", action="version", version="")  # ours, not in the flag table
excl = None
for f in flags:
    kw = {}
    if f["action"] == "store_true":
        kw["action"] = "store_true"
    else:
        if f["action"]:
            kw["action"] = f["action"]
        if f["nargs"]:
            kw["nargs"] = f["nargs"]
        if f["choices"]:
            kw["choices"] = f["choices"]
        if f["metavar"]:
            kw["metavar"] = f["metavar"]
    if f["name"] in ("--profile-prefill-url", "--profile-decode-url"):
        if excl is None:
            excl = p.add_mutually_exclusive_group()
        excl.add_argument(f["name"], **kw)
    else:
        p.add_argument(f["name"], **kw)
sys.stdout.write(p.format_usage())
