"""crosscheck.py renders the golden cases with Python's jinja2 set up as
transformers' apply_chat_template sets it up (ImmutableSandboxedEnvironment,
trim_blocks, lstrip_blocks, loopcontrols, its tojson, raise_exception and
strftime_now), and reports where the @huggingface/jinja goldens differ from
it. Optional: it needs jinja2, and is not part of the tests.

Usage (from the repository root, after golden.js):
  python3 tools/chatgolden/crosscheck.py [--write]

With --write it records Python's outcome for the cases that differ in
tokenizer/testdata/chat/python_divergent.json; the Go tests hold those
cases to Python (transformers) rather than to the JS port.
"""

import glob
import json
import os
import subprocess
import sys
from datetime import datetime

import jinja2
import jinja2.ext
from jinja2.sandbox import ImmutableSandboxedEnvironment

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
FIXED_NOW = datetime(2024, 7, 26, 14, 5, 9)


def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def strftime_now(fmt):
    return FIXED_NOW.strftime(fmt)


def environment():
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


def token_text(v):
    if isinstance(v, str):
        return v
    if isinstance(v, dict) and isinstance(v.get("content"), str):
        return v["content"]
    return None


def special_tokens_map(config):
    out = {}
    for key in ["bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"]:
        t = token_text(config.get(key))
        if t:
            out[key] = t
    extra = config.get("additional_special_tokens")
    if isinstance(extra, list) and extra:
        out["additional_special_tokens"] = [token_text(t) for t in extra]
    return out


def main():
    modcache = subprocess.run(["go", "env", "GOMODCACHE"], capture_output=True, text=True, check=True).stdout.strip()
    env = environment()
    differ = 0
    total = 0
    divergent = {}
    for path in sorted(glob.glob(os.path.join(REPO, "tokenizer", "testdata", "chat", "*.json"))):
        if path.endswith("python_divergent.json"):
            continue
        golden = json.load(open(path, encoding="utf-8"))
        config = json.load(open(os.path.join(HERE, "node_modules", golden["config"]), encoding="utf-8"))
        if golden["template"].startswith("github.com/"):
            module, rest = golden["template"].split("/testdata/", 1)
            source = open(os.path.join(modcache, module, "testdata", rest), encoding="utf-8").read()
        else:
            source = config["chat_template"]
        template = env.from_string(source)
        for case in golden["cases"]:
            total += 1
            kwargs = {**special_tokens_map(config), **case.get("kwargs", {})}
            try:
                got = template.render(
                    messages=case["messages"],
                    tools=case.get("tools"),
                    documents=None,
                    add_generation_prompt=case["add_generation_prompt"],
                    **kwargs,
                )
                err = None
            except Exception as e:  # noqa: BLE001 - any template failure is a result
                got, err = None, f"{type(e).__name__}: {e}"
            want, want_err = case.get("output"), case.get("error")
            if (err is None) != (want_err is None) or (err is None and got != want):
                differ += 1
                divergent[f"{golden['family']}/{case['name']}"] = {"output": got} if err is None else {"error": err}
                print(f"{golden['family']}/{case['name']}:")
                print(f"  js:     {want!r}" if want_err is None else f"  js error:     {want_err}")
                print(f"  python: {got!r}" if err is None else f"  python error: {err}")
    print(f"{total} cases, {differ} differ between @huggingface/jinja and Python jinja2 {jinja2.__version__}")
    if "--write" in sys.argv[1:]:
        out = {"renderer": f"Python jinja2 {jinja2.__version__}, set up as transformers' apply_chat_template", "cases": divergent}
        path = os.path.join(REPO, "tokenizer", "testdata", "chat", "python_divergent.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(out, f, indent=1, ensure_ascii=False)
            f.write("\n")
        print(f"wrote {path}")
        return 0
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
