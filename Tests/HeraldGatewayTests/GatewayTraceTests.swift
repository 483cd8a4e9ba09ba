import Foundation
import HeraldAuth
@testable import HeraldGateway
import HeraldJSON
@testable import HeraldMock
import HeraldProtocol
import HeraldTestSupport
import Testing

/// Traces: W3C `traceparent` read as the Recommendation says, spans decoded by OpenTelemetry's
/// own protobuf types (opentelemetry-proto) in a receiver the test starts, one job one trace
/// across two `herald serve` processes on PostgreSQL, and a collector that hangs costing sending
/// nothing but the spans it drops (counted).
@Suite(.serialized) struct GatewayTraceTests {
    // MARK: traceparent

    @Test func traceparentIsReadAsTheRecommendationSays() throws {
        let header = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
        let context = try #require(TraceContext(traceparent: header))
        #expect(context.traceID.hex == "4bf92f3577b34da6a3ce929d0e0e4736" && context.spanID.hex == "00f067aa0ba902b7" && context.sampled)
        #expect(context.traceparent == header)
        #expect(context.traceID.bytes == [0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36])
        #expect(TraceContext(traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00")?.sampled == false)
        // A later version may add fields after a dash; its first four are read the same way.
        #expect(TraceContext(traceparent: "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra")?.spanID.hex == "00f067aa0ba902b7")
        for invalid in [
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",  // version ff is invalid
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",  // a trace id of zeros
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",  // a span id of zeros
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",  // upper case
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x",  // version 00 has four fields
            "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",  // a short trace id
            "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x",  // no dash after the flags
            "00_4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7_01", "", "00",
        ] {
            #expect(TraceContext(traceparent: invalid) == nil, "\(invalid)")
        }
        // A child keeps the trace and the sampling, with a new span id.
        let child = context.child()
        #expect(child.traceID == context.traceID && child.spanID != context.spanID && child.sampled)
    }

    /// Properties over 200,000 seeded inputs: any text parses or is refused without a crash; a
    /// version-00 header that parses is written back as read (its undefined flags cleared); ids made here always parse
    /// back to themselves; mutating one character of a valid header never yields other ids.
    @Test(.ownThreads) func traceparentParsingHoldsItsPropertiesOnRandomInput() throws {
        var random = SeededGenerator(seed: 0x7ace)
        let alphabet = Array("0123456789abcdefABCDEF-_x ") + ["é", "\u{0}"]
        var accepted = 0
        let hex = Array("0123456789abcdef")
        for _ in 0..<100_000 {
            let text: String
            if Bool.random(using: &random) {
                // Shaped like a header (dashes where they go, mostly lower-case hex), with a
                // stray character, a length off by a few, or a version other than 00 at times.
                let length = Int.random(in: 0...10, using: &random) < 8 ? 55 : Int.random(in: 50...62, using: &random)
                text = String((0..<length).map { index -> Character in
                    if Int.random(in: 0..<200, using: &random) == 0 { return alphabet.randomElement(using: &random)! }
                    if [2, 35, 52, 55].contains(index) { return "-" }
                    if index < 2 { return Int.random(in: 0..<4, using: &random) == 0 ? hex.randomElement(using: &random)! : "0" }
                    return hex.randomElement(using: &random)!
                })
            } else {
                text = String((0..<Int.random(in: 0...70, using: &random)).map { _ in alphabet.randomElement(using: &random)! })
            }
            if let context = TraceContext(traceparent: text) {
                accepted += 1
                // Written back as read, with the flags other than `sampled` cleared (the
                // Recommendation: flags a version does not define are not passed on).
                if text.hasPrefix("00-") { #expect(context.traceparent == text.prefix(53) + (context.sampled ? "01" : "00")) }
            }
        }
        for _ in 0..<50_000 {
            let made = TraceContext(traceID: .random(), spanID: .random(), sampled: Bool.random(using: &random))
            let header = made.traceparent
            #expect(TraceContext(traceparent: header) == made)
            var bytes = Array(header.utf8)
            let at = Int.random(in: 0..<bytes.count, using: &random)
            let replacement = Array("0123456789abcdef-Z".utf8).randomElement(using: &random)!
            guard replacement != bytes[at] else { continue }
            bytes[at] = replacement
            if let changed = TraceContext(traceparent: String(decoding: bytes, as: UTF8.self)), at >= 3, at < 52, at != 35 {
                #expect(changed.traceID != made.traceID || changed.spanID != made.spanID, "\(header) → \(String(decoding: bytes, as: UTF8.self))")
            }
        }
        #expect(accepted > 10_000, "the random texts reach the parser's acceptance")
        print("traceparent: \(accepted) of 100,000 random texts accepted")
    }

    // MARK: One job, one trace, two processes

    /// One process takes the submission (--api-only, --otlp-endpoint), another sends it (the
    /// OpenTelemetry variables): every span of the job is in the trace the caller's
    /// `traceparent` began, the request's span under the caller's, the commit under the
    /// request, each attempt under the commit, with the attributes an operator looks for.
    @Test(.heavy) func oneJobIsOneTraceAcrossTwoPostgreSQLProcesses() async throws {
        let database = try await PostgresTestDatabase()
        let receiver = try await Receiver.start()
        defer { receiver.program.process.terminate() }
        let key = ProviderSigningKey.generate(keyID: GatewayHarness.keyID, teamID: GatewayHarness.teamID)
        let tokens = GatewayFailureTests.tokens(12, batch: 31)
        var mockConfiguration = MockConfiguration()
        mockConfiguration.port = 0
        mockConfiguration.apiPort = nil
        mockConfiguration.channelPort = nil
        mockConfiguration.transport = .plaintext
        mockConfiguration.keys = [key.publicKey]
        mockConfiguration.unregisteredTokens = [try DeviceToken(hex: tokens[0])]
        let mock = try MockAPNsServer(configuration: mockConfiguration)
        try await mock.start()
        defer { Task { await mock.stop() } }

        let admin = GatewayFailureTests.environment
        let api = try await ServeProcess.start(
            ["--postgres", database.url, "--admin-key-env", "HERALD_FAILURE_ADMIN", "--api-only", "--otlp-endpoint", "http://127.0.0.1:\(receiver.port)", "--log", "info"],
            environment: admin)
        defer { api.program.process.terminate() }
        let worker = try await ServeProcess.start(
            ["--postgres", database.url, "--admin-key-env", "HERALD_FAILURE_ADMIN"],
            environment: admin.merging(["OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:\(receiver.port)/", "OTEL_SERVICE_NAME": "herald-worker"]) { $1 })
        defer { worker.program.process.terminate() }
        #expect(api.banner.contains("traces     OTLP/HTTP to http://127.0.0.1:\(receiver.port)/v1/traces (service herald)"), "\(api.banner)")
        #expect(try await api.call("POST", "/v1/apps", GatewayFailureTests.app(port: mock.port, key: key), key: GatewayFailureTests.adminKey).status == 201)

        let traceID = "0af7651916cd43dd8448eb211c80319c", callerSpan = "b7ad6b7169203331"
        let body = #"{"payload":{"aps":{"alert":"Traced"}},"tokens":[\#(tokens.map { "\"\($0)\"" }.joined(separator: ","))]}"#
        let submitted = try await api.call(
            "POST", "/v1/apps/com.example.app/notifications", body, key: GatewayFailureTests.adminKey,
            headers: ["traceparent": "00-\(traceID)-\(callerSpan)-01"])
        #expect(submitted.status == 202)
        let job = try #require(submitted.json?.root["id"]?.stringValue)
        let done = try await GatewayFailureTests.waitUntil(.seconds(60)) { try await GatewayFailureTests.counts(api, jobs: [job]).waiting == 0 }
        #expect(done)
        // SIGTERM exports what is buffered (within two seconds).
        _ = try await worker.program.stop()
        _ = try await api.program.stop()
        let spans = try receiver.spans()
        #expect(!spans.contains { $0.root["problem"] != nil }, "the receiver could not read a request: \(spans.map(\.root.value))")
        let inTrace = spans.filter { $0.root["traceId"]?.stringValue == traceID }

        let request = try #require(inTrace.first { $0.root["name"]?.stringValue == "POST /v1/apps/{app}/notifications" }, "\(spans.map(\.root.value))")
        #expect(request.root["parentSpanId"]?.stringValue == callerSpan)
        #expect(request.root["kind"]?.int64Value == 2)  // SPAN_KIND_SERVER
        #expect(request.root["attributes"]?["http.response.status_code"]?.int64Value == 202)
        #expect(request.root["attributes"]?["url.path"]?.stringValue == "/v1/apps/com.example.app/notifications")
        #expect(request.root["resource"]?["service.instance.id"]?.stringValue == api.worker)
        #expect(request.root["resource"]?["service.name"]?.stringValue == "herald")
        let requestSpan = try #require(request.root["spanId"]?.stringValue)

        let commit = try #require(inTrace.first { $0.root["name"]?.stringValue == "notification.commit" })
        #expect(commit.root["parentSpanId"]?.stringValue == requestSpan)
        #expect(commit.root["attributes"]?["herald.notification.id"]?.stringValue == job)
        #expect(commit.root["attributes"]?["herald.deliveries"]?.int64Value == 12)
        let commitSpan = try #require(commit.root["spanId"]?.stringValue)

        let attempts = inTrace.filter { $0.root["name"]?.stringValue == "apns.send" }
        #expect(attempts.count == 12, "\(attempts.count) attempt spans in the trace; \(spans.count) spans received")
        let deliveries = try await GatewayTraceTests.deliveries(database, job: job)
        var seen = Set<String>()
        for attempt in attempts {
            let attributes = attempt.root["attributes"]
            #expect(attempt.root["parentSpanId"]?.stringValue == commitSpan)
            #expect(attempt.root["kind"]?.int64Value == 3)  // SPAN_KIND_CLIENT
            #expect(attempt.root["resource"]?["service.name"]?.stringValue == "herald-worker")
            #expect(attempt.root["resource"]?["service.instance.id"]?.stringValue == worker.worker)
            #expect(attributes?["herald.process"]?.stringValue == worker.worker)
            #expect(attributes?["herald.attempt"]?.int64Value == 1)
            #expect(attributes?["herald.notification.id"]?.stringValue == job)
            let apnsID = try #require(attributes?["apns-id"]?.stringValue)
            seen.insert(apnsID)
            let expected = try #require(deliveries[apnsID], "apns-id \(apnsID) is not one of the job's deliveries")
            #expect(attributes?["http.response.status_code"]?.int64Value == Int64(expected.status))
            if expected.token == tokens[0] {
                #expect(attributes?["apns.reason"]?.stringValue == "Unregistered" && attributes?["herald.outcome"]?.stringValue == "rejected")
                #expect(attempt.root["status"]?.int64Value == 2)  // STATUS_CODE_ERROR
            } else {
                #expect(attributes?["herald.outcome"]?.stringValue == "accepted" && attributes?["apns.reason"] == nil)
            }
            let start = attempt.root["start"]?.int64Value ?? 0, end = attempt.root["end"]?.int64Value ?? 0
            #expect(start > 0 && end >= start)
        }
        #expect(seen.count == 12, "each delivery has its own span")
        // The access log's line for the submission carries the trace's ids.
        let line = api.program.output.split(separator: "\n").first { $0.contains("api request") && $0.contains("method=POST") && $0.contains("/notifications") }
        #expect(line?.contains("trace_id=\(traceID)") == true && line?.contains("span_id=\(requestSpan)") == true, "\(String(describing: line))")
        print("one job, one trace: \(inTrace.count) spans (1 request, 1 commit, \(attempts.count) attempts) across \(api.worker) and \(worker.worker)")
    }

    /// Each delivery's apns-id → its token and status, from the database.
    static func deliveries(_ database: PostgresTestDatabase, job: String) async throws -> [String: (token: String, status: Int)] {
        let rows = try await database.query("SELECT apns_id, token, status FROM deliveries WHERE job_id = '\(job)'")
        var out: [String: (token: String, status: Int)] = [:]
        for row in rows.split(separator: "\n") {
            let fields = row.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
            if fields.count == 3 { out[fields[0]] = (fields[1], Int(fields[2]) ?? 0) }
        }
        return out
    }

    // MARK: A collector that hangs

    /// A collector that takes the connection and never answers: every delivery is sent, the
    /// spans beyond the buffer are dropped and counted, nothing is exported, and stopping the
    /// gateway is not held up by the export in flight.
    @Test func aHangingCollectorCostsABoundedBufferAndNothingElse() async throws {
        let receiver = try await Receiver.start(hanging: true)
        defer { receiver.program.process.terminate() }
        let harness = try await GatewayHarness.start(gateway: { configuration in
            var settings = GatewayConfiguration.OpenTelemetry(tracesEndpoint: "http://127.0.0.1:\(receiver.port)/v1/traces", metricsEndpoint: nil)
            settings.spanBufferLimit = 50
            settings.timeout = .seconds(30)
            configuration.openTelemetry = settings
        })
        try await harness.registerApp()
        let job = try await harness.submit(tokens: GatewayHarness.tokens(400))
        let summary = try await harness.waitUntilDone(job)
        #expect(summary.root["counts"]?["accepted"]?.int64Value == 400)
        let metrics = String(decoding: harness.gateway.metrics.exposition(), as: UTF8.self)
        func value(_ result: String) -> Double {
            metrics.split(separator: "\n").first { $0.hasPrefix("herald_gateway_trace_spans_total{result=\"\(result)\"}") }
                .flatMap { Double($0.split(separator: " ").last ?? "") } ?? 0
        }
        // 400 attempts, the submission's request and commit, the registration: at most 50
        // buffered and one batch (at most 50) in the hung export; the rest dropped.
        #expect(value("dropped") >= 400 - 100, "\(metrics.split(separator: "\n").filter { $0.contains("trace_spans") })")
        #expect(value("exported") == 0)
        #expect(harness.gateway.tracer?.exporter.buffered ?? 0 <= 50)
        let stopping = ContinuousClock.now
        await harness.stop()
        let stoppedIn = ContinuousClock.now - stopping
        #expect(stoppedIn < .seconds(15), "stopping took \(stoppedIn) with an export hung for 30 s")
    }

    /// The exporter alone against a live receiver: every span recorded arrives once, decoded by
    /// opentelemetry-proto with its names, kinds, ids and attributes; a refusing collector's
    /// batch is counted as failed.
    @Test func spansArriveAsOpenTelemetryDecodesThem() async throws {
        let receiver = try await Receiver.start()
        defer { receiver.program.process.terminate() }
        let metrics = GatewayMetrics()
        var settings = GatewayConfiguration.OpenTelemetry(collector: "http://127.0.0.1:\(receiver.port)", serviceName: "trace-test")
        settings.spanInterval = .milliseconds(100)
        let exporter = try TraceExporter(
            settings: settings, endpoint: try #require(settings.tracesEndpoint), worker: "w-1", metrics: metrics, logger: .init(label: "test"))
        let parent = TraceContext.newTrace()
        var recorded: [Span] = []
        for index in 0..<700 {  // more than one batch of 512
            var span = Span("span \(index)", kind: index % 2 == 0 ? .client : .internal, parent: parent)
            span.set("index", index)
            span.set("text", "é \(index)")
            span.set("even", index % 2 == 0)
            if index == 3 { span.status = .error("it failed") }
            span.end = span.start + 1_000
            recorded.append(span)
            exporter.record(span)
        }
        let running = Task { await exporter.run() }
        exporter.stop()
        await running.value
        let spans = try receiver.spans()
        #expect(spans.count == 700, "\(spans.count) spans received")
        let byName = Dictionary(uniqueKeysWithValues: spans.compactMap { span in span.root["name"]?.stringValue.map { ($0, span) } })
        for span in recorded {
            let got = try #require(byName[span.name])
            let index = Int64(span.name.dropFirst(5))!
            #expect(got.root["traceId"]?.stringValue == parent.traceID.hex && got.root["parentSpanId"]?.stringValue == parent.spanID.hex)
            #expect(got.root["spanId"]?.stringValue == span.context.spanID.hex)
            #expect(got.root["kind"]?.int64Value == Int64(span.kind.rawValue))
            #expect(got.root["start"]?.int64Value == Int64(span.start) && got.root["end"]?.int64Value == Int64(span.end))
            #expect(got.root["attributes"]?["index"]?.int64Value == index && got.root["attributes"]?["text"]?.stringValue == "é \(index)")
            #expect(got.root["attributes"]?["even"]?.boolValue == (index % 2 == 0))
            #expect(got.root["resource"]?["service.name"]?.stringValue == "trace-test" && got.root["resource"]?["service.instance.id"]?.stringValue == "w-1")
            #expect(got.root["status"]?.int64Value == (index == 3 ? 2 : 0))
            if index == 3 { #expect(got.root["statusMessage"]?.stringValue == "it failed") }
        }
        let exposition = String(decoding: metrics.exposition(), as: UTF8.self)
        #expect(exposition.contains(#"herald_gateway_trace_spans_total{result="exported"} 700"#))

        // A collector that refuses (HTTP 503): the batch is counted as failed.
        let refusing = try await Receiver.start(status: 503)
        defer { refusing.program.process.terminate() }
        let failing = try TraceExporter(
            settings: .init(collector: "http://127.0.0.1:\(refusing.port)"), endpoint: "http://127.0.0.1:\(refusing.port)/v1/traces", worker: "w-2",
            metrics: metrics, logger: .init(label: "test"))
        for index in 0..<5 { failing.record(Span("refused \(index)", kind: .internal, parent: nil)) }
        let second = Task { await failing.run() }
        failing.stop()
        await second.value
        #expect(String(decoding: metrics.exposition(), as: UTF8.self).contains(#"herald_gateway_trace_spans_total{result="failed"} 5"#))
    }

    // MARK: Live Activities

    /// A Live Activity's start and update are spans too, each with the activity, its event and
    /// APNs' answer.
    @Test func liveActivityPushesAreSpans() async throws {
        let receiver = try await Receiver.start()
        defer { receiver.program.process.terminate() }
        let harness = try await GatewayActivityTests.start(.sqlite) { configuration in
            var settings = GatewayConfiguration.OpenTelemetry(tracesEndpoint: "http://127.0.0.1:\(receiver.port)/v1/traces", metricsEndpoint: nil)
            settings.spanInterval = .milliseconds(100)
            configuration.openTelemetry = settings
        }
        let app = GatewayHarness.bundleID
        let startToken = GatewayActivityTests.randomToken()
        let (started, _) = try await harness.call(
            "POST", "/v1/apps/\(app)/activities", GatewayActivityTests.startBody(id: "traced", to: #"{"startToken":"\#(startToken.hex)"}"#))
        #expect(started == 202)
        try await GatewayActivityTests.waitForActivity(harness, "traced", "the start and its token") { $0["updateToken"]?.stringValue != nil }
        let (patched, _) = try await harness.call("PATCH", "/v1/apps/\(app)/activities/traced", #"{"contentState":{"step":1}}"#)
        #expect(patched == 202)
        try await GatewayActivityTests.waitForActivity(harness, "traced", "the update sent") { $0["pending"]?.kind == .null && ($0["counts"]?["sent"]?.int64Value ?? 0) >= 1 }
        await harness.stop()
        let pushes = try receiver.spans().filter { $0.root["attributes"]?["herald.activity.id"]?.stringValue == "traced" }
        #expect(pushes.compactMap { $0.root["attributes"]?["herald.event"]?.stringValue }.sorted() == ["start", "update"], "\(pushes.map(\.root.value))")
        for push in pushes {
            #expect(push.root["name"]?.stringValue == "apns.send" && push.root["kind"]?.int64Value == 3)
            #expect(push.root["attributes"]?["http.response.status_code"]?.int64Value == 200 && push.root["attributes"]?["apns-id"]?.stringValue != nil)
        }
    }

    // MARK: Metrics

    /// The metrics a collector receives say what `/metrics` says: counters as monotonic
    /// cumulative sums, the send-time histogram with its buckets, each with its help text and
    /// the process as its resource; exported every interval and once more at shutdown.
    @Test func metricsArriveAsSlashMetricsHasThem() async throws {
        let receiver = try await Receiver.start()
        defer { receiver.program.process.terminate() }
        let harness = try await GatewayHarness.start(gateway: { configuration in
            var settings = GatewayConfiguration.OpenTelemetry(collector: "http://127.0.0.1:\(receiver.port)/", serviceName: "metrics-test")
            settings.metricsInterval = .milliseconds(300)
            configuration.openTelemetry = settings
        })
        try await harness.registerApp()
        let job = try await harness.submit(tokens: GatewayHarness.tokens(5))
        _ = try await harness.waitUntilDone(job)
        let app = GatewayHarness.bundleID
        // Exports go on every 300 ms: wait for one taken after the job was done.
        let doneAt = Span.now()
        var metrics: [JSONDocument] = []
        _ = try await GatewayFailureTests.waitUntil(.seconds(20)) {
            let all = try receiver.spans().filter { $0.root["metric"] != nil }
            let last = all.compactMap { $0.root["export"]?.int64Value }.max() ?? 0
            metrics = all.filter { $0.root["export"]?.int64Value == last }
            return metrics.contains { ($0.root["points"]?[0]?["time"]?.int64Value ?? 0) > Int64(doneAt) }
        }
        await harness.stop()
        func metric(_ name: String) -> JSONDocument? { metrics.first { $0.root["metric"]?.stringValue == name } }
        func point(_ metric: JSONDocument?, _ labels: [String: String]) -> JSONDocument.Node? {
            metric?.root["points"]?.elements.first { point in labels.allSatisfy { point["attributes"]?[$0.key]?.stringValue == $0.value } }
        }
        let sent = try #require(metric("herald_gateway_sent_total"), "\(metrics.map { $0.root["metric"]?.stringValue ?? "" })")
        #expect(sent.root["type"]?.stringValue == "sum" && sent.root["monotonic"]?.boolValue == true && sent.root["temporality"]?.int64Value == 2)
        #expect(sent.root["description"]?.stringValue == GatewayMetrics.help["herald_gateway_sent_total"])
        #expect(point(sent, ["app": app])?["value"]?.int64Value == 5 && point(sent, ["app": app])?["valueType"]?.stringValue == "as_int")
        #expect(sent.root["resource"]?["service.name"]?.stringValue == "metrics-test")
        #expect(sent.root["resource"]?["service.instance.id"]?.stringValue == harness.gateway.workerName)
        let accepted = point(metric("herald_gateway_deliveries_total"), ["app": app, "state": "accepted"])
        #expect(accepted?["value"]?.int64Value == 5)
        #expect(metric("herald_gateway_database_up")?.root["type"]?.stringValue == "gauge")
        #expect(point(metric("herald_gateway_database_up"), [:])?["value"]?.int64Value == 1)
        let histogram = try #require(point(metric("herald_gateway_send_seconds"), ["app": app]))
        #expect(metric("herald_gateway_send_seconds")?.root["type"]?.stringValue == "histogram")
        let counts = histogram["bucketCounts"]?.elements.compactMap(\.int64Value) ?? []
        let bounds = histogram["bounds"]?.elements.compactMap(\.doubleValue) ?? []
        #expect(histogram["count"]?.int64Value == 5 && counts.reduce(0, +) == 5 && (histogram["sum"]?.doubleValue ?? 0) > 0)
        #expect(!bounds.isEmpty && counts.count == bounds.count + 1 && zip(bounds, bounds.dropFirst()).allSatisfy { $0 < $1 }, "\(counts) \(bounds)")
        let start = histogram["start"]?.int64Value ?? 0, time = histogram["time"]?.int64Value ?? 0
        #expect(start > 0 && time > start)
    }

    /// The text format read back as the Prometheus documentation gives it: escaped label
    /// values, `+Inf`, a timestamp after the value, histogram samples under their family.
    @Test func prometheusTextIsReadBack() {
        let text = #"""
            # HELP requests_total Requests.
            # TYPE requests_total counter
            requests_total{app="a\"b\\c\nd",code="200"} 3 1700000000000
            requests_total{app="plain",code=""} 1.5
            # TYPE latency histogram
            latency_bucket{le="0.1"} 2
            latency_bucket{le="+Inf"} 5
            latency_sum 1.25
            latency_count 5
            # TYPE broken gauge
            broken{app="unterminated} 1
            """#
        let families = PrometheusText.parse(text)
        #expect(families.map(\.name) == ["requests_total", "latency", "broken"])
        #expect(families[0].help == "Requests." && families[0].type == "counter")
        #expect(families[0].samples == [
            .init(name: "requests_total", labels: [("app", "a\"b\\c\nd"), ("code", "200")], value: 3),
            .init(name: "requests_total", labels: [("app", "plain"), ("code", "")], value: 1.5),
        ])
        #expect(families[1].samples.map(\.value) == [2, 5, 1.25, 5] && families[1].samples[1].labels.first?.1 == "+Inf")
        #expect(families[2].samples.isEmpty)
        // Random text (and lines cut anywhere) is read without a crash.
        var random = SeededGenerator(seed: 0x9e7)
        let pieces = ["# TYPE x counter\n", "# HELP x y\n", "x", "{", "}", "=", "\"", "\\", ",", " ", "1", "+Inf", "\n", "a", "le", "_bucket", "NaN"]
        for _ in 0..<20_000 {
            let text = (0..<Int.random(in: 0...40, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined()
            _ = PrometheusText.parse(text)
        }
    }

    /// The OTLP receiver (Tests/Fixtures/traces/receiver.py), started for one test.
    struct Receiver {
        let program: RunningProgram
        let port: Int
        let file: String
        let directory: TemporaryDirectory

        static func start(hanging: Bool = false, status: Int? = nil) async throws -> Receiver {
            try ExternalTools.requirePython(modules: "opentelemetry.proto", package: "opentelemetry-proto")
            let python = try ExternalTools.require("python3", package: "python3")
            let directory = try TemporaryDirectory()
            let file = directory.path("spans.jsonl")
            var arguments = [Fixtures.url("traces/receiver.py").path, file]
            if hanging { arguments.append("--hang") }
            if let status { arguments += ["--status", String(status)] }
            let program = try RunningProgram(python, arguments)
            let banner = await program.read(until: "listening on", timeout: .seconds(30))
            guard let match = banner.firstMatch(of: /listening on (\d+)/), let port = Int(match.output.1) else {
                throw ExternalTools.Failure(description: "the OTLP receiver did not start: \(banner)")
            }
            return Receiver(program: program, port: port, file: file, directory: directory)
        }

        /// The spans received so far, one JSON document each.
        func spans() throws -> [JSONDocument] {
            guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { return [] }
            return try text.split(separator: "\n").map { try JSONDocument(parsing: Array($0.utf8)) }
        }
    }
}
