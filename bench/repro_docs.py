#!/usr/bin/env python3
"""Render the reproduction docs: every figure of the five papers, with its image and its claims
table (measured value, 95% interval, verdict, what it rests on, the authors' simulator where run).

    python bench/repro_docs.py --scale full  [--out DIR] [--jobs N] [--seeds 1,2,3] [--papers ABM,FB]
    python bench/repro_docs.py --scale quick [--out DIR] [--jobs N] [--seeds 6,7,8,9,10]
    python bench/repro_docs.py --render-only DIR --scale quick     # re-render from DIR's runs
    python bench/repro_docs.py --render-only DIR --scale full --keep-other-papers
                                     # DIR holds some papers' runs (--papers ABM): their sections
                                     # replace those on the committed page, the rest are kept

Each paper's figures run as one ``sharebuf repro`` command, papers in order, so the wall time of
each paper on this machine is measured (a run two papers share is counted with the first). DIR
keeps the runs (content-addressed), so a second call only re-renders. Writes ``--doc`` (default
docs/reproduction.md at the full scale, docs/reproduction-quick.md at the quick one) with its
images in the folder of the same name, and DIR/render.json with each paper's seeds and the wall
time, jobs and machine of each call that ran it.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAPERS = ["FB", "FAB", "ABM", "CBM", "BSHARE"]
# the committed pages, one per scale, each linking to the other
PAGES = {"full": "docs/reproduction.md", "quick": "docs/reproduction-quick.md"}


def machine() -> dict:
    cpu = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = "?"
    return dict(cpu=cpu, cores=os.cpu_count(), python=platform.python_version(), commit=commit,
                date=dt.date.today().isoformat())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scale", choices=["quick", "full"], default="full")
    ap.add_argument("--out", default=None, help="repro output directory (runs are kept there); default sharebuf-out/repro-SCALE")
    ap.add_argument("--jobs", type=int, default=None)
    ap.add_argument("--seeds", default=None, help="comma list (default: each scale's seeds in the specs)")
    ap.add_argument("--papers", default=",".join(PAPERS), help="comma list of papers to run (default all five)")
    ap.add_argument("--render-only", metavar="DIR", default=None, help="re-render the docs from DIR without running")
    ap.add_argument("--keep-other-papers", action="store_true",
                    help="write only the papers DIR has runs of; every other paper's sections, table row and seeds are "
                         "kept from the page as it is (each row says which render it comes from)")
    ap.add_argument("--doc", default=None, help="the page to write (its images go to the folder of its name); "
                    "default docs/reproduction.md for --scale full, docs/reproduction-quick.md for quick")
    a = ap.parse_args()
    # SIGTERM (a job scheduler, `kill`) ends the call as Ctrl-C does: the running paper's call is
    # recorded as interrupted and the child `sharebuf repro` is stopped (its finished runs are kept)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    a.doc = a.doc or PAGES[a.scale]
    if a.render_only:
        write_docs(Path(a.render_only), a.scale, ROOT / a.doc, keep=a.keep_other_papers)
        return 0
    out = Path(a.out or f"sharebuf-out/repro-{a.scale}")
    out.mkdir(parents=True, exist_ok=True)
    sys.path.insert(0, str(ROOT / "python"))
    from sharebuf.repro import list_figures

    specs = list_figures()
    rec_file = out / "render.json"
    rec = json.loads(rec_file.read_text()) if rec_file.is_file() else {}
    rec.update(scale=a.scale, machine=machine())
    papers = rec["papers"] = _papers(rec)
    for paper in [p.strip().upper() for p in a.papers.split(",") if p.strip()]:
        ids = [fid for fid, s in specs.items() if s.paper == paper]
        cmd = [sys.executable, "-m", "sharebuf", "repro", *ids, "--scale", a.scale, "--out", str(out)]
        cmd += (["--jobs", str(a.jobs)] if a.jobs else []) + (["--seeds", a.seeds] if a.seeds else [])
        print(f"{paper}: {len(ids)} figures", flush=True)
        t0 = time.perf_counter()
        # a render may be resumed (the runs are content-addressed): a paper's wall time is the
        # sum over the calls that ran it with the same seeds, an interrupted one included (its
        # finished runs are kept); other seeds start it afresh
        prev = papers.get(paper, {})
        calls = prev.get("calls", []) if prev.get("seeds") == a.seeds else []
        papers[paper] = dict(seeds=a.seeds, calls=calls)
        proc = subprocess.Popen(cmd)
        try:
            if proc.wait() != 0:
                raise subprocess.CalledProcessError(proc.returncode, cmd)
        except BaseException:
            if proc.poll() is None:
                # SIGTERM lets `sharebuf repro` stop its workers and keep the finished runs
                proc.terminate()
                try:
                    proc.wait(timeout=300)
                except subprocess.TimeoutExpired:
                    proc.kill()
            calls.append(dict(wall_s=time.perf_counter() - t0, jobs=a.jobs or os.cpu_count(), interrupted=True, **machine()))
            rec_file.write_text(json.dumps(rec, indent=2) + "\n")
            raise
        calls.append(dict(wall_s=time.perf_counter() - t0, jobs=a.jobs or os.cpu_count(), **machine()))
        rec_file.write_text(json.dumps(rec, indent=2) + "\n")
    write_docs(out, a.scale, ROOT / a.doc, keep=a.keep_other_papers)
    return 0


def paper_walls(papers: dict, cpu: dict, cores: int):
    """Each paper's wall time on this machine: the sum over the calls that ran it. The record is
    complete only if those calls could have done the CPU work of its runs (sum of wall x jobs >=
    the runs' CPU time: one run is one single-threaded process); otherwise the runs were made
    partly by unrecorded calls and the wall time is estimated as CPU time / cores (returned in the
    second value)."""
    walls, estimated = {}, set()
    for p, c in cpu.items():
        calls = papers.get(p, {}).get("calls", [])
        capacity = sum(x["wall_s"] * (x.get("jobs") or 1) for x in calls)
        if calls and capacity >= c:
            walls[p] = sum(x["wall_s"] for x in calls)
        else:
            walls[p] = c / cores
            estimated.add(p)
    return walls, estimated


def _papers(rec: dict) -> dict:
    """render.json's per-paper record; an older render.json kept one wall time per paper and one
    seeds list for all papers (read as the paper's single call)."""
    if "papers" in rec:
        return rec["papers"]
    old = rec.pop("wall_s", {}) or {}
    seeds = rec.pop("seeds", None)
    return {p: dict(seeds=seeds, calls=[dict(wall_s=w, **rec.get("machine", {}))]) for p, w in old.items()}


def seed_reductions(specs: dict, shown: dict, papers: dict, scale: str) -> list:
    """The figures run with fewer seeds than their spec's scale asks (a --seeds given to their
    paper's call), as '<figure>: N of M seeds'."""
    out = []
    for fid, s in shown.items():
        given = papers.get(s.paper, {}).get("seeds")
        if not given or not s.simulated:
            continue
        want = s.scale(scale).seeds
        n = len([x for x in given.split(",") if x.strip()])
        if n < len(want):
            out.append(f"{fid} {n} of {len(want)} seeds")
    return out


def kept_page(doc: Path, keep_papers: list, specs: dict) -> dict:
    """The parts of the page as it is that belong to ``keep_papers`` (a partial re-render keeps
    them): each figure's section verbatim, each paper's row of the paper table (its cells), the
    seeds the header gives for it, its seed reductions, and the render (date, commit) of the page
    or, per row, of its *rendered* column."""
    import re

    text = doc.read_text() if doc.is_file() else ""
    m = re.search(r"Rendered on (\S+) at commit (\w+)", text)
    page_render = f"{m.group(1)} {m.group(2)}" if m else "?"
    sections, cur = {}, None
    for line in text.split("\n"):
        if line.startswith("## "):
            fid = line[3:].split(" — ", 1)[0].strip()
            cur = fid if fid in specs and specs[fid].paper in keep_papers else None
            if cur:
                sections[cur] = []
        if cur:
            sections[cur].append(line)
    rows = {}
    for line in text.split("\n"):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| ") and cells[0] in keep_papers and len(cells) >= 7 and cells[1].isdigit():
            rows[cells[0]] = dict(claims=int(cells[1]), holds=int(cells[2]), fails=int(cells[3]),
                                  inconclusive=int(cells[4]), wall=cells[5], cpu=cells[6],
                                  rendered=cells[7] if len(cells) > 7 else page_render)
    m = re.search(r"; seeds: (.*?)(?:; otherwise|; wall time)", text)
    seeds = {}
    for part in (m.group(1).split("; ") if m else []):
        name, _, val = part.partition(" ")
        if name in keep_papers and val:
            seeds[name] = val
    m = re.search(r"\*\*Reduced from the papers’ seed counts:\*\* (.*?)\. Everything else", text)
    reduced = [r for r in (m.group(1).split("; ") if m else []) if r.split(" ")[0] in specs
               and specs[r.split(" ")[0]].paper in keep_papers]
    return dict(sections={k: "\n".join(v).rstrip("\n") for k, v in sections.items()}, rows=rows, seeds=seeds,
                reduced=reduced, render=page_render)


def _seconds(duration: str) -> float:
    """A wall-time cell of the paper table ("109.5 min *est.*", "10 s") in seconds."""
    v, unit = duration.replace("*est.*", "").split()[:2]
    return float(v) * (60 if unit == "min" else 1)


def write_docs(out: Path, scale: str, doc: Path, keep: bool = False) -> None:
    sys.path.insert(0, str(ROOT / "python"))
    from sharebuf.repro import list_figures, report

    imgdir = doc.stem
    specs = list_figures()
    allc = json.loads((out / "claims.json").read_text())
    allc = {fid: allc[fid] for fid in specs if fid in allc}
    rec = json.loads((out / "render.json").read_text()) if (out / "render.json").is_file() else {}
    img = doc.parent / imgdir
    img.mkdir(parents=True, exist_ok=True)
    for fid in allc:
        if (out / f"{fid}.png").is_file():
            shutil.copy2(out / f"{fid}.png", img / f"{fid}.png")
    m = rec.get("machine", {})
    papers = _papers(rec)
    reduced = seed_reductions(specs, {fid: specs[fid] for fid in allc}, papers, scale)
    import pandas as pd

    cpu = report.cpu_by_paper(pd.read_parquet(out / "points.parquet"), {f: specs[f] for f in allc})
    walls, estimated = paper_walls(papers, cpu, m.get("cores") or os.cpu_count() or 1)
    here = f"{m.get('date', '?')} {m.get('commit', '?')}"
    run_papers = {specs[f].paper for f in allc}
    kp = kept_page(doc, [p for p in PAPERS if p not in run_papers], specs) if keep else dict(
        sections={}, rows={}, seeds={}, reduced=[], render=here)
    k = report._count(allc)
    for r in kp["rows"].values():
        for c in ("holds", "fails", "inconclusive"):
            k[c] += r[c]
    est_all = set(estimated) | {p for p, r in kp["rows"].items() if "*est.*" in r["wall"]}
    wall_s = sum(walls.values()) + sum(_seconds(r["wall"]) for r in kp["rows"].values())
    given = {**kp["seeds"], **{p: v["seeds"] for p, v in papers.items() if v.get("seeds")}}
    seeds = ("; ".join(f"{p} {given[p]}" for p in PAPERS if p in given) + f"; otherwise each figure’s {scale}-scale seeds"
             if given else f"each figure’s {scale}-scale seeds (below)")
    kept_note = (f"; {', '.join(p for p in PAPERS if p in kp['rows'])} kept from earlier renders (the table's *rendered* "
                 "column)" if kp["rows"] else "")
    lines = [f"<!-- generated by `python bench/repro_docs.py --scale {scale}`; do not edit -->",
             f"# sharebuf reproductions — {scale} scale", "",
             f"Every evaluation figure of the five papers, run by `sharebuf repro all --scale {scale}` "
             f"({'the papers’ durations and seed counts' if scale == 'full' else 'short arrival windows, for a laptop; `--scale full` runs the papers’ durations and seed counts'}). "
             "How it works, how to read a verdict and how to add a figure: "
             "[repro.md](repro.md); what each finding rests on: [reproduction-notes.md](reproduction-notes.md); "
             "the authors' simulator next to sharebuf: [validation.md](validation.md). "
             + "".join(f"The same figures at the {o} scale: [{Path(PAGES[o]).name}]({Path(PAGES[o]).name})."
                       for o in PAGES if o != scale and scale in PAGES), "",
             "**How to read a claims table.** *measured* is the claim's rule on the pooled runs (tails on the flows "
             "of all seeds together); the 95% interval is a bootstrap over seeds and, within each, over flows "
             "(incast responses with their query). A claim **holds** when its whole interval satisfies the rule, "
             "**fails** when none of it does, and is *inconclusive* when the run-to-run noise covers both. *rests "
             "on* gives, per series at the claim's x, the flows behind the percentile, the share of them that waited "
             "out a retransmission timeout (RTO: a p99 is a timeout once ≥ 1% did) and the drops per run by cause. "
             "In the figures, lines are the pooled values, bands the spread of the seeds, and × marks a tail that "
             "timeouts set.", "",
             f"Claims: **{report._counts_md(k)}** of {sum(k.values())}. Rendered on {m.get('date', '?')} at commit "
             f"{m.get('commit', '?')} on {m.get('cores', '?')} cores ({m.get('cpu', '?')}){kept_note}; seeds: {seeds}"
             + f"; wall time {'≈ ' if est_all else ''}{wall_s / 60:.1f} min.", ""]
    reduced = reduced + kp["reduced"]
    if reduced:
        lines += ["**Reduced from the papers’ seed counts:** " + "; ".join(reduced) + ". Everything else "
                  "runs as its spec asks.", ""]
    table = report.paper_table(allc, specs, walls, cpu, estimated)
    new_rows = {line.split("|")[1].strip(): line for line in table[2:]}
    lines += [table[0] + " rendered |", table[1] + "---|"]
    for paper in PAPERS:
        if paper in new_rows:
            lines.append(new_rows[paper] + f" {here} |")
        elif paper in kp["rows"]:
            r = kp["rows"][paper]
            lines.append(f"| {paper} | {r['claims']} | {r['holds']} | {r['fails']} | {r['inconclusive']} | {r['wall']} | "
                         f"{r['cpu']} | {r['rendered']} |")
    lines.append("")
    if est_all:
        lines += [f"*est.*: some runs of {', '.join(sorted(est_all))} were made by calls that recorded no wall time "
                  "(`sharebuf repro` run directly, or a call killed before this record existed); the wall time shown is "
                  f"the CPU time of its runs over the machine's {m.get('cores') or os.cpu_count()} cores.", ""]
    for fid in specs:
        if fid in allc:
            lines += [x.replace(f"]({fid}.png)", f"]({imgdir}/{fid}.png)")
                      for x in report._figure_md(fid, allc[fid], specs.get(fid), image=True)]
        elif fid in kp["sections"]:
            lines += [kp["sections"][fid], ""]
    doc.write_text("\n".join(lines) + "\n")
    print(f"wrote {doc}")


if __name__ == "__main__":
    sys.exit(main())
