#!/usr/bin/env python3
"""Keeps H200 run records xz-compressed (issue 39: the tracked tree is mostly run records).

A record becomes NAME.json.xz beside where it was written; the harness reads it by its written name
(harness/report/results.rs, `read_text`), so do tools/pins.py and tools/suite_cost.py, tests that walk the archive
read it through the compression, and `xz -dk NAME.json.xz` gives the file back. The newest run of each test suite
(ablations, microbench) with at least half as many trials as its largest (the whole-suite run a reviewer, or the
before-stop check, reads first) is compressed too, and a plain NAME.summary.json beside it keeps what a reader
needs: the environment and, per trial, its name, expectation, outcome, judgement, flags, duration and the
estimate, without the rounds and the variants' details (about a sixth of the size; the estimates' floats at 5
significant digits, no ptxas warnings). With --old-rule, also the runs at the top of results/h200/ and every run
named anywhere in the code, pins, tools, docs or hypotheses (what this tool kept before those readers took .xz).

With --pack-folders, each folder of results/h200/ (a commit's records, or a report) that no code, pin or test reads
by its path and that holds no run kept plain becomes one FOLDER.tar.xz beside it, its records decompressed
first so that the archive compresses them together (about 3x smaller than one .xz a file):
`tar xJf results/h200/FOLDER.tar.xz -C results/h200` brings it back, as it was but for the .xz of its files.

With --retire-mb N, the oldest packed folders (FOLDER.tar.xz named for a commit, by that commit's date) that no code
reads leave the tree until N MB are freed, each listed in results/h200/ARCHIVED.md with the `git show` that brings
it back from the commit before it left: git history is their place, and the tracked tree stays under 30 MB as
whole-suite runs (about 1 MB each) come in.

Logs (`*.log`) are kept as NAME.log.xz too: a reader opens them with `xzless`, and no code reads them.

Usage, from the repository root: python3 tools/archive-results.py [--dry-run] [--most-mb N] [--old-rule]
[--pack-folders] [--retire-mb N] [--recompress]
--most-mb caps the megabytes of JSON compressed in one go (a submission's diffs count what a change removes); the
top-level runs go first. Then `git add -A results` and commit.
"""
import argparse
import glob
import json
import lzma
import os
import re
import shutil
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
READERS = ["pins", "tools", "harness", "ablations", "microbench", "calibration", "docs", "hypotheses", "README.md",
           "results/h200/README.md"]


def named_anywhere():
    """All the text of the files that may name a run."""
    files = subprocess.run(["git", "ls-files", *READERS], cwd=ROOT, capture_output=True, text=True).stdout.split()
    text = []
    for f in files:
        if f.endswith((".rs", ".py", ".sh", ".md", ".json", ".toml", ".txt")):
            with open(os.path.join(ROOT, f), errors="replace") as fh:
                text.append(fh.read())
    return "\n".join(text)


def runs():
    """Every run record under results/, with its suite, commit, date and trial names."""
    found = {}
    for f in glob.glob(os.path.join(ROOT, "results", "**", "*.json"), recursive=True):
        try:
            with open(f) as fh:
                d = json.load(fh)
        except (ValueError, OSError):
            continue
        if isinstance(d, dict) and isinstance(d.get("trials"), list):
            env = d.get("environment") or {}
            names = {t.get("name") for t in d["trials"] if isinstance(t, dict)}
            found[f] = (d.get("suite", "?"), str(env.get("commit", ""))[:9], str(env.get("date", "")), names)
    return found


SUMMARY_FIELDS = ["name", "description", "shape", "dtype", "expectation", "observed", "passed", "judgement", "flags",
                  "duration_s", "gpu"]


def rounded(value):
    """`value` with every float at 5 significant digits (a ratio to 0.01%)."""
    if isinstance(value, float):
        return float(f"{value:.5g}")
    if isinstance(value, dict):
        return {k: rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [rounded(v) for v in value]
    return value


def summarize(f):
    """NAME.summary.json beside the record `f`: what a reader needs of each trial (see the module's text)."""
    with open(f) as fh:
        d = json.load(fh)
    summary = {"summary_of": os.path.basename(f) + ".xz", "environment": d.get("environment"),
               "suite": d.get("suite"),
               "trials": [{k: t[k] for k in SUMMARY_FIELDS if k in t} for t in d["trials"] if isinstance(t, dict)]}
    # One trial a line: small, and still read a trial at a time. The estimates' floats to 5 significant digits (the
    # record beside it keeps them whole); an expectation stays exact, since its window's edge may be the band's.
    # ptxas's warnings (one unused variable, repeated on every variant) say nothing of the measurement: they stay in
    # the record only.
    for t in summary["trials"]:
        if "observed" in t:
            t["observed"] = rounded(t["observed"])
        if "flags" in t:
            t["flags"] = [f for f in t["flags"] if ": ptxas " not in f]
    trials = summary.pop("trials")
    head = json.dumps(summary, separators=(",", ":"))[:-1]
    with open(f[: -len(".json")] + ".summary.json", "w") as fh:
        fh.write(head + ',"trials":[\n' + ",\n".join(json.dumps(t, separators=(",", ":")) for t in trials) + "\n]}\n")


def kept_plain(records):
    """The files of the newest big run of each suite (a run may be several shard files of one commit)."""
    groups = {}
    for f, (suite, commit, date, names) in records.items():
        # The shards of one run share a commit and a folder (what else ran at that commit sits elsewhere).
        g = groups.setdefault((suite, commit, os.path.dirname(f)), {"files": [], "names": set(), "date": ""})
        g["files"].append(f)
        g["names"] |= names
        g["date"] = max(g["date"], date)
    keep = set()
    # The whole-suite runs (what the before-stop check reads); a calibration or sweep record is only ever cited.
    for suite in {k[0] for k in groups} & {"ablations", "microbench"}:
        mine = [g for k, g in groups.items() if k[0] == suite]
        most = max(len(g["names"]) for g in mine)
        big = sorted((g for g in mine if len(g["names"]) >= 0.5 * most), key=lambda g: g["date"], reverse=True)
        for g in big[:1]:
            keep.update(g["files"])
    return keep


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dry-run", action="store_true")
    ap.add_argument("--most-mb", type=float, default=100.0)
    ap.add_argument("--old-rule", action="store_true")
    ap.add_argument("--pack-folders", action="store_true")
    ap.add_argument("--recompress", action="store_true")
    ap.add_argument("--retire-mb", type=float, default=0.0)
    args = ap.parse_args()
    records = runs()
    keep = kept_plain(records)
    named = named_anywhere() if args.old_rule else ""
    top = os.path.join(ROOT, "results", "h200")
    chosen, total = [], 0
    at_top = lambda f: os.sep not in os.path.relpath(f, top)
    for f in sorted(records, key=lambda f: (not at_top(f), -os.path.getsize(f))):
        rel = os.path.relpath(f, top)
        stem = os.path.basename(f)[: -len(".json")]
        if f.endswith(".summary.json"):
            # A summary stays while its run is the newest; then its run's .json.xz is all there is.
            if f not in keep and not args.dry_run:
                os.remove(f)
            continue
        if f in keep:
            if not args.dry_run:
                summarize(f)
        elif (args.old_rule and (at_top(f) or stem in named or rel in named)):
            continue
        size = os.path.getsize(f)
        if total + size > args.most_mb * 1e6:
            continue
        chosen.append(f)
        total += size
    print(f"{len(chosen)} records, {total / 1e6:.1f} MB of JSON to compress" + (" (dry run)" if args.dry_run else ""))
    if args.dry_run:
        return
    packed = compress_in_place(chosen)
    print(f"written as {packed / 1e6:.1f} MB of .json.xz")
    logs = glob.glob(os.path.join(ROOT, "results", "**", "*.log"), recursive=True)
    plain = sum(os.path.getsize(f) for f in logs)
    written = compress_in_place(logs)
    print(f"{len(logs)} logs, {plain / 1e6:.1f} MB, written as {written / 1e6:.1f} MB of .log.xz")
    if args.pack_folders:
        pack_folders(top, keep)
    if args.retire_mb > 0:
        retire(top, args.retire_mb)
    if args.recompress:
        recompress()


def compress_in_place(files):
    """Each file replaced by FILE.xz; the bytes written."""
    written = 0
    for f in files:
        with open(f, "rb") as fh:
            data = lzma.compress(fh.read(), preset=9 | lzma.PRESET_EXTREME)
        with open(f + ".xz", "wb") as fh:
            fh.write(data)
        written += len(data)
        os.remove(f)
    return written


def recompress():
    """Every .json.xz and .log.xz rewritten at xz's strongest preset where that is smaller (about 5%)."""
    before = after = 0
    for f in glob.glob(os.path.join(ROOT, "results", "**", "*.xz"), recursive=True):
        if f.endswith(".tar.xz"):
            continue
        with open(f, "rb") as fh:
            old = fh.read()
        new = lzma.compress(lzma.decompress(old), preset=9 | lzma.PRESET_EXTREME)
        before += len(old)
        if len(new) < len(old):
            with open(f, "wb") as fh:
                fh.write(new)
            old = new
        after += len(old)
    print(f"recompressed: {before / 1e6:.2f} MB -> {after / 1e6:.2f} MB")


def read_by_code():
    """The folders of results/h200/ that code, pins, tools or tests open by path, and the records they open, and
    those whose charts a doc shows (docs and comments may cite any other: results/h200/README.md says how to
    unpack one). A path in a string literal is read; one in a comment or a sentence is only cited."""
    files = subprocess.run(["git", "ls-files", "harness", "tools", "pins", "ablations/main.rs", "microbench",
                            "calibration", ".ci"], cwd=ROOT, capture_output=True, text=True).stdout.split()
    folders, records = set(), set()
    for f in files:
        with open(os.path.join(ROOT, f), errors="replace") as fh:
            text = fh.read()
        folders |= set(re.findall(r"""["'](?:\.\./)*/?results/h200/([^/"']+)/""", text))
        # A pin's run, by its folder ("1142956/suite/runs/ablations-...": the pins test finds each committed).
        if f.startswith("pins/"):
            folders |= set(re.findall(r'"([0-9a-f]{7})/', text))
        # A test's fixture, by its path under results/h200/ ("9a8c135/ablations-....json").
        for folder, rest in re.findall(r"""["'}](?:(?:\.\./)*results/h200/)?([0-9a-f]{7})/([^"']+\.json)""", text):
            folders.add(folder)
            records.add(os.path.join(folder, rest))
    # A chart a doc shows (`![...](../results/h200/FOLDER/x.svg)`) must be there to be seen.
    for f in subprocess.run(["git", "ls-files", "README.md", "docs"], cwd=ROOT, capture_output=True,
                            text=True).stdout.split():
        with open(os.path.join(ROOT, f), errors="replace") as fh:
            folders |= set(re.findall(r"!\[[^\]]*\]\((?:\.\./)*results/h200/([^/)]+)/", fh.read()))
    return folders, records


def pack_folders(top, keep):
    """Each folder no code reads and no kept run lives in, as one solid FOLDER.tar.xz (see the module's text)."""
    import io
    import tarfile
    named, _ = read_by_code()
    kept_in = {os.path.relpath(f, top).split(os.sep)[0] for f in keep}
    before = after = 0
    for name in sorted(os.listdir(top)):
        folder = os.path.join(top, name)
        if not os.path.isdir(folder) or name in named or name in kept_in:
            continue
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w") as tar:
            for dirpath, dirnames, filenames in sorted(os.walk(folder)):
                dirnames.sort()
                for fn in sorted(filenames):
                    path = os.path.join(dirpath, fn)
                    with open(path, "rb") as fh:
                        data = fh.read()
                    before += len(data)
                    arcname = os.path.relpath(path, top)
                    if fn.endswith(".xz"):
                        data, arcname = lzma.decompress(data), arcname[: -len(".xz")]
                    info = tarfile.TarInfo(arcname)
                    info.size, info.mtime = len(data), 0
                    tar.addfile(info, io.BytesIO(data))
        packed = lzma.compress(buf.getvalue(), preset=9 | lzma.PRESET_EXTREME)
        with open(folder + ".tar.xz", "wb") as fh:
            fh.write(packed)
        after += len(packed)
        shutil.rmtree(folder)
    print(f"folders packed: {before / 1e6:.1f} MB as stored, {after / 1e6:.1f} MB as .tar.xz")


def retire(top, most_mb):
    """The oldest packed commit folders out of the tree, up to `most_mb` MB, listed in ARCHIVED.md (module text)."""
    named, _ = read_by_code()
    # A doc that tells the reader to unpack `results/h200/NAME.tar.xz` needs that file in a clone (at 73770c5 and
    # 9358f28 this retired 2bc72f3, which docs/statistics.md unpacks; the doc-paths CPU test caught it).
    for f in subprocess.run(["git", "ls-files", "README.md", "docs", "ablations/HYPOTHESES.md"], cwd=ROOT,
                            capture_output=True, text=True).stdout.split():
        with open(os.path.join(ROOT, f), errors="replace") as fh:
            named |= set(re.findall(r"results/h200/([0-9a-f]{7,40})\.tar\.xz", fh.read()))
    git = lambda *a: subprocess.run(["git", *a], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    head = git("rev-parse", "--short=7", "HEAD")
    packed = []
    for f in glob.glob(os.path.join(top, "*.tar.xz")):
        name = os.path.basename(f)[: -len(".tar.xz")]
        date = git("log", "-1", "--format=%cI", name) if re.fullmatch(r"[0-9a-f]{7,40}", name) else ""
        # Only what HEAD holds can be brought back with `git show HEAD:...`.
        in_head = subprocess.run(["git", "cat-file", "-e", "HEAD:" + os.path.relpath(f, ROOT)], cwd=ROOT,
                                 capture_output=True).returncode == 0
        if date and name not in named and in_head:
            packed.append((date, name, f))
    index = os.path.join(top, "ARCHIVED.md")
    rows, freed = [], 0
    for date, name, f in sorted(packed):
        size = os.path.getsize(f)
        if freed + size > most_mb * 1e6:
            break
        rows.append(f"| `{name}` | {date[:10]} | {size / 1e3:.0f} KB | "
                    f"`git show {head}:results/h200/{name}.tar.xz \\| tar xJ -C results/h200` |")
        os.remove(f)
        freed += size
    if not rows:
        print("nothing retired")
        return
    if not os.path.exists(index):
        with open(index, "w") as fh:
            fh.write("# Run folders kept in git history, not in the tree\n\n"
                     "Each was a packed folder (FOLDER.tar.xz) that no code reads; `tools/archive-results.py --retire-mb`\n"
                     "took the oldest out of the tree to keep it under 30 MB. The command beside each brings it back as\n"
                     "results/h200/FOLDER/ (its records as plain JSON). Docs and hypotheses cite these folders by name.\n\n"
                     "| folder | its commit's date | packed | bring it back |\n|---|---|---|---|\n")
    with open(index, "a") as fh:
        fh.write("\n".join(rows) + "\n")
    print(f"retired {len(rows)} packed folders, {freed / 1e6:.1f} MB, into git history (results/h200/ARCHIVED.md)")


if __name__ == "__main__":
    main()
