#!/usr/bin/env python3
"""tests/hbase/phoenix/phoenix_diff.py: Apache Phoenix 5.2.1 as a differential peer of Rowan
on the same HBase (issue 18). The statements of three sources (phoenix_sources.py: the tour,
the sqllogictest files, a seeded random set) run through Phoenix in ONE JVM
(PhoenixRunner.java, compiled here with javac against the jars of $ROWAN_HBASE_DIR/lib,
each source in a Phoenix schema of its own, `schema` connection property) and through Rowan
(rowan_runner, each source or file in a namespace of its own), and the answers are compared:
numbers numerically (integers exactly, others to 1e-9 relative: Phoenix's DECIMAL against
Rowan's DOUBLE), NULLs as NULLs, a BOOLEAN as 0/1, rows sorted unless the query has a
top-level ORDER BY.

Outcomes, per statement: agreed (same rows, or both accepted a write); refused by Phoenix
(classified by Phoenix's error: the dialect); not comparable (a query of a table that an
earlier write or DDL refused by one engine only left different); a difference. A difference
whose origin is in the table of listed differences of docs/HBASE.md (between the markers
`<!-- phoenix-diff-listed:begin -->` and `:end -->`, first column the origin in backquotes)
is reported as listed; any other fails the run (exit status 1).

Usage: phoenix_diff.py [--reduced] [--sources tour,slt,random] --source-dir SRC
  --rowan-runner PATH [--work-dir DIR] [--seed N] [--keep]
Environment: ROWAN_HBASE_DIR (jars and conf; default /tmp/rowan-hbase), ROWAN_ZK (default
127.0.0.1:2181), ROWAN_HBASE_THRIFT (default 127.0.0.1:9090), ROWAN_SEED (the random set).
Not here: starting HBase (scripts/hbase-up.sh), the statements themselves.
"""
import argparse
import collections
import decimal
import os
import re
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import phoenix_sources as ps  # noqa: E402

JVM_FLAGS = """-XX:+IgnoreUnrecognizedVMOptions -Djava.net.preferIPv4Stack=true
 --add-modules jdk.unsupported -Dorg.apache.hbase.thirdparty.io.netty.tryReflectionSetAccessible=true
 --add-opens java.base/java.lang=ALL-UNNAMED --add-opens java.base/java.nio=ALL-UNNAMED
 --add-opens java.base/sun.nio.ch=ALL-UNNAMED --add-opens java.base/java.util=ALL-UNNAMED
 --add-opens java.base/java.util.concurrent=ALL-UNNAMED --add-opens java.base/java.io=ALL-UNNAMED
 --add-opens java.base/jdk.internal.ref=ALL-UNNAMED --add-opens java.base/java.lang.reflect=ALL-UNNAMED
 --add-exports java.base/jdk.internal.misc=ALL-UNNAMED""".split()


class Result:
    def __init__(self):
        self.rows, self.ok, self.count, self.err = [], False, 0, None


def parse_output(text):
    """The outcomes a runner printed, one Result per statement in order."""
    out, cur = [], None
    for line in text.split("\n"):
        if line == "#S":
            cur = Result()
            out.append(cur)
        elif line.startswith(("#CONNECTED", "#DROPPED")) or not line and cur is None:
            continue
        elif line.startswith("#OK "):
            cur.ok, cur.count = True, int(line[4:])
        elif line.startswith("#ERR "):
            cur.err = line[5:]
        elif cur is not None and line != "":
            cur.rows.append(line.split("\t"))  # every value is tagged: never an empty line
    return out


def run_process(cmd, stdin_text, env, log, timeout):
    """Runs cmd with stdin_text, returns its stdout; stderr goes to log."""
    with open(log, "w") as err:
        p = subprocess.run(cmd, input=stdin_text.encode("utf-8"), stdout=subprocess.PIPE,
                           stderr=err, env=env, timeout=timeout)
    if p.returncode != 0:
        raise RuntimeError("%s exited with %d (see %s)" % (cmd[0], p.returncode, log))
    return p.stdout.decode("utf-8", "replace")


# ---------------------------------------------------------------------------------------
# Comparison

def norm_value(v):
    """A canonical value: ('N',), ('n', Decimal) for numbers and booleans, or (tag, text)."""
    if v == "N":
        return ("N",)
    tag, _, body = v.partition(":")
    if tag in ("i", "f", "b"):
        try:
            return ("n", decimal.Decimal(body))
        except decimal.InvalidOperation:
            return ("f", body)  # Infinity, NaN
    return (tag, body)


AVG_STEP = decimal.Decimal("0.0001")


def values_equal(a, b, avg=False):
    """a Phoenix value, b Rowan's. avg: Phoenix's value may be an AVG that Phoenix cut to
    4 decimal places (rule:avg-scale): less than one step of 0.0001 apart, or one step and
    a rounding error (Phoenix sums in row order: a mean whose exact value is 28.1125 can come
    out 28.11249999... and be cut to 28.1124, where Rowan's exactly rounded sum gives
    28.112500000000001)."""
    if a == b:
        return True
    if a[0] == "n" and b[0] == "n":
        x, y = a[1], b[1]
        if x == y:
            return True
        scale = max(abs(x), abs(y))
        if abs(x - y) <= scale * decimal.Decimal("1e-9"):
            return True
        return (avg and x.as_tuple().exponent >= -4 and
                abs(x - y) <= AVG_STEP + scale * decimal.Decimal("1e-9"))
    return False


def sort_key(row):
    return [(v[0], str(v[1]) if len(v) > 1 else "") for v in row]


def rows_equal(pr, rr, ordered, avg=False):
    """(equal, why) for two lists of raw rows (avg: as values_equal)."""
    p = [[norm_value(v) for v in row] for row in pr]
    r = [[norm_value(v) for v in row] for row in rr]
    if len(p) != len(r):
        return False, "%d rows against %d" % (len(p), len(r))
    if p and len(p[0]) != len(r[0]):
        return False, "%d columns against %d" % (len(p[0]), len(r[0]))
    if not ordered:
        p, r = sorted(p, key=sort_key), sorted(r, key=sort_key)
    for i, (x, y) in enumerate(zip(p, r)):
        if len(x) != len(y) or not all(values_equal(a, b, avg) for a, b in zip(x, y)):
            if ordered:
                ps_, rs_ = sorted(p, key=sort_key), sorted(r, key=sort_key)
                if all(len(a) == len(b) and all(values_equal(u, v, avg) for u, v in zip(a, b))
                       for a, b in zip(ps_, rs_)):
                    return False, "same rows, another order (row %d)" % (i + 1)
            return False, "row %d: Phoenix %s, Rowan %s" % (i + 1, "\t".join(pr[i]) if ordered
                                                          else x, "\t".join(rr[i]) if ordered else y)
    return True, ""


def refusal_reason(err, tainted_hit):
    """Phoenix's refusal in a few words: its error code and the gist of the message."""
    code, _, msg = err.partition(" ")
    if tainted_hit and code in ("1012", "504", "1013", "722"):
        return "follows an earlier refusal (the table, view or column is missing)"
    m = re.search(r'Encountered "([^"]*)"', msg)
    if code in ("601", "602", "603", "604") and m:
        return "syntax: %s (Encountered \"%s\")" % (code, m.group(1).strip()[:24])
    m = re.search(r"ERROR (\d+) \([0-9A-Z]+\): ([^.]*)", msg)
    if m:
        gist = m.group(2)
        f = re.search(r"functionName=(\w+)", msg)
        if f:
            gist += " " + f.group(1)
        return "%s %s" % (m.group(1), gist[:60])
    return msg.split(":", 1)[0][:60]


TABLE_RE = re.compile(r"(?i)\b(?:TABLE|INTO|FROM|VIEW|ON|INDEX|SEQUENCE|JOIN|UPDATE)\s+"
                      r"(?:IF\s+(?:NOT\s+)?EXISTS\s+)?([A-Za-z_][\w.$]*)")


def names_in(sql):
    return {n.upper() for n in TABLE_RE.findall(sql)}


def load_listed(doc):
    """The listed differences of docs/HBASE.md: {(where, statement): reason}. A statement
    cell ending in "..." matches the statements it begins; an empty one, every statement
    (the rules: `rule:NAME`)."""
    listed, inside = {}, False
    with open(doc, encoding="utf-8") as f:
        for line in f:
            if "phoenix-diff-listed:begin" in line:
                inside = True
            elif "phoenix-diff-listed:end" in line:
                inside = False
            elif inside and line.startswith("| `"):
                cells = [c.strip() for c in line.strip().strip("|").split("|")]
                listed[(cells[0].strip("`"), cells[1].strip("`"))] = cells[-1]
    return listed


def listed_key(listed, where, sql):
    for (w, stmt) in listed:
        if w != where:
            continue
        if stmt == sql or stmt.endswith("...") and sql.startswith(stmt[:-3]):
            return (w, stmt)
    return None


def split_top(text):
    """text split at commas outside parentheses and quotes."""
    out, cur, depth, q = [], [], 0, None
    for c in text:
        if q:
            if c == q:
                q = None
        elif c in "'\"":
            q = c
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
            continue
        cur.append(c)
    out.append("".join(cur).strip())
    return out


def note_columns(sql, columns):
    """A CREATE TABLE's column names in order, into columns[TABLE]."""
    m = re.match(r"(?is)^CREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?([\w.]+)\s*\((.*)\)", sql)
    if m:
        cols = []
        for d in split_top(m.group(2)):
            w = d.split()
            if w and w[0].upper() not in ("CONSTRAINT", "PRIMARY"):
                cols.append(w[0].split(".")[-1].strip('"').upper())
        columns[m.group(1).upper()] = cols


def empty_columns(sql, columns):
    """The columns an UPSERT ... VALUES writes '' to ({'*'} when it cannot tell)."""
    m = re.match(r"(?is)^UPSERT\s+INTO\s+([\w.]+)\s*(?:\(([^)]*)\))?\s*VALUES\s*\((.*)\)$", sql)
    if not m:
        return {"*"}
    cols = ([c.strip().split(".")[-1].strip('"').upper() for c in m.group(2).split(",")]
            if m.group(2) else columns.get(m.group(1).upper(), []))
    vals = split_top(m.group(3))
    if len(cols) != len(vals):
        return {"*"}
    return {c for c, v in zip(cols, vals) if v == "''"}


def rule_of(s, p, r, empty_tables):
    """The documented dialect difference a query's mismatch follows from, or None:
    avg-scale (Phoenix cuts AVG to 4 decimal places), desc-nulls (Phoenix puts NULLs first
    under DESC: the same rows in another order, or any rows under a LIMIT or OFFSET, DESC
    said without NULLS FIRST/LAST), like-backslash (Phoenix's LIKE takes a
    backslash as its escape without ESCAPE: a LIKE pattern holding one), not-is-not-null
    (Phoenix drops every row of `NOT (c IS NOT NULL)`),
    empty-string (Phoenix reads '' as NULL: a '' in the statement, or a column that a ''
    was written to named in it, or * of a table that one was written to), concat-null (Phoenix's || skips a NULL: the statement has ||)."""
    up = s.sql.upper()
    if "AVG(" in up and rows_equal(p.rows, r.rows, s.ordered, True)[0]:
        return "rule:avg-scale"
    if (s.ordered and re.search(r"\bDESC\b(?!\s+NULLS)", up) and
            (rows_equal(p.rows, r.rows, False)[0] or re.search(r"\b(LIMIT|OFFSET)\b", up))):
        return "rule:desc-nulls"
    if re.search(r"LIKE\s+'[^']*\\", s.sql):
        return "rule:like-backslash"
    if re.search(r"(?i)NOT\s*\(\s*\w+\s+IS\s+NOT\s+NULL\s*\)", s.sql):
        return "rule:not-is-not-null"
    words = set(re.findall(r"\w+", up))
    for table, cols in empty_tables.items():
        if table in names_in(s.sql) and ("*" in cols or "*" in s.sql or words & cols):
            return "rule:empty-string"
    if "''" in s.sql:
        return "rule:empty-string"
    if "||" in s.sql:
        return "rule:concat-null"
    return None


class Tally:
    def __init__(self):
        self.n = collections.Counter()
        self.refused = collections.Counter()
        self.listed = collections.Counter()
        self.diffs = []


def compare(groups, pres, rres, listed, tally):
    """Compares outcomes group by group; groups: [(source, name, [Stmt])]."""
    k = 0
    for source, name, stmts in groups:
        tainted, empty_tables, columns, links, txn = set(), {}, {}, {}, False
        where = "slt:%s.test" % name if source == "slt" else source
        for s in stmts:
            p, r = pres[k], rres[k]
            k += 1
            t = tally[source]
            t.n["statements"] += 1
            names = names_in(s.sql)
            if re.match(r"(?i)^CREATE\s+VIEW\b", s.sql):  # a view and its tables: one group
                group = set(names)
                for n in names:
                    group |= links.get(n, set())
                for n in group:
                    links[n] = group
            for n in list(names):
                names |= links.get(n, set())
            hit = bool(names & tainted)
            if hit and not s.is_query:
                tainted |= names  # a write reading a table that differs makes its own differ
            head = s.sql.split(None, 1)[0].upper() if s.sql.strip() else ""
            if head in ("BEGIN", "COMMIT", "ROLLBACK"):
                if p.err is not None and r.err is None:
                    txn = head == "BEGIN"  # Phoenix writes at once what Rowan may roll back
            elif txn and not s.is_query:
                tainted |= names
            note_columns(s.sql, columns)
            if not s.is_query and "''" in s.sql:
                for n in names:
                    empty_tables.setdefault(n, set()).update(empty_columns(s.sql, columns))
            if s.expect_error:  # Rowan's own error records: run for their effect only
                t.n["error records (not compared)"] += 1
                if p.err is None and r.err is not None and not s.is_query:
                    tainted |= names
                continue
            if p.err is not None:
                reason = refusal_reason(p.err, hit)
                t.refused[reason] += 1
                t.n["refused by Phoenix"] += 1
                if r.err is None and not s.is_query:
                    tainted |= names
                continue
            rule = None
            if r.err is not None:
                if hit:
                    t.n["not comparable"] += 1
                    continue
                if not s.is_query:
                    tainted |= names
                why = "Rowan refused: " + r.err[:200]
            elif s.is_query:
                eq, why = rows_equal(p.rows, r.rows, s.ordered)
                if (not eq and not s.ordered and re.search(r"(?i)\b(LIMIT|OFFSET)\b", s.sql)
                        and len(p.rows) == len(r.rows)):
                    eq = True  # LIMIT without ORDER BY: any rows will do, only the count counts
                if eq:
                    t.n["agreed"] += 1
                    continue
                if hit:
                    t.n["not comparable"] += 1
                    continue
                rule = rule_of(s, p, r, empty_tables)
            else:
                t.n["agreed"] += 1
                continue
            key = listed_key(listed, where, s.sql) or (rule and listed_key(listed, rule, ""))
            if key:
                t.n["listed differences"] += 1
                t.listed[key[0] if not key[1] else "%s %s" % (key[0], key[1][:50])] += 1
                continue
            if rule:
                why += " (%s is not listed)" % rule
            t.n["unlisted differences"] += 1
            t.diffs.append((s, why, p, r))


# ---------------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reduced", action="store_true")
    ap.add_argument("--sources", default="tour,slt,random")
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--rowan-runner", required=True)
    ap.add_argument("--work-dir", default="/tmp/phoenix_diff")
    ap.add_argument("--seed", type=int, default=int(os.environ.get("ROWAN_SEED", "20261130")))
    ap.add_argument("--slt", default="", help="comma-separated .test names (default by --reduced)")
    ap.add_argument("--verbose", action="store_true")
    a = ap.parse_args()
    src = os.path.abspath(a.source_dir)
    hdir = os.environ.get("ROWAN_HBASE_DIR", "/tmp/rowan-hbase")
    zk = os.environ.get("ROWAN_ZK", "127.0.0.1:2181")
    gw = os.environ.get("ROWAN_HBASE_THRIFT", "127.0.0.1:9090")
    os.makedirs(a.work_dir, exist_ok=True)
    t0 = time.time()

    # the statements, grouped: one Phoenix schema and one Rowan namespace per group
    groups = []
    wanted = a.sources.split(",")
    if "tour" in wanted:
        groups.append(("tour", "tour", ps.tour(src, a.reduced)))
    if "slt" in wanted:
        paths = ps.slt_files(src, a.reduced)
        if a.slt:
            names = a.slt.split(",")
            paths = [p for p in ps.slt_files(src, False) if os.path.basename(p)[:-5] in names]
        for p in paths:
            groups.append(("slt", os.path.basename(p)[:-5], ps.slt_file(p)))
    if "random" in wanted:
        rows, queries = (60, 120) if a.reduced else (300, 600)
        groups.append(("random", "random", ps.RandomSet(a.seed, rows, queries).statements()))

    run_id = "%d_%d" % (os.getpid(), int(t0) % 100000)
    pin, rin = [], []
    for i, (_, name, stmts) in enumerate(groups):
        schema = "PHX%s_%d" % (run_id, i)
        uri = "hbase://%s/phx_%s_%d" % (gw, run_id, i)
        pin.append("#CONNECT " + schema)
        rin.append("#CONNECT " + uri)
        for s in stmts:
            pin.append(s.sql)
            rin.append(s.sql)
        pin.append("#DROPSCHEMA " + schema)
        rin.append("#DROPNS " + uri)
    pin.append("")
    rin.append("")

    # Phoenix's runner, compiled here (it needs only java.sql)
    classes = os.path.join(a.work_dir, "classes")
    os.makedirs(classes, exist_ok=True)
    subprocess.run(["javac", "-d", classes,
                    os.path.join(os.path.dirname(os.path.abspath(__file__)), "PhoenixRunner.java")],
                   check=True)
    env = dict(os.environ, HADOOP_USER_NAME="root")
    jcmd = (["java"] + JVM_FLAGS +
            ["-Dlog4j2.configurationFile=%s/conf/log4j2.properties" % hdir,
             "-Drowan.log.file=%s/phoenix_diff.log" % a.work_dir,
             "-cp", "%s:%s/conf:%s/lib/*" % (classes, hdir, hdir), "PhoenixRunner", zk])
    outs = {}

    def go(key, cmd, text):
        try:
            outs[key] = run_process(cmd, text, env, os.path.join(a.work_dir, key + ".err"), 3600)
        except Exception as e:  # reported below
            outs[key] = e

    th = [threading.Thread(target=go, args=("phoenix", jcmd, "\n".join(pin))),
          threading.Thread(target=go, args=("rowan", [a.rowan_runner], "\n".join(rin)))]
    for t in th:
        t.start()
    for t in th:
        t.join()
    for key in ("phoenix", "rowan"):
        if isinstance(outs[key], Exception):
            print("phoenix_diff: %s: %s" % (key, outs[key]), file=sys.stderr)
            return 2
        with open(os.path.join(a.work_dir, key + ".out"), "w", encoding="utf-8") as f:
            f.write(outs[key])
    pres, rres = parse_output(outs["phoenix"]), parse_output(outs["rowan"])
    total = sum(len(g[2]) for g in groups)
    if len(pres) != total or len(rres) != total:
        print("phoenix_diff: %d statements, Phoenix answered %d, Rowan %d" %
              (total, len(pres), len(rres)), file=sys.stderr)
        return 2

    listed = load_listed(os.path.join(src, "docs", "HBASE.md"))
    tally = collections.defaultdict(Tally)
    compare(groups, pres, rres, listed, tally)

    bad = 0
    dump = open(os.path.join(a.work_dir, "differences.txt"), "w", encoding="utf-8")
    for source in ("tour", "slt", "random"):
        if source not in tally:
            continue
        t = tally[source]
        print("%-6s %s" % (source, ", ".join("%s %d" % kv for kv in sorted(t.n.items()))))
        for reason, n in t.refused.most_common(None if a.verbose else 12):
            print("         refused %4d  %s" % (n, reason))
        for key, n in sorted(t.listed.items()):
            print("         listed  %4d  %s" % (n, key))
        for s, why, p, r in t.diffs:
            bad += 1
            print("  DIFFERENCE %s: %s\n    %s" % (s.origin, why, s.sql[:300]))
            dump.write("== %s\n%s\n-- Phoenix %s\n%s\n-- Rowan %s\n%s\n" % (
                s.origin, s.sql, p.err or "", "\n".join("\t".join(x) for x in p.rows),
                r.err or "", "\n".join("\t".join(x) for x in r.rows)))
    print("phoenix_diff: %d statements in %.0f s, %d unlisted differences" %
          (total, time.time() - t0, bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
