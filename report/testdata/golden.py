#!/usr/bin/env python3
"""Print the report goldens the way the reference tool would.

Test tooling, not run by `go test`. The fixtures repeat those of
report/fixtures_test.go number for number; the printing uses the reference
tool's format strings ("{:<40} {:<10}", "{:<40} {:<10.2f}", "{:.1f}%") and
json.dumps. Check the goldens with:

    python3 report/testdata/golden.py /tmp/goldens
    for f in /tmp/goldens/*.golden; do cmp "$f" report/testdata/$(basename "$f"); done

Our two documented additions are mirrored here: the "Failed requests:" line
after the closing rule, and null for a server_info or cached_tokens_details
that is not valid JSON.
"""

import io
import json
import os
import sys

INF = float("inf")
EMBEDDING_BACKENDS = ("sglang-embedding", "vllm-embedding")


def stats(mean=0.0, median=0.0, std=0.0, p90=0.0, p95=0.0, p99=0.0, mx=0.0):
    return dict(mean=mean, median=median, std=std, p90=p90, p95=p95, p99=p99, max=mx)


def summary(**kw):
    s = dict(
        duration=0.0, completed=0, failed=0,
        total_input=0, total_input_text=0, total_input_vision=0,
        total_output=0, total_output_retokenized=0,
        request_throughput=0.0, input_throughput=0.0, output_throughput=0.0, total_throughput=0.0,
        e2e=stats(), ttft=stats(), tpot=stats(), itl=stats(),
        concurrency=0.0, max_output_tokens_per_s=0.0, max_concurrent_requests=0,
        accept_length=None, output_lens=[], cache=None,
    )
    s.update(kw)
    return s


def run(**kw):
    r = dict(
        backend="", dataset_name="", request_rate=0.0, trace=False, max_concurrency=None, tag=None,
        sharegpt_output_len=None, random_input_len=0, random_output_len=0, random_range_ratio=0.0,
        server_info=None, cache_report=False, output_details=False,
    )
    r.update(kw)
    return r


def cache(total_prompt, total_cached, hit_rate, has_details=False, device=0, host=0, storage=0, backend=None):
    return dict(total_prompt=total_prompt, total_cached=total_cached, hit_rate=hit_rate,
                has_details=has_details, device=device, host=host, storage=storage, backend=backend)


def completions_run():
    r = run(
        backend="sglang-oai", dataset_name="sharegpt", request_rate=INF,
        random_input_len=1024, random_output_len=1024, random_range_ratio=0.0,
        server_info='{"model_path":"meta-llama/Llama-3.1-8B-Instruct","tp_size":1,'
        '"mem_fraction_static":0.88,"internal_states":[{"avg_spec_accept_length":null,"last_gen_throughput":1234.5}],'
        '"version":"0.5.4-caf\u00e9","big":12345678901234567890,"huge":1e400,"neg":-0.0,"tp_size":2}',
    )
    s = summary(
        duration=61.23456789012345, completed=1000,
        total_input=215268, total_input_text=215268,
        total_output=198343, total_output_retokenized=198001,
        request_throughput=16.330864231086047, input_throughput=3515.4655555555557,
        output_throughput=3239.0723, total_throughput=6754.5378555555555,
        e2e=stats(123456789.0, 1 / 3, 1e-05, 0.125, 2.675, 0.005),
        ttft=stats(1e-05, 0.0, 1e16, 99.995, -0.0, 1234.5),
        tpot=stats(0.30000000000000004, 12.5, 3.75, 20.000000000000004, 21.5, 30.25),
        itl=stats(11.9, 10.05, 4.4, 18.7, 22.4, 40.1, 12345.678),
        concurrency=987.6543210987654, max_output_tokens_per_s=4321.0, max_concurrent_requests=1000,
    )
    return r, s


def embedding_run():
    r = run(backend="sglang-embedding", dataset_name="random", request_rate=8.0, max_concurrency=0,
            random_input_len=256, random_output_len=1, random_range_ratio=0.5)
    s = summary(
        duration=62.5, completed=500, total_input=96000, total_input_text=96000,
        request_throughput=8.0, input_throughput=1536.0,
        e2e=stats(15.25, 14.999, 2.0, 19.995, 21.005, 30.0),
        concurrency=0.122, max_concurrent_requests=3, output_lens=[0, 0],
    )
    return r, s


def cache_run():
    r = run(backend="sglang", dataset_name="generated-shared-prefix", request_rate=16.5, max_concurrency=64,
            tag="gsp-cache", random_input_len=1024, random_output_len=1024, random_range_ratio=0.0,
            server_info='{"decode":[{"internal_states":[{"avg_spec_accept_length":3.141592653589793}]}]}',
            cache_report=True)
    s = summary(
        duration=100.0, completed=64, total_input=20000, total_input_text=20000,
        total_output=16384, total_output_retokenized=16390,
        request_throughput=0.64, input_throughput=200.0, output_throughput=163.84, total_throughput=363.84,
        e2e=stats(5000.5, 4999.0, 10.0, 5100.0, 5200.0, 5300.0),
        ttft=stats(50.0, 45.0, 5.0, 60.0, 65.0, 70.0),
        tpot=stats(4.5, 4.4, 0.5, 5.0, 5.5, 6.0),
        itl=stats(14.0, 13.0, 2.0, 17.0, 18.0, 25.0, 80.0),
        concurrency=3.2, max_output_tokens_per_s=256.0, max_concurrent_requests=64,
        accept_length=3.141592653589793,
        cache=cache(20000, 2469, 2469 / 20000 * 100, True, 2000, 400, 69, "hf3fs"),
    )
    return r, s


def image_run():
    r = run(backend="vllm-chat", dataset_name="image", request_rate=1e-05, max_concurrency=8,
            random_input_len=128, random_output_len=64, random_range_ratio=1.0)
    s = summary(
        duration=12.0, completed=100, total_input=180000, total_input_text=12800, total_input_vision=167200,
        total_output=6400, total_output_retokenized=6399,
        request_throughput=8.333333333333334, input_throughput=15000.0, output_throughput=533.3333333333334,
        total_throughput=15533.333333333334,
        e2e=stats(900.0, 880.0, 40.0, 950.0, 980.0, 1000.0),
        ttft=stats(300.0, 290.0, 20.0, 320.0, 330.0, 350.0),
        tpot=stats(9.5, 9.4, 0.1, 9.6, 9.7, 9.8),
        itl=stats(9.5, 9.4, 0.1, 9.6, 9.7, 9.8, 15.0),
        concurrency=7.5, max_output_tokens_per_s=600.0, max_concurrent_requests=8,
    )
    return r, s


def zero_run():
    r = run(backend="sglang", dataset_name="random-ids", request_rate=4.0,
            random_input_len=1024, random_output_len=1024, cache_report=True)
    s = summary(duration=3.0000000000000004, failed=10, output_lens=[0] * 10)
    return r, s


def failures_run():
    r = run(backend="vllm", dataset_name="custom", request_rate=INF, trace=True, max_concurrency=128,
            tag='nightly-\u00e9 "q"', sharegpt_output_len=256, random_input_len=1024, random_output_len=1024,
            random_range_ratio=0.25, server_info='{"oops":')
    s = summary(
        duration=2.5, completed=3, failed=1, total_input=30, total_input_text=30,
        total_output=313, total_output_retokenized=310,
        request_throughput=1.2, input_throughput=12.0, output_throughput=125.2, total_throughput=137.2,
        e2e=stats(1000 / 3, 250.0, 1e-05, 400.0, 450.0, 490.0),
        ttft=stats(20.0, 20.0), tpot=stats(1.5, 1.5), itl=stats(1.25, 1.5, mx=3.0),
        concurrency=0.4, max_output_tokens_per_s=300.0, max_concurrent_requests=2,
        accept_length=0.0, output_lens=[12, 0, 1, 300],
    )
    return r, s


def rec(prompt_len, ttft=0.0, itl=(), text="", error="", cached_tokens=0, details=None):
    return dict(prompt_len=prompt_len, ttft=ttft, itl=list(itl), text=text, error=error,
                cached_tokens=cached_tokens, details=details)


def failures_records():
    return [
        rec(10, 0.020000000000000018, [0.001, 0.333333333, 1e-05], "Hello, world."),
        rec(7, error='Traceback (most recent call last):\n  File "x.py", line 1\n'
            "ConnectionResetError: [Errno 104] Connection reset by peer\n"),
        rec(5, 0.0, [], "\t"),
        rec(15, 0.5, [123456789.0, 0.1], 'caf\u00e9 \u4e16\u754c \U0001F600 "quoted" back\\slash\n\x01'),
    ]


def cache_records():
    return [
        rec(300, 0.05, [0.014], "a", cached_tokens=128,
            details='{"device": 128, "host": 0, "storage": 0, "storage_backend": null}'),
        rec(310, 0.045, [], "b"),
        rec(320, error="Service Unavailable: overloaded", details='{"device":'),
        rec(330, 0.06, [], "c", cached_tokens=69,
            details='{"device":1,"host":0,"storage":69,"storage_backend":"hf3fs","device":0}'),
    ]


def cache_no_details(s):
    s = dict(s)
    s["cache"] = cache(1234, 100, 100 / 1234 * 100)
    s["output_lens"] = [1, 1, 0, 1]
    return s


def loads_or_none(raw):
    # Ours: null where the reference would crash on bad JSON.
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return None


def console(r, s):
    out = io.StringIO()

    def p(*a):
        print(*a, file=out)

    backend = r["backend"]
    p("\n{s:{c}^{n}}".format(s=" Serving Benchmark Result ", n=50, c="="))
    p("{:<40} {:<10}".format("Backend:", backend))
    p("{:<40} {:<10}".format("Traffic request rate:", "trace" if r["trace"] else r["request_rate"]))
    mc = r["max_concurrency"]
    p("{:<40} {:<10}".format("Max request concurrency:", mc if mc else "not set"))
    p("{:<40} {:<10}".format("Successful requests:", s["completed"]))
    p("{:<40} {:<10.2f}".format("Benchmark duration (s):", s["duration"]))
    p("{:<40} {:<10}".format("Total input tokens:", s["total_input"]))
    p("{:<40} {:<10}".format("Total input text tokens:", s["total_input_text"]))
    if r["dataset_name"] in ["image", "mmmu"]:
        p("{:<40} {:<10}".format("Total input vision tokens:", s["total_input_vision"]))
    is_embedding = backend in EMBEDDING_BACKENDS
    if not is_embedding:
        p("{:<40} {:<10}".format("Total generated tokens:", s["total_output"]))
        p("{:<40} {:<10}".format("Total generated tokens (retokenized):", s["total_output_retokenized"]))
    p("{:<40} {:<10.2f}".format("Request throughput (req/s):", s["request_throughput"]))
    p("{:<40} {:<10.2f}".format("Input token throughput (tok/s):", s["input_throughput"]))
    if not is_embedding:
        p("{:<40} {:<10.2f}".format("Output token throughput (tok/s):", s["output_throughput"]))
        p("{:<40} {:<10.2f}".format("Peak output token throughput (tok/s):", s["max_output_tokens_per_s"]))
    p("{:<40} {:<10}".format("Peak concurrent requests:", s["max_concurrent_requests"]))
    if not is_embedding:
        p("{:<40} {:<10.2f}".format("Total token throughput (tok/s):", s["total_throughput"]))
    p("{:<40} {:<10.2f}".format("Concurrency:", s["concurrency"]))
    if s["accept_length"]:
        p("{:<40} {:<10.2f}".format("Accept length:", s["accept_length"]))
    sections = [("End-to-End Latency", "E2E Latency", "e2e", False)]
    if not is_embedding:
        sections += [
            ("Time to First Token", "TTFT", "ttft", False),
            ("Time per Output Token (excl. 1st token)", "TPOT", "tpot", False),
            ("Inter-Token Latency", "ITL", "itl", True),
        ]
    for title, name, key, with_max in sections:
        p("{s:{c}^{n}}".format(s=title, n=50, c="-"))
        st = s[key]
        p("{:<40} {:<10.2f}".format("Mean %s (ms):" % name, st["mean"]))
        p("{:<40} {:<10.2f}".format("Median %s (ms):" % name, st["median"]))
        p("{:<40} {:<10.2f}".format("P90 %s (ms):" % name, st["p90"]))
        p("{:<40} {:<10.2f}".format("P95 %s (ms):" % name, st["p95"]))
        p("{:<40} {:<10.2f}".format("P99 %s (ms):" % name, st["p99"]))
        if with_max:
            p("{:<40} {:<10.2f}".format("Max %s (ms):" % name, st["max"]))
    if r["cache_report"]:
        c = s["cache"] or cache(0, 0, 0.0)
        total_cached = c["total_cached"]
        p("{s:{c}^{n}}".format(s="Cache Hit Details", n=50, c="-"))
        p("{:<40} {:<10}".format("Total prompt tokens:", c["total_prompt"]))
        p("{:<40} {:<10}".format("Total cached tokens:", total_cached))
        label = "  Storage (%s):" % c["backend"] if c["backend"] else "  Storage:"
        if c["has_details"] and total_cached > 0:
            p("{:<40} {:<10}".format("  Device:", c["device"]))
            p("{:<40} {:<10}".format("  Host:", c["host"]))
            if c["storage"] > 0:
                p("{:<40} {:<10}".format(label, c["storage"]))
        p("{:<40} {:.1f}%".format("Cache hit rate:", c["hit_rate"]))
        if c["has_details"] and total_cached > 0:
            p("{:<40} {:.1f}%".format("  Device:", c["device"] / total_cached * 100))
            p("{:<40} {:.1f}%".format("  Host:", c["host"] / total_cached * 100))
            if c["storage"] > 0:
                p("{:<40} {:.1f}%".format(label, c["storage"] / total_cached * 100))
    p("=" * 50)
    if s["failed"] > 0:  # ours
        p("{:<40} {:<10}".format("Failed requests:", s["failed"]))
    return out.getvalue()


def line(r, s, recs):
    result = {
        "tag": r["tag"],
        "backend": r["backend"],
        "dataset_name": r["dataset_name"],
        "request_rate": "trace" if r["trace"] else r["request_rate"],
        "max_concurrency": r["max_concurrency"],
        "sharegpt_output_len": r["sharegpt_output_len"],
        "random_input_len": r["random_input_len"],
        "random_output_len": r["random_output_len"],
        "random_range_ratio": r["random_range_ratio"],
        "server_info": loads_or_none(r["server_info"]),
        "duration": s["duration"],
        "completed": s["completed"],
        "total_input_tokens": s["total_input"],
        "total_input_text_tokens": s["total_input_text"],
        "total_input_vision_tokens": s["total_input_vision"],
        "total_output_tokens": s["total_output"],
        "total_output_tokens_retokenized": s["total_output_retokenized"],
        "request_throughput": s["request_throughput"],
        "input_throughput": s["input_throughput"],
        "output_throughput": s["output_throughput"],
        "total_throughput": s["total_throughput"],
    }
    for key, name in (("e2e", "e2e_latency"), ("ttft", "ttft"), ("tpot", "tpot"), ("itl", "itl")):
        for stat in ("mean", "median", "std", "p90", "p95", "p99"):
            result["%s_%s_ms" % (stat, name)] = s[key][stat]
    result["concurrency"] = s["concurrency"]
    result["accept_length"] = s["accept_length"]
    result["max_output_tokens_per_s"] = s["max_output_tokens_per_s"]
    result["max_concurrent_requests"] = s["max_concurrent_requests"]
    if r["cache_report"]:
        c = s["cache"] or cache(0, 0, 0.0)
        result["cache_report"] = {
            "total_prompt_tokens": c["total_prompt"],
            "total_cached_tokens": c["total_cached"],
            "cache_hit_rate_pct": round(c["hit_rate"], 2),
            "device_cached_tokens": c["device"] if c["has_details"] else None,
            "host_cached_tokens": c["host"] if c["has_details"] else None,
            "storage_cached_tokens": c["storage"] if c["storage"] > 0 else None,
            "storage_backend": c["backend"],
        }
    details = {
        "input_lens": [o["prompt_len"] for o in recs],
        "output_lens": s["output_lens"],
        "ttfts": [o["ttft"] for o in recs],
        "itls": [o["itl"] for o in recs],
        "generated_texts": [o["text"] for o in recs],
        "errors": [o["error"] for o in recs],
    }
    if r["cache_report"]:
        details["cached_tokens"] = [o["cached_tokens"] for o in recs]
        details["cached_tokens_details"] = [loads_or_none(o["details"]) for o in recs]
    dump = result | details if r["output_details"] else result
    return json.dumps(dump) + "\n"


def with_details(rs):
    r, s = rs
    r = dict(r, output_details=True)
    return r, s


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(outdir, exist_ok=True)
    goldens = {
        "console_completions": console(*completions_run()),
        "console_embedding": console(*embedding_run()),
        "console_cache_accept": console(*cache_run()),
        "console_image": console(*image_run()),
        "console_zero_success": console(*zero_run()),
        "console_failures": console(*failures_run()),
        "line_basic": line(*completions_run(), []),
        "line_details": line(*with_details(failures_run()), failures_records()),
        "line_cache": line(*cache_run(), cache_records()),
    }
    r, s = with_details(cache_run())
    goldens["line_details_cache"] = line(r, cache_no_details(s), cache_records())
    for name, text in goldens.items():
        with open(os.path.join(outdir, name + ".golden"), "w", encoding="utf-8", newline="") as f:
            f.write(text)


if __name__ == "__main__":
    main()
