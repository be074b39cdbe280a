#!/usr/bin/env python3
"""Regenerates the XLA part of lua/catalog.lua and every entry's jax release range.

Run by hand (not in CI) when a new jax release is out:

    python3 tools/catalog_gen.py --jax ~/src/jax --xla ~/src/xla            # report only
    python3 tools/catalog_gen.py --jax ~/src/jax --xla ~/src/xla --write    # rewrite the file

--jax is a jax-ml/jax clone with its release tags (jax-vX.Y.Z); --xla an openxla/xla clone
with history (a shallow clone lacks the pinned commits: those releases count as unknown).
For each jax release from --from on, the XLA commit it pins is read from
third_party/xla/revision.bzl (older releases: third_party/xla/workspace.bzl), and the flag
names from xla/debug_options_flags.cc at that commit (every `tsl::Flag("name", ...)`).
The environment variables jax owns (JAX_*, XLA_PYTHON_CLIENT_*, XLA_CLIENT_MEM_FRACTION)
are looked up in the jax tree at the tag itself (jax/, jaxlib/).

What it writes (docs/CATALOG.md, "Regenerating"):
  * `jax = { ... }` on every entry whose name it could follow: `first`/`last` are the first
    and last release that has the name, `after`/`before` the nearest release known to lack
    it where the releases in between could not be read; nothing where the name is present
    in every release read (no bound to check against).
  * new section-3 entries for flags of the newest pin that the catalog lacks: name, type
    from the setter, default from DefaultDebugOptionsIgnoringFlags(), the help text's first
    sentence as `desc` (reword it by hand), `source = "xla"`.
Entries are never deleted: an experiment written for an older jaxlib must still validate.
Only the standard library is used.
"""

import argparse
import re
import subprocess
import sys

FLAG_RE = re.compile(r'tsl::Flag\(\s*"([a-z0-9_]+)"')
PIN_RE = re.compile(r'XLA_COMMIT\s*=\s*"([0-9a-f]{40})"')
TAG_RE = re.compile(r'^jax-v(\d+(?:\.\d+)+)$')
ENTRY_RE = re.compile(r'^  \{ name = "([^"]+)", kind = "(flag|env)"')
JAX_OWNED = re.compile(r'^(JAX_|XLA_PYTHON_CLIENT_|XLA_CLIENT_MEM_FRACTION$)')


def git(repo, *args, check=True):
    r = subprocess.run(["git", "-C", repo, *args], capture_output=True, text=True)
    if check and r.returncode != 0:
        raise SystemExit("git %s: %s" % (" ".join(args), r.stderr.strip()))
    return r.stdout if r.returncode == 0 else None


def vkey(v):
    return tuple(int(x) for x in v.split("."))


def releases(jax, since):
    """[(version, tag)] of the jax release tags from SINCE on, oldest first."""
    out = []
    for tag in git(jax, "tag", "--list", "jax-v*").split():
        m = TAG_RE.match(tag)
        if m and vkey(m.group(1)) >= vkey(since):
            out.append((m.group(1), tag))
    return sorted(out, key=lambda p: vkey(p[0]))


def pin(jax, tag):
    """The XLA commit jax TAG builds against, or None."""
    for path in ("third_party/xla/revision.bzl", "third_party/xla/workspace.bzl"):
        text = git(jax, "show", "%s:%s" % (tag, path), check=False)
        m = text and PIN_RE.search(text)
        if m:
            return m.group(1)
    return None


def xla_source(xla, commit):
    if not xla or not commit:
        return None
    return git(xla, "show", "%s:xla/debug_options_flags.cc" % commit, check=False)


def grep(repo, rev, pats, paths):
    r = subprocess.run(["git", "-C", repo, "grep", "-q", "-F", *pats, rev, "--", *paths],
                       capture_output=True)
    return r.returncode == 0


def env_present(jax, xla, tag, commit, name):
    """Whether the release names the variable NAME: True, False, or None (unknown).
    JAX_* variables are jax config options (jax/_src/config.py, as 'jax_...'); the
    XLA_PYTHON_CLIENT_* ones are read by xla_client.py, which lived in openxla/xla
    (xla/python/) until jaxlib took it over, so the pinned XLA tree is asked too."""
    pats = ["-e", name]
    if name.startswith("JAX_"):
        pats += ["-e", "'%s'" % name.lower(), "-e", '"%s"' % name.lower()]
        return grep(jax, tag, pats, ["jax", "jaxlib"])
    if grep(jax, tag, pats, ["jax", "jaxlib"]):
        return True
    if xla and commit and git(xla, "cat-file", "-e", commit, check=False) is not None:
        return grep(xla, commit, pats, ["xla/python"])
    return None


def presence(rows):
    """ROWS: [(version, True/False/None)] oldest first -> the range table, or None when the
    name is in no release read. A name that comes, goes and comes back keeps its outer ends."""
    have = [i for i, (_, p) in enumerate(rows) if p]
    if not have:
        return None
    rng, lo, hi = {}, have[0], have[-1]
    j = lo - 1
    while j >= 0 and rows[j][1] is None:
        j -= 1
    if j >= 0:
        if j == lo - 1:
            rng["first"] = rows[lo][0]
        else:
            rng["after"] = rows[j][0]
    j = hi + 1
    while j < len(rows) and rows[j][1] is None:
        j += 1
    if j < len(rows):
        if j == hi + 1:
            rng["last"] = rows[hi][0]
        else:
            rng["before"] = rows[j][0]
    return rng


def lua_range(rng):
    keys = [k for k in ("first", "after", "last", "before") if k in rng]
    return "{ %s }" % ", ".join('%s = "%s"' % (k, rng[k]) for k in keys)


# ---- new section-3 entries from the newest source -----------------------------------------

SETTER_TYPE = {"bool": "bool", "int32": "int", "int64": "int", "uint64": "int", "float": "float",
               "double": "float", "string": "string"}


def flag_calls(src):
    """{name: (type, help)} from the tsl::Flag(...) calls of debug_options_flags.cc."""
    out = {}
    for m in FLAG_RE.finditer(src):
        body = src[m.end():m.end() + 1500]
        setter = re.search(r'(\w+?)_setter_for', body)
        typ = SETTER_TYPE.get(setter.group(1), "string") if setter else "string"
        if re.search(r'enum|Enum', body[:300]):
            typ = "enum"
        helps = re.findall(r'"((?:[^"\\]|\\.)*)"', body[:body.find("));") + 1 or 800])
        text = " ".join(h for h in helps if len(h) > 3)
        first = re.split(r'(?<=[.!?])\s', text.strip(), maxsplit=1)[0] if text else ""
        out[m.group(1)] = (typ, first)
    return out


def defaults(src):
    out = {}
    for m in re.finditer(r'opts\.set_(xla_[a-z0-9_]+)\(\s*([^;]*?)\);', src):
        v = m.group(2).strip()
        if v in ("true", "false") or re.fullmatch(r'-?\d+', v):
            out[m.group(1)] = v
        elif re.fullmatch(r'"[^"]*"', v):
            out[m.group(1)] = v
    return out


def backend(name):
    for p, b in (("xla_gpu_", "gpu"), ("xla_cpu_", "cpu"), ("xla_tpu_", "tpu")):
        if name.startswith(p):
            return b
    return "any"


def new_entry(name, typ, help_text, default):
    lines = ['  { name = "%s", kind = "flag", backend = "%s", type = "%s",' %
             (name, backend(name), typ)]
    if default is not None and typ != "enum":
        lines.append("    default = %s," % default)
    desc = help_text.replace("\\", "").replace('"', "'") or "(no help text)"
    lines.append('    desc = "%s",' % desc)
    lines.append('    source = "xla",')
    lines.append("  },")
    return lines


# ---- the catalog file ----------------------------------------------------------------------

def split_entries(lines):
    """[(name or None, [lines])]: entry blocks and the lines between them, in order."""
    out, i = [], 0
    while i < len(lines):
        m = ENTRY_RE.match(lines[i])
        if not m:
            out.append((None, [lines[i]]))
            i += 1
            continue
        j = i
        while lines[j] != "  },":
            j += 1
        out.append((m.group(1), lines[i:j + 1]))
        i = j + 1
    return out


def set_range(block, rng):
    block = [l for l in block if not l.startswith("    jax = ")]
    if rng:
        at = next(i for i, l in enumerate(block) if l.startswith("    source = "))
        block.insert(at, "    jax = %s," % lua_range(rng))
    return block


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--jax", required=True, help="jax-ml/jax clone with release tags")
    ap.add_argument("--xla", help="openxla/xla clone with history")
    ap.add_argument("--catalog", default="lua/catalog.lua")
    ap.add_argument("--from", dest="since", default="0.4.20", help="oldest jax release read")
    ap.add_argument("--write", action="store_true", help="rewrite the catalog in place")
    a = ap.parse_args()

    rels = releases(a.jax, a.since)
    if not rels:
        raise SystemExit("no jax-vX.Y.Z tags from %s on in %s" % (a.since, a.jax))
    flags_at, newest = {}, None
    for v, tag in rels:
        src = xla_source(a.xla, pin(a.jax, tag))
        flags_at[v] = set(FLAG_RE.findall(src)) if src else None
        if src:
            newest = src
        print("jax %-9s xla %s %s" % (v, (pin(a.jax, tag) or "?")[:12],
                                      "%d flags" % len(flags_at[v]) if src else "unread"),
              file=sys.stderr)

    lines = open(a.catalog).read().split("\n")
    blocks = split_entries(lines)
    names = {n for n, _ in blocks if n}
    changed = 0
    for k, (name, block) in enumerate(blocks):
        if not name:
            continue
        kind = ENTRY_RE.match(block[0]).group(2)
        if kind == "flag" and a.xla:
            rows = [(v, None if flags_at[v] is None else name in flags_at[v]) for v, _ in rels]
        elif kind == "env" and JAX_OWNED.match(name):
            rows = [(v, env_present(a.jax, a.xla, tag, pin(a.jax, tag), name))
                    for v, tag in rels]
        else:
            continue
        rng = presence(rows)
        if rng is None and any(p is not None for _, p in rows):
            print("%s: in no release read (kept as it is)" % name, file=sys.stderr)
            continue
        new = set_range(block, rng or {})
        if new != block:
            blocks[k] = (name, new)
            changed += 1

    added = []
    if newest:
        calls, defs = flag_calls(newest), defaults(newest)
        for name in sorted(set(calls) - names):
            typ, help_text = calls[name]
            added.append((name, new_entry(name, typ, help_text, defs.get(name))))
    if added:
        start = next(i for i, (n, b) in enumerate(blocks)
                     if n is None and b[0].startswith("  -- 3."))
        sec = [i for i in range(start + 1, len(blocks)) if blocks[i][0]]
        for name, block in added:
            rows = [(v, None if flags_at[v] is None else name in flags_at[v]) for v, _ in rels]
            block = set_range(block, presence(rows) or {})
            at = next((i for i in sec if blocks[i][0] > name), sec[-1] + 1)
            blocks.insert(at, (name, block))
            sec = [i for i in range(start + 1, len(blocks)) if blocks[i][0]]

    print("%d ranges changed, %d flags added (%s)" % (changed, len(added),
          ", ".join(n for n, _ in added) or "none"))
    if a.write:
        with open(a.catalog, "w") as f:
            f.write("\n".join(l for _, b in blocks for l in b))


if __name__ == "__main__":
    main()
