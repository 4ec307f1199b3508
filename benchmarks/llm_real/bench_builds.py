"""Tokens per second of llama.cpp builds: the one ``agent.core.local_build`` chooses against others.

    python -m benchmarks.llm_real.bench_builds --build chosen=/venv-a/bin/python --build native=/venv-b/bin/python
        [--prompt-tokens 300] [--generate 64] [--runs 3] [--threads 1] [--batch-threads 2]

Each ``--build NAME=PYTHON`` is an interpreter whose llama-cpp-python was built one way (see
docs/llm.md: ``pip wheel`` with that build's ``CMAKE_ARGS`` into a venv of its own). Each loads the
Gemma 3 270M weights of the [local] extra in a child process, reads the same prompt and generates the
same number of tokens (greedy, no stop) ``--runs`` times after one warm-up, with the agent's own
thread counts (generation on all cores but one, the prompt on all). Printed per build: the
instruction sets its library reports, prompt tokens per second and generated tokens per second
(median of the runs). Nothing is timed here but what the library itself reports.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

from agent.core.local_model import default_threads, gguf_path

CHILD = r"""
import json, statistics, sys, time
import llama_cpp
model, prompt_tokens, generate, runs, threads, batch_threads = sys.argv[1:7]
llm = llama_cpp.Llama(model_path=model, n_ctx=2048, n_threads=int(threads), n_threads_batch=int(batch_threads),
                      verbose=False)
words = ("The partner moves the red triangle next to the square while the agent explains its plan. " * 200)
tokens = llm.tokenize(words.encode())[: int(prompt_tokens)]
prompt_rates, gen_rates = [], []
for run in range(int(runs) + 1):
    llm.reset()
    started = time.perf_counter()
    llm.eval(tokens)
    read = time.perf_counter() - started
    started = time.perf_counter()
    made = 0
    for _ in range(int(generate)):
        token = llm.sample(temp=0.0)
        llm.eval([token])
        made += 1
    gen = time.perf_counter() - started
    if run:  # the first run warms the caches
        prompt_rates.append(len(tokens) / read)
        gen_rates.append(made / gen)
info = llama_cpp.llama_print_system_info().decode()
print(json.dumps({"prompt": statistics.median(prompt_rates), "generate": statistics.median(gen_rates),
                  "features": [p.split("=")[0].strip() for p in info.split("|") if p.strip().endswith("= 1")]}))
"""


def measure(python: str, prompt_tokens: int, generate: int, runs: int, threads: int, batch: int) -> dict:
    done = subprocess.run([python, "-c", CHILD, str(gguf_path()), str(prompt_tokens), str(generate), str(runs),
                           str(threads), str(batch)], capture_output=True, text=True, timeout=1800, check=False)
    if done.returncode != 0:
        return {"error": f"exit {done.returncode}: {done.stderr.strip().splitlines()[-1:]}"}
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", action="append", required=True, metavar="NAME=PYTHON")
    parser.add_argument("--prompt-tokens", type=int, default=300)
    parser.add_argument("--generate", type=int, default=64)
    parser.add_argument("--runs", type=int, default=3)
    generate_threads, batch_threads = default_threads()
    parser.add_argument("--threads", type=int, default=generate_threads)
    parser.add_argument("--batch-threads", type=int, default=batch_threads)
    args = parser.parse_args(argv)
    print("| build | prompt tok/s | generated tok/s | instruction sets the library reports |")
    print("| --- | --- | --- | --- |")
    for spec in args.build:
        name, _, python = spec.partition("=")
        got = measure(python, args.prompt_tokens, args.generate, args.runs, args.threads, args.batch_threads)
        if "error" in got:
            print(f"| {name} | failed | {got['error']} | |")
            continue
        features = ", ".join(f for f in got["features"] if f not in {"SSE3", "SSSE3"})
        print(f"| {name} | {got['prompt']:.0f} | {got['generate']:.1f} | {features} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
