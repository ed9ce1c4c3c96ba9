"""Cost of a Python scheme per hook call (docs/schemes/python.md "How it runs, and what it costs").

Runs the bundled `default` scenario with the built-in `dt` and `cs` and with their Python
equivalents (examples/schemes/dtpy.py, an `admit` returning True), best CPU time of `--reps`.
    python examples/schemes/cost.py [--reps 3]
"""

import argparse
import copy
import sys
import time
from pathlib import Path

import sharebuf
from sharebuf.scenario import scenario_dict

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dtpy import DT  # noqa: E402


class AcceptAll:
    def __init__(self, ctx):
        pass

    def admit(self, state, port, queue, pkt, now_s):
        return True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    reps = ap.parse_args().reps
    base = scenario_dict("default")
    calls = {}

    def counting(cls):
        class Counting(cls):
            def admit(self, *a):
                calls[cls] = calls.get(cls, 0) + 1
                return cls.admit(self, *a)
        return Counting

    def sc(scheme, alpha=True):
        d = copy.deepcopy(base)
        d["switch"]["bm"] = {"scheme": scheme, **({"alpha": 0.5} if alpha else {})}
        return d

    ref = sharebuf.run(sc("count"), schemes={"count": counting(DT)}, progress=False)
    sharebuf.run(sc("count", alpha=False), schemes={"count": counting(AcceptAll)}, progress=False)

    def best(scenario, schemes=None):
        ts = []
        for _ in range(reps):
            t = time.process_time()
            r = sharebuf.run(scenario, schemes=schemes, progress=False)
            ts.append(time.process_time() - t)
        return min(ts), r

    for name, (rs, py, cls) in {
        "dt": (sc("dt"), (sc("dtpy"), {"dtpy": DT}), DT),
        "cs": (sc("cs", alpha=False), (sc("acc", alpha=False), {"acc": AcceptAll}), AcceptAll),
    }.items():
        n = calls[cls]
        a, ra = best(rs)
        b, rb = best(*py)
        same = ra.flows.equals(rb.flows) and ra.summary["drops"] == rb.summary["drops"]
        print(f"{name}: {n} admissions; built-in {a:.3f} s ({1e9 * a / n:.0f} ns/admission), Python {b:.3f} s "
              f"({1e9 * b / n:.0f} ns/admission): x{b / a:.2f}, +{1e9 * (b - a) / n:.0f} ns per call; identical results: {same}")
    assert ref.summary["drops"] == sharebuf.run(sc("dt"), progress=False).summary["drops"]


if __name__ == "__main__":
    main()
