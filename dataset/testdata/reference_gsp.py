#!/usr/bin/python3
"""Expected rows for gsp_test.go, from the reference tool's GSP algorithm.

How it was used: run once with `/usr/bin/python3 dataset/testdata/reference_gsp.py`
(CPython 3.11 with NumPy 1.24); its output was pasted into gspWant in
gsp_ref_test.go. It is kept so that the expectations can be re-derived, not
run by the tests.

It transcribes sample_generated_shared_prefix_requests (and
compute_random_lens, gen_prompt, _zipf_group_probs) from
sglang/benchmark/datasets/{generated_shared_prefix,common}.py, seeding
random and np.random with --seed as the reference does, with the test's
whitespace tokenizer: "<s>" is id 0 (BOS, added by encode), "<unk>" 1, both
special, and "w0".."w99" are 2..101. The vocabulary gen_prompt draws from
is the ordinary ids in ascending order (what benchserve uses; the
reference's order is a Rust HashMap's). After each load it prints the next
value of both generators, which pins how many draws the dataset consumed.
"""
import json
import math
import random

import numpy as np

POOL = list(range(2, 102))


def decode(ids):
    return " ".join("w%d" % (i - 2) for i in ids)


def encode(text):
    return [0] + [2 + int(w[1:]) for w in text.split()]


def compute_random_lens(full_len, range_ratio, num):
    if full_len <= 0:
        return [0] * num
    return np.random.randint(max(int(full_len * range_ratio), 1), full_len + 1, size=num).tolist()


def gen_prompt(k):
    return decode(random.choices(POOL, k=k))


def zipf_probs(n, alpha):
    ranks = np.arange(1, n + 1, dtype=np.float64)
    w = 1.0 / (ranks ** alpha)
    return w / w.sum()


def gsp(seed, groups, ppg, sys_len, q_len, out_len, ratio=1.0, turns=1, ordered=False,
        dist="uniform", alpha=None, fast=False):
    random.seed(seed)
    np.random.seed(seed)
    out = []
    sys_lens = compute_random_lens(sys_len, ratio, groups)
    q_lens = np.array(compute_random_lens(q_len, ratio, groups * ppg * turns)).reshape(groups, ppg, turns)
    out_lens = np.array(compute_random_lens(out_len, ratio, groups * ppg)).reshape(groups, ppg)
    system_prompts = [gen_prompt(sys_lens[i]) for i in range(groups)]
    questions = [[[gen_prompt(int(q_lens[g, p, t])) for t in range(turns)] for p in range(ppg)] for g in range(groups)]
    if dist == "uniform":
        assignment = np.repeat(np.arange(groups), ppg)
    else:
        rng = np.random.default_rng(seed)
        assignment = rng.choice(groups, size=groups * ppg, replace=True, p=zipf_probs(groups, alpha))
    rows = []
    tin = tout = 0
    for slot, g in enumerate(assignment):
        sg, sp = divmod(slot, ppg)
        g = int(g)
        tq = questions[sg][sp]
        tp = ["%s\n\n%s" % (system_prompts[g], tq[0])] + tq[1:]
        prompt = tp[0] if turns == 1 else tp
        plen = 1 if fast else len(encode(tp[0]))
        olen = int(out_lens[sg, sp])
        rows.append((prompt, plen, olen, g))
        tin += plen
        tout += olen
    if not ordered:
        random.shuffle(rows)
    lines = ["Number of groups: %d" % groups, "Prompts per group: %d" % ppg, "Number of turns: %d" % turns,
             "Group distribution: %s" % dist]
    if dist == "zipf":
        lines.append("Zipf alpha: %s" % alpha)
    lines.append("Total prompts: %d" % len(rows))
    if not fast:
        lines.append("Total input tokens: %d" % tin)
        lines.append("Total output tokens: %d" % tout)
        lines.append("Average system prompt length: %.1f tokens" % (sum(len(encode(s)) for s in system_prompts) / len(system_prompts)))
        allq = [q for gr in questions for conv in gr for q in conv]
        lines.append("Average question length: %.1f tokens" % (sum(len(encode(q)) for q in allq) / len(allq)))
    return rows, lines


SCENARIOS = [
    ("uniform", dict(seed=42, groups=3, ppg=2, sys_len=6, q_len=3, out_len=5)),
    ("ratio", dict(seed=7, groups=2, ppg=3, sys_len=8, q_len=4, out_len=6, ratio=0.5, ordered=True)),
    ("turns", dict(seed=1, groups=2, ppg=2, sys_len=4, q_len=3, out_len=4, ratio=0.3, turns=3)),
    ("zipf", dict(seed=42, groups=4, ppg=3, sys_len=3, q_len=2, out_len=4, dist="zipf", alpha=1.2)),
    ("fast", dict(seed=5, groups=2, ppg=2, sys_len=5, q_len=2, out_len=3, fast=True)),
]

for name, kw in SCENARIOS:
    rows, lines = gsp(**kw)
    print("\t%s: {lines: %s, nextPy: %r, nextNP: %r, rows: []gspRow{" % (
        json.dumps(name), json.dumps("\n".join(lines) + "\n"), random.random(), np.random.random_sample()))
    for prompt, plen, olen, g in rows:
        print("\t\t{%s, %d, %d, %d}," % (json.dumps(prompt if isinstance(prompt, list) else [prompt]), plen, olen, g))
    print("\t}},")
