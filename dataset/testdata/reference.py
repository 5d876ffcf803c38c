#!/usr/bin/env python3
"""Expected rows for dataset_test.go, from the reference tool's algorithms.

How it was used: run once with `python3 dataset/testdata/reference.py` (plain
CPython 3.11, no packages); its output was pasted into the `want` tables of
TestMatchesReference in dataset_test.go. It is kept so that the expectations
can be re-derived, not run by the tests.

It rebuilds the ShareGPT-like file that the Go test generates (same LCG, same
bytes; the SHA-256 it prints is checked by the Go test), then runs transcriptions
of sample_sharegpt_requests and sample_random_requests from
sglang/benchmark/datasets/{sharegpt,random,common}.py against it, with:
  - CPython's own `random` module seeded as the reference seeds it;
  - NumPy's legacy RandomState emulated: MT19937 seeded by init_genrand (loaded
    into CPython's MT with setstate), randint by masked rejection on 32-bit
    words, random_sample as genrand_res53 (which is what random() computes);
  - a whitespace tokenizer: "<s>" is id 0 (BOS, added by encode), "<unk>" 1,
    "w0".."w99" are 2..101, anything else is <unk>.
After each load it prints the next value of both generators, which pins how
many draws the dataset consumed.
"""
import hashlib
import json
import os
import random
import tempfile


# --- the generated file (mirrors makeShareGPT in dataset_test.go) ----------

class LCG:
    def __init__(self, seed):
        self.state = seed

    def next(self, m):
        self.state = (self.state * 1103515245 + 12345) & 0x7FFFFFFF
        return (self.state >> 8) % m


def gen_words(g, count):
    out = []
    for i in range(count):
        if i > 0:
            s = g.next(8)
            out.append("\\n" if s == 0 else "\\u0020" if s == 1 else " ")
        w = g.next(20)
        if w == 0:
            out.append('x\\"y')
        elif w == 1:
            out.append("caf\\u00e9")
        elif w == 2:
            out.append("na\u00efve")
        else:
            out.append("w%d" % g.next(100))
    return "".join(out)


def gen_turn(g, role, value):
    if g.next(2) == 0:
        return '{"from": "%s", "value": "%s"}' % (role, value)
    return '{"value": "%s", "from": "%s", "n": %d}' % (value, role, g.next(1000))


def gen_turns(g, n):
    turns = []
    for t in range(n):
        if t % 2 == 0:
            turns.append(gen_turn(g, "human", gen_words(g, 1 + g.next(12))))
        else:
            turns.append(gen_turn(g, "gpt", gen_words(g, g.next(15))))
    return "[" + ", ".join(turns) + "]"


def gen_entry(g, k):
    kind = g.next(12)
    head = '{"id": "k%d", ' % k
    if kind == 0:
        return head + '"conversations": %s}' % gen_turns(g, 1)
    if kind == 1:
        return head + '"conversation": %s}' % gen_turns(g, 2 + g.next(2))
    if kind == 2:
        return head + '"conversations": []}'
    if kind == 3:
        rest = gen_turn(g, "gpt", gen_words(g, g.next(15)))
        return head + '"conversations": [{"from": "human", "value": ""}, %s]}' % rest
    if kind == 4:
        p = gen_words(g, 1 + g.next(12)) + " Assistant:"
        c = gen_words(g, g.next(15))
        return head + '"conversations": [%s, %s]}' % (gen_turn(g, "human", p), gen_turn(g, "gpt", c))
    if kind == 5:
        return head + '"conversations": %s, "conversation": %s}' % (gen_turns(g, 1), gen_turns(g, 2))
    if kind == 6:
        return head + '"conversations": %s, "x": 1.5e3, "conversations": %s}' % (gen_turns(g, 1), gen_turns(g, 2))
    if kind == 7:
        return head + '"items": [1, true, null, -0.25]}'
    return head + '"model": null, "conversations": %s}' % gen_turns(g, 2 + g.next(3))


def make_sharegpt(n):
    g = LCG(12345)
    return ("[\n" + ",\n".join(gen_entry(g, k) for k in range(n)) + "\n]\n").encode()


# --- the fake tokenizer -------------------------------------------------------

VOCAB = ["<s>", "<unk>"] + ["w%d" % i for i in range(100)]
IDS = {w: i for i, w in enumerate(VOCAB)}


class Tok:
    vocab_size = len(VOCAB)
    bos_token = "<s>"

    def encode(self, text, add_special_tokens=True):
        ids = [IDS.get(w, 1) for w in text.split()]
        return [0] + ids if add_special_tokens else ids

    def decode(self, ids):
        return " ".join(VOCAB[i] for i in ids)

    def num_special_tokens_to_add(self):
        return 1


# --- numpy's legacy RandomState ------------------------------------------------

class NumPy:
    def __init__(self, seed):
        s = [seed & 0xFFFFFFFF]
        for i in range(1, 624):
            s.append((1812433253 * (s[-1] ^ (s[-1] >> 30)) + i) & 0xFFFFFFFF)
        self.r = random.Random()
        self.r.setstate((3, tuple(s) + (624,), None))

    def randint(self, low, high, size):
        rng = high - low - 1
        out = []
        for _ in range(size):
            if rng == 0:
                out.append(low)
                continue
            assert rng < 0xFFFFFFFF
            mask = rng
            for sh in (1, 2, 4, 8, 16):
                mask |= mask >> sh
            while True:
                v = self.r.getrandbits(32) & mask
                if v <= rng:
                    out.append(low + v)
                    break
        return out

    def random_sample(self):
        return self.r.random()


# --- the reference algorithms, transcribed -------------------------------------

def compute_random_lens(np, full_len, range_ratio, num):
    if full_len <= 0:
        return [0] * num
    return np.randint(max(int(full_len * range_ratio), 1), full_len + 1, num)


def load_pairs(path):
    with open(path) as f:
        dataset = json.load(f)
    convs = [d.get("conversations", d.get("conversation", [])) for d in dataset]
    return [(c[0]["value"], c[1]["value"]) for c in convs if len(c) >= 2]


def sharegpt(path, n, tok, fixed_output_len=None, context_len=None, prompt_suffix=""):
    pairs = load_pairs(path)
    random.shuffle(pairs)
    rows = []
    for prompt, completion in pairs:
        if len(rows) == n:
            break
        if prompt_suffix:
            if prompt.endswith("Assistant:"):
                prompt = prompt[: -len("Assistant:")]
            prompt = prompt + prompt_suffix + "Assistant:"
        prompt_len = len(tok.encode(prompt))
        out_len = len(tok.encode(completion)) if fixed_output_len is None else fixed_output_len
        if prompt_len < 2 or out_len < 2:
            continue
        if context_len and prompt_len + out_len > context_len:
            continue
        rows.append((prompt, prompt_len, out_len))
    printed = "#Input tokens: %s\n#Output tokens: %s\n" % (
        npsum([r[1] for r in rows]), npsum([r[2] for r in rows]))
    return rows, printed


def random_rows(np, path, n, tok, input_len, output_len, ratio, ids_only, tokenize):
    in_lens = compute_random_lens(np, input_len, ratio, n)
    out_lens = compute_random_lens(np, output_len, ratio, n)
    if not tokenize:
        k = tok.num_special_tokens_to_add()
        in_lens = [max(0, x - k) for x in in_lens]
    rows = []
    if not ids_only:
        pairs = load_pairs(path)
        random.shuffle(pairs)
        for prompt, _ in pairs:
            i = len(rows)
            if i == n:
                break
            ids = tok.encode(prompt)
            if not ids:
                continue
            ids = (ids * ((in_lens[i] + len(ids) - 1) // len(ids)))[: in_lens[i]]
            rows.append((ids if tokenize else tok.decode(ids), in_lens[i], out_lens[i]))
    else:
        offsets = np.randint(0, tok.vocab_size, n)
        for i in range(n):
            ids = [(offsets[i] + i + j) % tok.vocab_size for j in range(in_lens[i])]
            rows.append((ids if tokenize else tok.decode(ids), in_lens[i], out_lens[i]))
    printed = "#Input tokens: %s\n#Output tokens: %s\n" % (npsum(in_lens), npsum(out_lens))
    return rows, printed


def npsum(v):
    return str(sum(v)) if v else "0.0"  # np.sum([]) is the float 0.0


# --- scenarios (the same names and parameters as in dataset_test.go) ----------

def go_str(s):
    return json.dumps(s, ensure_ascii=False)


def go_row(r):
    prompt, plen, olen = r
    if isinstance(prompt, list):
        head = "IDs: []int{%s}" % ", ".join(str(x) for x in prompt)
    else:
        head = "Text: %s" % go_str(prompt)
    return "{%s, PromptLen: %d, OutputLen: %d, TextPromptLen: %d}," % (head, plen, olen, plen)


def main():
    data = make_sharegpt(80)
    print("// sha256 of makeShareGPT(80):", hashlib.sha256(data).hexdigest())
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "sg.json")
        with open(path, "wb") as f:
            f.write(data)
        print("// usable conversations:", len(load_pairs(path)))
        tok = Tok()
        cases = [
            ("sharegpt", 42, lambda np: sharegpt(path, 6, tok)),
            ("sharegpt-fixed-suffix", 7, lambda np: sharegpt(path, 5, tok, 6, 12, " Answer briefly.")),
            ("sharegpt-short", 3, lambda np: sharegpt(path, 1000, tok, None, 0)),
            ("random", 42, lambda np: random_rows(np, path, 6, tok, 12, 9, 0.0, False, False)),
            ("random-tokenized", 5, lambda np: random_rows(np, path, 5, tok, 20, 4, 0.5, False, True)),
            ("random-empty-targets", 42, lambda np: random_rows(np, path, 4, tok, 1, 0, 1.0, False, False)),
            ("random-trunc", 9, lambda np: random_rows(np, path, 4, tok, 7, 7, 0.99, False, False)),
            ("random-short", 1, lambda np: random_rows(np, path, 200, tok, 3, 2, 1.0, False, True)),
            ("random-ids", 11, lambda np: random_rows(np, path, 5, tok, 10, 6, 0.3, True, False)),
            ("random-ids-tokenized", 11, lambda np: random_rows(np, path, 5, tok, 10, 6, 0.0, True, True)),
        ]
        for name, seed, run in cases:
            random.seed(seed)
            np = NumPy(seed)
            rows, printed = run(np)
            print('%s: {printed: %s, nextPy: %r, nextNP: %r, rows: []Row{' % (
                go_str(name), go_str(printed), random.random(), np.random_sample()))
            for r in rows:
                print("\t" + go_row(r))
            print("}},")


if __name__ == "__main__":
    main()
