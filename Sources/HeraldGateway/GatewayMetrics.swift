import CoreMetrics
import HeraldClient
import Metrics
import Prometheus

/// The gateway's Prometheus metrics, in a registry of its own:
///
/// - `herald_gateway_submissions_total{result}`: requests to submit (`accepted`, `replayed`,
///   `refused`, `conflict`), and `herald_gateway_submitted_tokens_total`.
/// - `herald_gateway_deliveries_total{state, reason}`: outcomes recorded (`accepted`,
///   `rejected`, `expired`, `retry`).
/// - `herald_gateway_sent_total`, `herald_gateway_send_seconds` (latency per attempt),
///   `herald_gateway_in_flight`.
/// - `herald_gateway_queue_waiting`, `herald_gateway_queue_due`: deliveries waiting, and due now.
/// - `herald_gateway_webhooks_total{result}` (`sent`, `retry`, `failed`).
/// - `herald_gateway_database_up` (1 while the database answers, 0 during an outage) and
///   `herald_gateway_store_errors_total{kind}` (`refused`, `timeout`, `authentication`,
///   `connection`, `query`).
/// - `herald_gateway_apns_…`: the APNs client's own (connection attempts and failures, open
///   connections, requests in flight, retries), summed over the apps.
final class GatewayMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()
    private let factory: PrometheusMetricsFactory
    private let submissions: CounterFamily
    private let deliveries: CounterFamily
    private let storeErrors: CounterFamily
    private let webhooks: CounterFamily
    let sent: CoreMetrics.Counter
    let submittedTokens: CoreMetrics.Counter
    let latency: CoreMetrics.Timer
    let inFlight: CoreMetrics.Gauge
    let queueWaiting: CoreMetrics.Gauge
    let queueDue: CoreMetrics.Gauge
    let databaseUp: CoreMetrics.Gauge
    /// For the apps' clients: their instruments land in this registry.
    var clientFactory: any MetricsFactory { factory }

    init() {
        factory = PrometheusMetricsFactory(registry: registry)
        sent = CoreMetrics.Counter(label: "herald_gateway_sent_total", factory: factory)
        submittedTokens = CoreMetrics.Counter(label: "herald_gateway_submitted_tokens_total", factory: factory)
        latency = CoreMetrics.Timer(label: "herald_gateway_send_seconds", factory: factory)
        inFlight = CoreMetrics.Gauge(label: "herald_gateway_in_flight", factory: factory)
        queueWaiting = CoreMetrics.Gauge(label: "herald_gateway_queue_waiting", factory: factory)
        queueDue = CoreMetrics.Gauge(label: "herald_gateway_queue_due", factory: factory)
        databaseUp = CoreMetrics.Gauge(label: "herald_gateway_database_up", factory: factory)
        submissions = CounterFamily("herald_gateway_submissions_total", dimensions: ["result"], factory: factory)
        deliveries = CounterFamily("herald_gateway_deliveries_total", dimensions: ["state", "reason"], factory: factory)
        storeErrors = CounterFamily("herald_gateway_store_errors_total", dimensions: ["kind"], factory: factory)
        webhooks = CounterFamily("herald_gateway_webhooks_total", dimensions: ["result"], factory: factory)
    }

    func submission(_ result: String) { submissions.increment(result) }

    func delivery(_ state: String, reason: String?) { deliveries.increment(state, reason ?? "") }

    func storeError(_ kind: StoreFailureKind) { storeErrors.increment(kind.rawValue) }

    func webhook(_ result: String) { webhooks.increment(result) }

    /// The text exposition format.
    func exposition() -> [UInt8] { registry.emitToBuffer() }
}
