import CoreMetrics
import Foundation
import HeraldClient
import Metrics
import Prometheus
import Synchronization

/// The gateway's Prometheus metrics, in a registry of its own, each with a `# HELP` line; those
/// about an app carry its id as the `app` label:
///
/// - `herald_gateway_submissions_total{app, result}`: requests to submit (`accepted`, `replayed`,
///   `refused`, `conflict`), and `herald_gateway_submitted_tokens_total{app}`.
/// - `herald_gateway_deliveries_total{app, state, reason}`: outcomes recorded (`accepted`,
///   `rejected`, `expired`, `retry`).
/// - `herald_gateway_sent_total{app}`, `herald_gateway_send_seconds{app}` (seconds per attempt),
///   `herald_gateway_in_flight`.
/// - `herald_gateway_app_paused{app}`: 1 while APNs' refusal of the app's credentials or server
///   holds its deliveries.
/// - `herald_gateway_queue_waiting`, `herald_gateway_queue_due`: deliveries waiting, and due now.
/// - `herald_gateway_webhooks_total{app, result}` (`sent`, `retry`, `failed`, `dropped`).
/// - `herald_gateway_database_up` (1 while the database answers and takes writes, 0 during an
///   outage or while its disk is full) and `herald_gateway_store_errors_total{kind}` (`refused`,
///   `timeout`, `authentication`, `connection`, `full`, `query`).
/// - `herald_gateway_pruned_total{kind}`: rows removed by retention (`jobs`, `deliveries`,
///   `webhook_events`).
/// - `herald_gateway_http_requests_total{method, status}`: API requests answered.
/// - `herald_gateway_activity_sends_total{app, event, result}`: Live Activity starts, updates
///   and ends sent (`accepted`, `retry`, `rejected`, `superseded`, `dropped`), and
///   `herald_gateway_activity_priority10_total{app}`: updates sent at priority 10 (they count
///   against the device's budget).
/// - `herald_gateway_trace_spans_total{result}`: spans `exported` to the OTLP collector,
///   `dropped` (its buffer was full) or `failed` (the collector refused or did not answer).
/// - `herald_gateway_apns_…{app}`: the APNs client's own (connection attempts and failures, open
///   connections, requests in flight, retries).
final class GatewayMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()
    private let factory: PrometheusMetricsFactory
    private let submissions: CounterFamily
    private let submittedTokenCounts: CounterFamily
    private let deliveries: CounterFamily
    private let storeErrors: CounterFamily
    private let webhooks: CounterFamily
    private let sends: CounterFamily
    private let pruned: CounterFamily
    private let requests: CounterFamily
    private let activitySends: CounterFamily
    private let activityPriority10: CounterFamily
    private let spans: CounterFamily
    private let timers = Mutex<[String: CoreMetrics.Timer]>([:])
    private let paused = Mutex<[String: CoreMetrics.Gauge]>([:])
    let inFlight: CoreMetrics.Gauge
    let queueWaiting: CoreMetrics.Gauge
    let queueDue: CoreMetrics.Gauge
    let databaseUp: CoreMetrics.Gauge
    /// The last hour in ten-second buckets, for the console's charts.
    let history: SendHistory

    /// Each metric's `# HELP` text, units included.
    static let help: [String: String] = [
        "herald_gateway_submissions_total": "Requests to submit a notification, by app and result (accepted, replayed, refused, conflict).",
        "herald_gateway_submitted_tokens_total": "Device tokens in accepted submissions, by app.",
        "herald_gateway_deliveries_total": "Delivery outcomes recorded, by app, state (accepted, rejected, expired, retry) and APNs reason.",
        "herald_gateway_sent_total": "Requests sent to APNs (attempts), by app.",
        "herald_gateway_send_seconds": "Seconds from a request's send to APNs' answer (or the client's error), by app.",
        "herald_gateway_in_flight": "Deliveries this process holds: claimed and not yet recorded or given back.",
        "herald_gateway_app_paused": "1 while an app's sending is paused because APNs refused its credentials or server; 0 otherwise.",
        "herald_gateway_queue_waiting": "Deliveries waiting (queued or claimed), every app.",
        "herald_gateway_queue_due": "Deliveries waiting that are due now, every app.",
        "herald_gateway_webhooks_total": "Webhook posts, by app and result (sent, retry, failed: the last attempt failed, dropped: the app has no webhook now).",
        "herald_gateway_database_up": "1 while the database answers and takes writes; 0 during an outage or while its disk is full.",
        "herald_gateway_store_errors_total": "Failed database calls, by kind (refused, timeout, authentication, connection, full, query).",
        "herald_gateway_pruned_total": "Rows removed by retention, by kind (jobs, deliveries, webhook_events).",
        "herald_gateway_http_requests_total": "API requests answered, by method and status.",
        "herald_gateway_activity_sends_total": "Live Activity starts, updates and ends, by app, event and result (accepted, retry, rejected, superseded, dropped).",
        "herald_gateway_activity_priority10_total": "Live Activity updates and ends sent at priority 10 (they count against the device's budget), by app.",
        "herald_gateway_trace_spans_total": "Trace spans, by result (exported; dropped: the buffer was full while the collector was slow or away; failed: the collector refused them or did not answer in time).",
        "herald_gateway_apns_sent_total": "Requests the apps' APNs clients were asked to send, by app.",
        "herald_gateway_apns_accepted_total": "Requests APNs accepted, by app.",
        "herald_gateway_apns_retries_total": "Requests sent again by the clients' retry policy, by app.",
        "herald_gateway_apns_failed_total": "Requests that ended without acceptance, by app.",
        "herald_gateway_apns_latency_seconds": "Seconds per APNs request, retries included, by app.",
        "herald_gateway_apns_connections": "Open HTTP/2 connections to APNs, by app.",
        "herald_gateway_apns_connection_attempts_total": "Attempts to connect to APNs, by app.",
        "herald_gateway_apns_connection_failures_total": "Failed attempts to connect to APNs, by app.",
        "herald_gateway_apns_requests_in_flight": "APNs requests awaiting an answer, by app.",
        "herald_gateway_apns_rejected_total": "Requests APNs rejected, by app and reason.",
    ]

    init(now: @escaping @Sendable () -> Int64 = { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }) {
        history = SendHistory(now: now)
        factory = PrometheusMetricsFactory(registry: registry)
        inFlight = CoreMetrics.Gauge(label: "herald_gateway_in_flight", factory: factory)
        queueWaiting = CoreMetrics.Gauge(label: "herald_gateway_queue_waiting", factory: factory)
        queueDue = CoreMetrics.Gauge(label: "herald_gateway_queue_due", factory: factory)
        databaseUp = CoreMetrics.Gauge(label: "herald_gateway_database_up", factory: factory)
        submissions = CounterFamily("herald_gateway_submissions_total", dimensions: ["app", "result"], factory: factory)
        submittedTokenCounts = CounterFamily("herald_gateway_submitted_tokens_total", dimensions: ["app"], factory: factory)
        deliveries = CounterFamily("herald_gateway_deliveries_total", dimensions: ["app", "state", "reason"], factory: factory)
        storeErrors = CounterFamily("herald_gateway_store_errors_total", dimensions: ["kind"], factory: factory)
        webhooks = CounterFamily("herald_gateway_webhooks_total", dimensions: ["app", "result"], factory: factory)
        sends = CounterFamily("herald_gateway_sent_total", dimensions: ["app"], factory: factory)
        pruned = CounterFamily("herald_gateway_pruned_total", dimensions: ["kind"], factory: factory)
        requests = CounterFamily("herald_gateway_http_requests_total", dimensions: ["method", "status"], factory: factory)
        activitySends = CounterFamily("herald_gateway_activity_sends_total", dimensions: ["app", "event", "result"], factory: factory)
        activityPriority10 = CounterFamily("herald_gateway_activity_priority10_total", dimensions: ["app"], factory: factory)
        spans = CounterFamily("herald_gateway_trace_spans_total", dimensions: ["result"], factory: factory)
    }

    /// For an app's client: its instruments land in this registry, labelled with the app.
    func clientFactory(app: String) -> any MetricsFactory { LabelledMetricsFactory(base: factory, dimensions: [("app", app)]) }

    func submission(_ app: String, _ result: String) { submissions.increment(app, result) }

    func submittedTokens(_ app: String, _ count: Int) {
        submittedTokenCounts.increment(app, by: Int64(count))
        history.record(app) { $0.submitted += count }
    }

    func delivery(_ app: String, _ state: String, reason: String?, count: Int = 1) {
        deliveries.increment(app, state, reason ?? "", by: Int64(count))
        history.record(app) { counts in
            switch state {
            case "accepted": counts.accepted += count
            case "rejected": counts.rejected += count
            case "retry": counts.retried += count
            default: counts.expired += count
            }
        }
    }

    /// The queue's depth, for the gauges and the history.
    func queue(waiting: Int, due: Int) {
        queueWaiting.record(waiting)
        queueDue.record(due)
        history.queue(waiting: waiting)
    }

    /// One attempt sent for `app`, answered after `elapsed`.
    func sent(_ app: String, elapsed: Duration) {
        sendMeter(app).sent(elapsed: elapsed)
    }

    /// The instruments that count `app`'s attempts, for a caller that sends many (looked up once).
    func sendMeter(_ app: String) -> SendMeter {
        let timer = timers.withLock { timers in
            if let timer = timers[app] { return timer }
            let timer = CoreMetrics.Timer(label: "herald_gateway_send_seconds", dimensions: [("app", app)], factory: factory)
            timers[app] = timer
            return timer
        }
        return SendMeter(count: sends.counter(app), timer: timer)
    }

    /// One app's attempts: their count and how long each took to be answered.
    struct SendMeter: Sendable {
        let count: CoreMetrics.Counter
        let timer: CoreMetrics.Timer

        /// One attempt sent, answered after `elapsed`.
        func sent(elapsed: Duration) {
            count.increment()
            timer.recordNanoseconds(elapsed.components.seconds * 1_000_000_000 + elapsed.components.attoseconds / 1_000_000_000)
        }
    }

    /// Whether `app` is paused now.
    func appPaused(_ app: String, _ isPaused: Bool) {
        let gauge = paused.withLock { gauges in
            if let gauge = gauges[app] { return gauge }
            let gauge = CoreMetrics.Gauge(label: "herald_gateway_app_paused", dimensions: [("app", app)], factory: factory)
            gauges[app] = gauge
            return gauge
        }
        gauge.record(isPaused ? 1 : 0)
    }

    func storeError(_ kind: StoreFailureKind) { storeErrors.increment(kind.rawValue) }

    func webhook(_ app: String, _ result: String) { webhooks.increment(app, result) }

    func pruned(_ kind: String, _ count: Int) { if count > 0 { pruned.increment(kind, by: Int64(count)) } }

    func activitySend(_ app: String, _ event: String, _ result: String) { activitySends.increment(app, event, result) }

    func activityPriority10(_ app: String) { activityPriority10.increment(app) }

    /// Spans `exported`, `dropped` (the buffer was full) or `failed` (the collector refused the
    /// batch or did not answer in time).
    func traceSpans(_ result: String, count: Int = 1) { spans.increment(result, by: Int64(count)) }

    func request(method: String, status: Int) { requests.increment(method, String(status)) }

    /// The text exposition format, a `# HELP` line before each metric's `# TYPE` line.
    func exposition() -> [UInt8] {
        let text = String(decoding: registry.emitToBuffer(), as: UTF8.self)
        var out = ""
        out.reserveCapacity(text.utf8.count + 4_096)
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("# TYPE ") {
                let name = line.dropFirst(7).prefix { $0 != " " }
                if let help = Self.help[String(name)] { out += "# HELP \(name) \(help)\n" }
            }
            out += line
            out += "\n"
        }
        if out.hasSuffix("\n\n") { out.removeLast() }
        return Array(out.utf8)
    }
}

/// A metrics factory that adds fixed dimensions (an app's id) to every instrument it makes.
struct LabelledMetricsFactory: MetricsFactory {
    let base: any MetricsFactory
    let dimensions: [(String, String)]

    func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        base.makeCounter(label: label, dimensions: self.dimensions + dimensions)
    }
    func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler {
        base.makeFloatingPointCounter(label: label, dimensions: self.dimensions + dimensions)
    }
    func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler {
        base.makeMeter(label: label, dimensions: self.dimensions + dimensions)
    }
    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        base.makeRecorder(label: label, dimensions: self.dimensions + dimensions, aggregate: aggregate)
    }
    func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        base.makeTimer(label: label, dimensions: self.dimensions + dimensions)
    }
    func destroyCounter(_ handler: any CounterHandler) { base.destroyCounter(handler) }
    func destroyMeter(_ handler: any MeterHandler) { base.destroyMeter(handler) }
    func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) { base.destroyFloatingPointCounter(handler) }
    func destroyRecorder(_ handler: any RecorderHandler) { base.destroyRecorder(handler) }
    func destroyTimer(_ handler: any TimerHandler) { base.destroyTimer(handler) }
}
