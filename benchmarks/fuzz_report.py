"""The fuzz corpus (tests/fuzz_corpus.py) run end to end, with its counts, or N cases of the
kernel generator (tests/kernel_generator.py):

    python benchmarks/fuzz_report.py            every case on sim + interpreter, results also on iss
    python benchmarks/fuzz_report.py --smoke    a few cases of each outcome, sim + interpreter only
    python benchmarks/fuzz_report.py --generated 10000 [--seed 0] [--no-iss] [--timeout 300] [--jsonl F]
                                                generated cases `seed` .. `seed + N - 1`, each in a worker
                                                process with a time limit, on sim and the interpreter
                                                (every tenth on the ISS too); counts per outcome and the
                                                seeds of the bad ones; exit 0 iff none is bad
    python benchmarks/fuzz_report.py --summarize A.jsonl B.jsonl ...
                                                the same counts over the cases of --jsonl files (runs
                                                in chunks, or cut short: every line is one whole case)

Each case must give its expected outcome (CompilationError at its line:col, a
TypeError/ValueError naming the argument, a located run-time error, or a result
equal to the numpy reference and to the interpreter). Prints the corpus by outcome
and category, and how many cases gave their expected outcome; exit 0 iff all did."""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from tests import fuzz_corpus as fc  # noqa: E402


def outcome(case, target="sim") -> str | None:
    """None when the case behaved as expected, else what went wrong."""
    try:
        got = case.run(case.kernel, target)
    except Exception as e:     # noqa: BLE001 — classifying every outcome is the point
        if case.expect == "result":
            return f"raised {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
        if not isinstance(e, case.exc):
            return f"raised {type(e).__name__} instead of {case.exc[0].__name__}: {e}"
        if case.match not in str(e):
            return f"message lacks {case.match!r}: {e}"
        if case.expect == "compile" and (e.filename, e.line, e.col) != (str(fc.case_path[0]), *case.where):
            return f"located at {e.line}:{e.col}, expected {case.where[0]}:{case.where[1]}"
        if "Traceback" in str(e):
            return "a traceback in the message"
        return None
    if case.expect != "result":
        return f"no {case.exc[0].__name__} raised"
    for name, array in case.reference().items():
        if not np.array_equal(got[name], array):
            return f"{name}: {int((got[name] != array).sum())} elements differ from the reference"
    return None


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--smoke", action="store_true", help="a few cases of each outcome, no ISS")
    p.add_argument("--generated", type=int, metavar="N", help="run N generated cases instead of the corpus")
    p.add_argument("--seed", type=int, default=0, help="the first generated case's seed")
    p.add_argument("--no-iss", action="store_true", help="generated cases: no ISS runs")
    p.add_argument("--timeout", type=float, default=300.0, help="seconds per generated case before it is a hang")
    p.add_argument("--jsonl", help="also write each generated case's outcomes to this file, one JSON line each")
    p.add_argument("--summarize", nargs="+", metavar="JSONL", help="count the cases of these --jsonl files")
    args = p.parse_args(argv)
    if args.summarize:
        return summarize(args.summarize)
    if args.generated is not None:
        return generated_report(args)
    cases = fc.corpus()
    if args.smoke:
        picked, seen = [], {}
        for case in cases:
            if seen.get(case.expect, 0) < 3:
                seen[case.expect] = seen.get(case.expect, 0) + 1
                picked.append(case)
        cases = picked
    fc.build(cases)
    t0 = time.perf_counter()
    failures = []
    runs = {"sim": 0, "interpreter": 0, "iss": 0}
    for case in cases:
        targets = [("sim", "0")]
        if case.expect in ("result", "runtime") or case.category == "capacity":
            targets.append(("sim", "1"))
        if not args.smoke and case.expect in ("result", "runtime"):
            targets.append(("iss", "0"))
        for target, interpret in targets:
            os.environ["BACO_INTERPRET"] = interpret
            try:
                problem = outcome(case, target)
            except Exception:  # noqa: BLE001
                problem = "checker crashed: " + traceback.format_exc(limit=1)
            runs["interpreter" if interpret == "1" else target] += 1
            if problem:
                failures.append((case.name, "interpreter" if interpret == "1" else target, problem))
    os.environ.pop("BACO_INTERPRET", None)
    seconds = time.perf_counter() - t0

    counts = fc.counts(cases)
    print(f"fuzz corpus: {len(cases)} cases ({'smoke' if args.smoke else 'full'})")
    print(f"{'outcome':<10} {'category':<16} {'cases':>5}")
    for expect in ("compile", "launch", "runtime", "result"):
        for category, n in sorted(counts.get(expect, {}).items()):
            print(f"{expect:<10} {category:<16} {n:>5}")
        print(f"{expect:<10} {'(all)':<16} {sum(counts.get(expect, {}).values()):>5}")
    print(f"runs: {runs['sim']} compiled on sim, {runs['interpreter']} interpreted, {runs['iss']} on the ISS; "
          f"{seconds:.1f} s")
    ok = sum(1 for case in cases) - len({name for name, _, _ in failures})
    print(f"expected outcome: {ok}/{len(cases)} cases; internal tracebacks: "
          f"{sum('Traceback' in p or 'crashed' in p for _, _, p in failures)}; "
          f"wrong results: {sum('differ' in p for _, _, p in failures)}")
    for name, target, problem in failures:
        print(f"  FAIL {name} [{target}]: {problem}")
    return 0 if not failures else 1


def generated_report(args) -> int:
    """Runs the generated cases and prints their counts (print_counts)."""
    from tests import kernel_generator as kg
    t0 = time.perf_counter()
    out = open(args.jsonl, "w") if args.jsonl else None
    answers = []
    for answer in kg.run_isolated(range(args.seed, args.seed + args.generated), args.timeout, not args.no_iss):
        answers.append(answer)
        if out:
            out.write(json.dumps(answer) + "\n")
            out.flush()
    seconds = time.perf_counter() - t0
    return print_counts(answers, f"seeds {args.seed}..{args.seed + args.generated - 1}; {seconds:.0f} s")


def summarize(paths) -> int:
    """print_counts over the cases of --jsonl files (a seed run twice counts once, its last run)."""
    answers = {}
    for path in paths:
        for line in Path(path).read_text().splitlines():
            if line.strip():
                answer = json.loads(line)
                answers[answer["seed"]] = answer
    seconds = sum(a.get("seconds", 0.0) for a in answers.values())
    return print_counts(list(answers.values()), f"{len(paths)} files; {seconds:.0f} s of case time")


def print_counts(answers, where: str) -> int:
    """Counts per outcome (over every run: sim, interpreter, ISS) of the generated cases, per
    family, and the seeds of the bad ones; 0 iff none is bad."""
    from tests import kernel_generator as kg
    totals, per_target, per_category, bad = {}, {}, {}, []
    cases = 0
    for answer in answers:
        cases += 1
        for target, what, detail in answer["results"]:
            totals[what] = totals.get(what, 0) + 1
            per_target.setdefault(target, {}).setdefault(what, 0)
            per_target[target][what] += 1
            if what in kg.BAD:
                bad.append((answer["seed"], answer["category"], target, what, detail))
        per_category.setdefault(answer["category"], 0)
        per_category[answer["category"]] += 1
    print(f"generated cases: {cases} ({where})")
    print(f"{'outcome':<20} {'runs':>6}   " + "  ".join(f"{t:>11}" for t in sorted(per_target)))
    for what in kg.GOOD + kg.BAD:
        print(f"{what:<20} {totals.get(what, 0):>6}   "
              + "  ".join(f"{per_target[t].get(what, 0):>11}" for t in sorted(per_target)))
    print("cases per family: " + ", ".join(f"{k} {v}" for k, v in sorted(per_category.items())))
    print(f"bad runs: {len(bad)} (silent wrong results {totals.get('wrong result', 0)}, crashes "
          f"{totals.get('crash', 0)}, hangs {totals.get('hang', 0)})")
    for seed, category, target, what, detail in bad:
        print(f"  BAD seed {seed} [{category}, {target}] {what}: {detail[:300]}")
    return 0 if not bad else 1


if __name__ == "__main__":
    sys.exit(main())
