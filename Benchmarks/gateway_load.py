#!/usr/bin/env python3
"""The gateway (`herald serve`) beside `herald send` straight to the mock, in one run.

    Benchmarks/gateway-load [ROUNDS] [COUNT] [MEMORY_COUNT]

Run through the wrapper (it builds the release binary and prints the machine). Every phase sends
to one `herald mock` over TLS with a registered ES256 key (every request verified, linted,
rendered and recorded), the same 1,024-byte alert to COUNT distinct device tokens:

- ceiling: `herald send --tokens-file` (one process, the client library, no database);
- submit: POST /v1/apps/bench/notifications with 10,000 tokens per request to a process started
  with --api-only (nothing is sent meanwhile): tokens accepted (committed) per second;
- deliver: the queue of COUNT deliveries, then the workers start; from their start until every
  delivery is final: deliveries per second. SQLite (one process), PostgreSQL with one process
  and with two processes on the same database.

Rounds alternate the phases; medians are reported, with the CPU each process spent per push
(herald send and the mock; the gateway, PostgreSQL's backends and the mock) from /proc.
`--only pg1,pg2` runs herald send and only the phases named (sqlite, pg1, pg2, pg4). Then MEMORY_COUNT deliveries (default
1,000,000) through one SQLite process, its resident memory sampled every second.

    Benchmarks/gateway-load --traces [ROUNDS] [COUNT]

The cost of traces instead: the delivery phase (SQLite, and PostgreSQL with one process) with
no exporter, exporting every span to a collector that answers at once (an OTLP/HTTP sink in this
script), and exporting to a collector that accepts connections and never answers; the three
alternate in each round, and the spans the gateway counted (exported, dropped, failed) are read
from its /metrics before it stops.
"""
import json, os, re, resource, shutil, statistics, subprocess, sys, tempfile, threading, time, urllib.request

traces_mode = "--traces" in sys.argv
if traces_mode:
    sys.argv.remove("--traces")
# --only pg1,pg2: herald send and only the delivery phases named (sqlite, pg1, pg2, pg4).
phases = {"sqlite", "pg1", "pg2", "pg4"}
if "--only" in sys.argv:
    at = sys.argv.index("--only")
    if at + 1 >= len(sys.argv):
        raise SystemExit("--only needs a list of phases: sqlite, pg1, pg2, pg4 (for example --only pg1,pg2)")
    phases = set(sys.argv[at + 1].split(","))
    unknown = phases - {"sqlite", "pg1", "pg2", "pg4"}
    if unknown:
        raise SystemExit(f"--only: no phase {', '.join(sorted(unknown))}; the phases are sqlite, pg1, pg2, pg4")
    del sys.argv[at:at + 2]
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# HERALD=/path/to/herald measures that binary (a release build) instead of this checkout's.
herald = os.path.abspath(os.environ.get("HERALD") or os.path.join(root, ".build", "release", "herald"))
rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
count = int(sys.argv[2]) if len(sys.argv) > 2 else 100_000
memory_count = int(sys.argv[3]) if len(sys.argv) > 3 else 1_000_000
postgres_admin = os.environ.get("BENCH_POSTGRES_URL", "postgres://herald:herald@127.0.0.1:5432/herald")
ADMIN = "gateway-benchmark-admin-key-0123"
PER_REQUEST = 10_000
work = tempfile.mkdtemp(prefix="herald-gateway-bench-")
children = []
cleanup = []


def start(arguments, marker, env=None):
    """Starts a program; waits for `marker` in its output; returns (process, output so far)."""
    log = open(os.path.join(work, f"log-{len(children)}.txt"), "w+")
    process = subprocess.Popen(arguments, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})}, cwd=work)
    children.append(process)
    deadline = time.time() + 60
    while time.time() < deadline:
        log.seek(0)
        text = log.read()
        if marker in text:
            return process, text
        if process.poll() is not None:
            raise SystemExit(f"{arguments[:2]} exited: {text}")
        time.sleep(0.05)
    raise SystemExit(f"{arguments[:2]} did not start: {text}")


def stop(process):
    process.terminate()
    try:
        process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()


def call(port, method, path, body=None):
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", method=method, data=None if body is None else json.dumps(body).encode(),
                                     headers={"Authorization": f"Bearer {ADMIN}", "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=300) as answer:
        return json.loads(answer.read() or b"null")


def psql(url, sql):
    subprocess.run(["psql", url, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-c", sql], check=True, timeout=120, capture_output=True)


def fresh_postgres(name):
    psql(postgres_admin, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    psql(postgres_admin, f"CREATE DATABASE {name}")
    return postgres_admin.split("?")[0].rsplit("/", 1)[0] + f"/{name}?sslmode=disable"


def serve(database, *extra):
    flag = ["--db", database] if not database.startswith("postgres") else ["--postgres", database]
    process, text = start([herald, "serve", *flag, "--port", "0", "--admin-key-env", "BENCH_ADMIN", "--log", "error", *extra],
                          "metrics", env={"BENCH_ADMIN": ADMIN})
    return process, int(re.search(r"API on http://127\.0\.0\.1:(\d+)/", text).group(1))


def cpu_seconds(pid):
    """A process's CPU time so far (user and system), or 0 once it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (FileNotFoundError, ProcessLookupError, IndexError, ValueError):
        return 0.0


def postgres_cpu():
    """The CPU time of every PostgreSQL server process alive now, by pid."""
    found = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/comm") as comm:
                    if comm.read().strip() == "postgres":
                        found[int(entry)] = cpu_seconds(int(entry))
            except (FileNotFoundError, ProcessLookupError):
                pass
    return found


def rss_kb(pid, field="VmRSS"):
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except FileNotFoundError:
        return 0
    return 0


# The mock, a key, the payload and the tokens.
subprocess.run(["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", os.path.join(work, "key.p8")], check=True, capture_output=True)
key = open(os.path.join(work, "key.p8")).read()
prefix, suffix = '{"aps":{"alert":{"title":"Benchmark","body":"', '"},"badge":1,"sound":"default"},"id":"12345"}'
payload_text = prefix + "x" * (1024 - len(prefix) - len(suffix)) + suffix
open(os.path.join(work, "payload.json"), "w").write(payload_text)
payload = json.loads(payload_text)
mock, text = start([herald, "mock", "--port", "0", "--api-port", "0", "--channel-port", "0", "--ca-out", "ca.pem",
                    "--key", "key.p8", "--key-id", "ABC123DEFG", "--team-id", "DEF123GHIJ"], "/3/device/")
mock_port = int(re.search(r"APNs on https://127\.0\.0\.1:(\d+)", text).group(1))
ca = open(os.path.join(work, "ca.pem")).read()
app = {"id": "bench", "bundleId": "com.example.app", "environment": "sandbox",
       "server": {"host": "127.0.0.1", "port": mock_port, "caCertificate": ca},
       "token": {"key": key, "keyId": "ABC123DEFG", "teamId": "DEF123GHIJ"}, "concurrency": 1000}
serial = [0]


def tokens(n):
    serial[0] += 1
    return ["b1" * 26 + format(serial[0], "04x") + format(i, "08x") for i in range(n)]


ceiling_cpu = []  # per herald send run: CPU per push of the sender and of the mock, in µs


def ceiling():
    listed = tokens(count)
    children_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    mock_before = cpu_seconds(mock.pid)
    path = os.path.join(work, "tokens.txt")
    open(path, "w").write("\n".join(listed) + "\n")
    began = time.perf_counter()
    run = subprocess.run([herald, "send", "payload.json", "--tokens-file", path, "--topic", "com.example.app", "--host", "127.0.0.1",
                          "--port", str(mock_port), "--ca-file", "ca.pem", "--p8", "key.p8", "--key-id", "ABC123DEFG", "--team-id", "DEF123GHIJ"],
                         cwd=work, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=1800)
    elapsed = time.perf_counter() - began
    children_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    client = (children_after.ru_utime + children_after.ru_stime) - (children_before.ru_utime + children_before.ru_stime)
    ceiling_cpu.append({"client": client / count * 1e6, "mock": (cpu_seconds(mock.pid) - mock_before) / count * 1e6})
    accepted = run.stdout.count(b" accepted")
    if run.returncode != 0 or accepted != count:
        print(f"   herald send: exit {run.returncode}, {accepted} accepted: {run.stderr[-400:]}", file=sys.stderr)
    return count / elapsed


def submit(port, n):
    """Submits n tokens in requests of PER_REQUEST; returns (tokens per second, job ids)."""
    listed = tokens(n)
    jobs = []
    began = time.perf_counter()
    for start_index in range(0, n, PER_REQUEST):
        answer = call(port, "POST", "/v1/apps/bench/notifications", {"payload": payload, "tokens": listed[start_index:start_index + PER_REQUEST]})
        jobs.append(answer["id"])
    return n / (time.perf_counter() - began), jobs


def wait_done(port, jobs, sample=None):
    """Polls until every job is done; returns the seconds it took and the final counts.

    One job is asked about at a time, the oldest not yet done (jobs finish about in the order
    they were queued), ten times a second: a job's summary counts its deliveries by state, so
    asking about every unfinished job each time cost PostgreSQL 11 µs of CPU per delivery
    (pg_stat_statements, 100,000 deliveries in 10 jobs), which was then counted as the
    gateway's."""
    began = time.perf_counter()
    totals = {}
    for job in jobs:
        while True:
            summary = call(port, "GET", f"/v1/apps/bench/notifications/{job}")
            if sample:
                sample()
            if summary["status"] == "done":
                break
            time.sleep(0.1)
        for state, number in summary["counts"].items():
            totals[state] = totals.get(state, 0) + number
    return time.perf_counter() - began, totals


def database_counters(url):
    """The server's cumulative counters for `url`'s database: commits, rows inserted, updated
    (and of those HOT, which rewrite no index), deleted, and the cluster's WAL records and bytes.
    Read after the processes exit, which flushes their statistics."""
    name = url.rsplit("/", 1)[1].split("?")[0]
    query = ("SELECT d.xact_commit, d.tup_inserted, d.tup_updated, d.tup_deleted, "
             "(SELECT coalesce(sum(n_tup_hot_upd), 0) FROM pg_stat_user_tables), w.wal_records, w.wal_bytes "
             f"FROM pg_stat_database d, pg_stat_wal w WHERE d.datname = '{name}'")
    out = subprocess.run(["psql", url, "-X", "-A", "-t", "-c", query], check=True, timeout=120, capture_output=True, text=True).stdout
    values = [float(v) for v in out.strip().split("|")]
    return dict(zip(("commits", "inserted", "updated", "deleted", "hot", "walRecords", "walBytes"), values))


database_work = []  # per PostgreSQL delivery phase: the counters' growth per delivery


def gateway_round(kind, processes):
    """Queues `count` deliveries with an API-only process, then times `processes` workers."""
    database = os.path.join(work, f"{kind}-{serial[0]}.db") if kind == "sqlite" else fresh_postgres(f"herald_bench_{serial[0]}")
    api, port = serve(database, "--api-only")
    call(port, "POST", "/v1/apps", app)
    submitted, jobs = submit(port, count)
    stop(api)
    before = database_counters(database) if kind == "postgres" else None
    server_before = postgres_cpu() if kind == "postgres" else {}
    mock_before = cpu_seconds(mock.pid)
    began = time.perf_counter()
    workers = [serve(database) for _ in range(processes)]
    cleanup.append(database)
    _, totals = wait_done(workers[0][1], jobs)
    delivered = count / (time.perf_counter() - began)
    # Where the CPU went over the delivery phase (read before the workers exit, while their
    # database sessions still exist): the workers, the mock, PostgreSQL's processes.
    gateway_cpu = sum(cpu_seconds(process.pid) for process, _ in workers)
    mock_cpu = cpu_seconds(mock.pid) - mock_before
    server_after = postgres_cpu() if kind == "postgres" else {}
    server_cpu = sum(value - server_before.get(pid, 0.0) for pid, value in server_after.items())
    for process, _ in workers:
        stop(process)
    if before:
        time.sleep(1)  # the statistics collector's last flush
        after = database_counters(database)
        work_done = {name: (after[name] - before[name]) / count for name in before}
        work_done["processes"] = processes
        work_done.update(gatewayMicros=gateway_cpu / count * 1e6, mockMicros=mock_cpu / count * 1e6, postgresMicros=server_cpu / count * 1e6)
        database_work.append(work_done)
    if totals.get("accepted") != count:
        print(f"   {kind} x{processes}: not all accepted: {totals}", file=sys.stderr)
    if kind == "sqlite":
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(database + suffix):
                os.remove(database + suffix)
    return submitted, delivered


def clean_up():
    """Kills what is still running, drops the PostgreSQL databases made, removes the files."""
    for child in children:
        if child.poll() is None:
            child.kill()
    for database in cleanup:
        if database.startswith("postgres"):
            psql(postgres_admin, f"DROP DATABASE IF EXISTS {database.rsplit('/', 1)[1].split('?')[0]} WITH (FORCE)")
    shutil.rmtree(work, ignore_errors=True)


def collector(hang):
    """An OTLP/HTTP collector on loopback: a sink that reads each export and answers 200 at once,
    or (hang) one that reads it and never answers. Returns (port, exports received)."""
    import http.server
    received = [0]

    class Sink(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            received[0] += 1
            if hang:
                threading.Event().wait(3600)
                return
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", "0")
            self.end_headers()

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Sink)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server.server_address[1], received


def span_counts(port):
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=60).read().decode()
    found = {m.group(1): float(m.group(2)) for m in re.finditer(r'herald_gateway_trace_spans_total\{result="(\w+)"\} (\S+)', text)}
    return {name: int(found.get(name, 0)) for name in ("exported", "dropped", "failed")}


def traced_round(kind, worker_args):
    """Queues `count` deliveries with an API-only process, then times one worker started with
    `worker_args`; returns (deliveries per second, the worker's span counts)."""
    database = os.path.join(work, f"{kind}-{serial[0]}.db") if kind == "sqlite" else fresh_postgres(f"herald_bench_{serial[0]}")
    api, port = serve(database, "--api-only")
    call(port, "POST", "/v1/apps", app)
    _, jobs = submit(port, count)
    stop(api)
    began = time.perf_counter()
    worker, worker_port = serve(database, *worker_args)
    cleanup.append(database)
    _, totals = wait_done(worker_port, jobs)
    delivered = count / (time.perf_counter() - began)
    spans = span_counts(worker_port)
    stop(worker)
    if totals.get("accepted") != count:
        print(f"   {kind} {worker_args}: not all accepted: {totals}", file=sys.stderr)
    if kind == "sqlite":
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(database + suffix):
                os.remove(database + suffix)
    return delivered, spans


if traces_mode:
    try:
        sink_port, sink_received = collector(hang=False)
        hang_port, hang_received = collector(hang=True)
        modes = [("no exporter", []), ("collector answering", ["--otlp-endpoint", f"http://127.0.0.1:{sink_port}"]),
                 ("collector hanging", ["--otlp-endpoint", f"http://127.0.0.1:{hang_port}"])]
        rates = {(kind, label): [] for kind in ("sqlite", "postgres") for label, _ in modes}
        spans = {}
        for round_number in range(1, rounds + 1):
            # The order rotates each round, so no mode always runs first or last.
            order = modes[round_number % 3:] + modes[:round_number % 3]
            line = []
            for kind in ("sqlite", "postgres"):
                for label, arguments in order:
                    delivered, counted = traced_round(kind, arguments)
                    rates[(kind, label)].append(delivered)
                    spans[(kind, label)] = counted
                    line.append(f"{kind} {label} {delivered:,.0f}/s")
            print(f"   round {round_number}: " + "; ".join(line), flush=True)
        print()
        print(f"== medians of {rounds} rounds, {count:,} deliveries each (1,024-byte alert, TLS, one worker process); a span per attempt")
        for kind, name in (("sqlite", "SQLite"), ("postgres", "PostgreSQL")):
            base = statistics.median(rates[(kind, "no exporter")])
            for label, _ in modes:
                median = statistics.median(rates[(kind, label)])
                counted = spans[(kind, label)]
                print(f"   {name:<11} {label:<20} {median:>9,.0f} /s  {median / base:.3f}x  (last round's spans: {counted['exported']:,} exported, "
                      f"{counted['dropped']:,} dropped, {counted['failed']:,} failed)")
            # The machine drifts between rounds more than exporting costs: each round's modes ran
            # back to back, so their ratio within the round is the steadier figure.
            for label in ("collector answering", "collector hanging"):
                paired = statistics.median(a / b for a, b in zip(rates[(kind, label)], rates[(kind, "no exporter")]))
                print(f"   {name}: {label}, median of the rounds' own ratios {paired:.3f}x")
            hanging = statistics.median(a / b for a, b in zip(rates[(kind, "collector hanging")], rates[(kind, "no exporter")]))
            print(f"   {name}: a hanging collector changes the send rate by {abs(hanging - 1) * 100:.1f}% (rounds' ratios; target: under 5%)")
        print(f"   exports received: {sink_received[0]:,} by the answering collector, {hang_received[0]:,} by the hanging one")
    finally:
        clean_up()
    sys.exit(0)

try:
    results = {key: [] for key in ("ceiling", "sqlite-submit", "sqlite", "pg-submit", "pg1", "pg2", "pg4")}
    for round_number in range(1, rounds + 1):
        results["ceiling"].append(ceiling())
        line = [f"herald send {results['ceiling'][-1]:,.0f}/s"]
        if "sqlite" in phases:
            submitted, delivered = gateway_round("sqlite", 1)
            results["sqlite-submit"].append(submitted)
            results["sqlite"].append(delivered)
            line.append(f"SQLite submit {submitted:,.0f} tokens/s, deliver {delivered:,.0f}/s")
        for processes in (1, 2, 4):
            if f"pg{processes}" not in phases:
                continue
            submitted, delivered = gateway_round("postgres", processes)
            if processes == 1:
                results["pg-submit"].append(submitted)
            results[f"pg{processes}"].append(delivered)
            line.append(f"PostgreSQL x{processes} deliver {delivered:,.0f}/s ({delivered / results['ceiling'][-1]:.2f}x)")
        print(f"   round {round_number}: " + "; ".join(line), flush=True)
    median = {key: statistics.median(values) for key, values in results.items() if values}
    ceiling_rate = median["ceiling"]
    print()
    print(f"== medians of {rounds} rounds, {count:,} notifications each (1,024-byte alert, TLS, every request verified by the mock)")
    print(f"   herald send straight to the mock (ceiling)   {ceiling_rate:>9,.0f} /s")
    for label, key in (("gateway, SQLite, 1 process", "sqlite"), ("gateway, PostgreSQL, 1 process", "pg1"), ("gateway, PostgreSQL, 2 processes", "pg2"), ("gateway, PostgreSQL, 4 processes", "pg4")):
        if key not in median:
            continue
        print(f"   {label:<44} {median[key]:>9,.0f} /s delivered  {median[key] / ceiling_rate:.2f}x ceiling")
    if "sqlite" in median:
        print(f"   submissions accepted (committed), SQLite     {median['sqlite-submit']:>9,.0f} tokens/s ({PER_REQUEST:,} per request)")
    if "pg-submit" in median:
        print(f"   submissions accepted (committed), PostgreSQL {median['pg-submit']:>9,.0f} tokens/s")
    if "sqlite" in median:
        print(f"   target: SQLite >= 0.5x ceiling: {'met' if median['sqlite'] >= 0.5 * ceiling_rate else 'NOT met'}")
    if "pg1" in median:
        print(f"   target: PostgreSQL, 1 process >= 0.8x ceiling: {'met' if median['pg1'] >= 0.8 * ceiling_rate else 'NOT met'}")
    sender = {name: statistics.median(c[name] for c in ceiling_cpu) for name in ceiling_cpu[0]}
    print(f"   CPU per push of herald send: its own {sender['client']:.1f} µs, the mock {sender['mock']:.1f} µs (medians)")
    print()
    print("== PostgreSQL's work per delivered notification in the delivery phase (pg_stat_database, pg_stat_user_tables, pg_stat_wal; medians)")
    print("   the design's minimum: 1 row updated (the outcome; the row was inserted at submission), a fraction of a commit")
    for processes in (1, 2, 4):
        phases = [w for w in database_work if w["processes"] == processes]
        if not phases:
            continue
        m = {name: statistics.median(w[name] for w in phases) for name in phases[0]}
        print(f"   {processes} process{'es' if processes > 1 else ''}: {m['commits']:.4f} commits, rows: {m['inserted']:.2f} inserted, {m['updated']:.2f} updated "
              f"({m['hot']:.2f} HOT), {m['deleted']:.2f} deleted; WAL: {m['walRecords']:.2f} records, {m['walBytes']:,.0f} bytes; "
              f"CPU per delivery: gateway {m['gatewayMicros']:.1f} µs, PostgreSQL {m['postgresMicros']:.1f} µs, mock {m['mockMicros']:.1f} µs")

    # The capacity model: what one delivery costs the database server, from the one-process
    # phases, turned into what a server carries and how many gateway processes feed it.
    single = [w for w in database_work if w["processes"] == 1]
    if single:
        m = {name: statistics.median(w[name] for w in single) for name in single[0]}
        per_core = 1e6 / m["postgresMicros"] if m["postgresMicros"] > 0 else float("inf")
        per_gateway_core = 1e6 / m["gatewayMicros"] if m["gatewayMicros"] > 0 else float("inf")
        print()
        print("== capacity model (from the one-process phases' medians)")
        print(f"   PostgreSQL CPU per delivery {m['postgresMicros']:.1f} µs: one server core carries about {per_core:,.0f} deliveries/s")
        print(f"   at that rate: {per_core * m['commits']:,.0f} commits/s, {per_core * m['walBytes'] / 1e6:,.1f} MB/s of WAL, "
              f"{per_core * m['updated']:,.0f} row updates/s")
        print(f"   gateway CPU per delivery {m['gatewayMicros']:.1f} µs: one gateway core sends about {per_gateway_core:,.0f}/s, "
              f"so one PostgreSQL core feeds about {per_core / per_gateway_core:.1f} gateway cores")

    # Memory over MEMORY_COUNT deliveries: one SQLite process, queued then sent.
    if memory_count > 0:
        database = os.path.join(work, "memory.db")
        api, port = serve(database, "--api-only")
        call(port, "POST", "/v1/apps", app)
        _, jobs = submit(port, memory_count)
        stop(api)
        worker, port = serve(database)
        samples = []
        last = [0.0]

        def sample():
            now = time.perf_counter()
            if now - last[0] >= 1:
                last[0] = now
                samples.append(rss_kb(worker.pid))
        began = time.perf_counter()
        _, totals = wait_done(port, jobs, sample)
        elapsed = time.perf_counter() - began
        peak = rss_kb(worker.pid, "VmHWM")
        stop(worker)
        tenth = max(1, len(samples) // 10)
        early, late = statistics.median(samples[tenth:2 * tenth] or samples), statistics.median(samples[-tenth:] or samples)
        print(f"== {memory_count:,} deliveries through one SQLite process in {elapsed:.0f} s ({memory_count / elapsed:,.0f}/s; "
              f"{totals.get('accepted', 0):,} accepted): resident memory {early / 1024:.0f} MB at 10-20%, {late / 1024:.0f} MB in the last 10%, "
              f"peak {peak / 1024:.0f} MB")
finally:
    clean_up()
