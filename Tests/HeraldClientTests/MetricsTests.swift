import Foundation
@testable import HeraldClient
import HeraldMock
import HeraldProtocol
import HeraldHarness
import MetricsTestKit
import Testing

/// The client's swift-metrics instruments, read through swift-metrics' own test factory while
/// the client sends to the mock with faults that produce each outcome.
@Suite(.serialized) struct MetricsTests {
    @Test func countersTimerAndGaugesFollowTheOutcomes() async throws {
        let harness = try await ClientHarness.start()
        defer { Task { await harness.stop() } }
        let tokens = ClientHarness.tokens(8, salt: 7)
        _ = harness.mock.addFault(try FaultRule(parsing: "status=503/ServiceUnavailable,token=\(tokens[0].hex),times=1"))
        _ = harness.mock.addFault(try FaultRule(parsing: "status=400/BadDeviceToken,token=\(tokens[1].hex)"))
        _ = harness.mock.addFault(try FaultRule(parsing: "status=400/BadDeviceToken,token=\(tokens[2].hex)"))
        let metrics = TestMetrics()
        let client = try harness.client {
            $0.metricsFactory = metrics
            $0.metricsPrefix = "push"
            $0.retry = .init(maximumAttempts: 3, initialBackoff: .milliseconds(5))
            // The outcomes are about the mock's answers: no deadline a loaded machine could reach.
            $0.requestTimeout = .seconds(120)
        }
        let outcomes = await ClientHarness.sendAll(client, to: tokens)
        let rejected = outcomes.compactMap { $0.1.failure }
        #expect(rejected.count == 2 && rejected.allSatisfy { $0.reason == .badDeviceToken }, "\(rejected)")

        // Requests, not attempts: the 503 is one retry of one request.
        #expect(metrics.counterTotal(label: "push_sent_total") == 8)
        #expect(metrics.counterTotal(label: "push_accepted_total") == 6)
        #expect(metrics.counterTotal(label: "push_rejected_total", dimensions: [("reason", "BadDeviceToken")]) == 2)
        #expect(metrics.counterTotal(label: "push_retries_total") == 1)
        #expect(metrics.counterTotal(label: "push_failed_total") == 0)
        let latency = try metrics.expectTimer("push_latency_seconds")
        #expect(latency.values.count == 8)
        #expect(latency.values.allSatisfy { $0 > 0 && $0 < 120_000_000_000 }, "nanoseconds within the deadline")
        // In flight: up to the eight sent at once, and none once every outcome is in.
        let inFlight = try metrics.expectGauge("push_requests_in_flight").values
        #expect(inFlight.count == 16 && (inFlight.max() ?? 0) >= 1 && (inFlight.max() ?? 0) <= 8 && inFlight.last == 0, "\(inFlight)")
        let connections = try metrics.expectGauge("push_connections")
        #expect(connections.lastValue == Double(client.openConnectionCount) && client.openConnectionCount >= 1)

        await client.shutdown()
        // The pool's connections close as the client shuts down; the gauge follows (within 10 s:
        // under the whole suite's load a close took over the 2 s this once allowed).
        for _ in 0..<500 where connections.lastValue != 0 { try await Task.sleep(for: .milliseconds(20)) }
        #expect(connections.lastValue == 0)
    }
}
