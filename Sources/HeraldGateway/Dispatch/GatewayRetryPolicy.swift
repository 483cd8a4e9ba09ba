import Foundation
import HeraldClient
import HeraldProtocol

/// What the gateway does with each answer, in one place: which outcomes are final, which are
/// tried again and when, and which make a token dead.
///
/// - Accepted: final.
/// - `Unregistered`, `ExpiredToken` (410) and `BadDeviceToken`: final, and the token is dead
///   (later submissions skip it) — Apple's “Handling notification responses from APNs” says not
///   to retry them.
/// - 429, 500 and 503 (after the client's own attempts), a deadline: tried again after a
///   backoff that doubles from ``initialDelay`` to ``maximumDelay`` with jitter, until the
///   notification expires; then `expired`.
/// - No connection (APNs refused or dropped it): tried again after ``initialDelay`` with jitter,
///   without growing. The client's connection breaker paces the connection attempts (one at a
///   time per endpoint, backing off to 30 seconds) and holds the requests until the endpoint is
///   back, so when it returns, what waits goes out at once instead of after each delivery's own
///   backoff (up to five minutes).
/// - Every other rejection: final (retrying would get the same answer).
/// - The client shutting down: not an attempt; the delivery is given back to the queue.
struct GatewayRetryPolicy: Sendable {
    var initialDelay: Duration = .seconds(1)
    var maximumDelay: Duration = .seconds(300)

    /// The reasons that make a token dead.
    static let deadReasons: Set<APNsReason> = [.unregistered, .expiredToken, .badDeviceToken]

    /// The outcome of `result` for a delivery on its `attempts`-th attempt, or `nil` to give
    /// it back untried.
    func outcome(
        of result: Result<APNsResponse, APNsClientError>, attempts: Int, expiresAt: Int64, now: Int64,
        random: (ClosedRange<Int64>) -> Int64 = { Int64.random(in: $0) }
    ) -> DeliveryOutcome.Result? {
        let error: APNsClientError
        switch result {
        case .success(let response): return .accepted(status: response.status)
        case .failure(let failure): error = failure
        }
        let reason = error.reason?.rawValue
        switch error.kind {
        case .shutDown:
            return nil
        case .rejected:
            if let apnsReason = error.reason, Self.deadReasons.contains(apnsReason) {
                let at = error.unregisteredAt.map { Int64(($0.timeIntervalSince1970 * 1000).rounded()) }
                return .rejected(status: error.status, reason: reason, unregisteredAt: at, deadToken: true)
            }
            guard let status = error.status, [429, 500, 503].contains(status) else {
                return .rejected(status: error.status, reason: reason ?? error.status.map { "HTTP \($0)" }, unregisteredAt: nil, deadToken: false)
            }
            return retry(reason: reason ?? "HTTP \(status)", attempts: attempts, expiresAt: expiresAt, now: now, random: random)
        case .deadlineExceeded where error.attempts == 0:
            // Never written (no place among the client's requests in flight): nothing is unknown.
            return retry(reason: "not sent in time", attempts: attempts, expiresAt: expiresAt, now: now, random: random)
        case .deadlineExceeded:
            let why = error.connectionFailure.map { "no answer in time: \($0)" } ?? "no answer in time"
            return retry(reason: why, attempts: attempts, expiresAt: expiresAt, now: now, random: random)
        case .connectionFailed:
            return retry(reason: error.connectionFailure.map { "\($0)" } ?? "connection failed", attempts: 1, expiresAt: expiresAt, now: now, random: random)
        case .refusedByLint, .payloadTooLarge:
            return .rejected(status: nil, reason: reason ?? "refused before sending", unregisteredAt: nil, deadToken: false)
        }
    }

    /// Due again after the backoff, or expired when that is past the expiration.
    private func retry(reason: String, attempts: Int, expiresAt: Int64, now: Int64, random: (ClosedRange<Int64>) -> Int64) -> DeliveryOutcome.Result {
        let delay = self.delay(afterAttempt: attempts, random: random)
        if now + delay >= expiresAt { return .expired(reason: reason) }
        return .retry(at: now + delay, reason: reason)
    }

    /// Milliseconds before the next attempt: half the exponential ceiling plus up to half again
    /// at random (never nothing: a wave of failures must not retry at once).
    func delay(afterAttempt attempts: Int, random: (ClosedRange<Int64>) -> Int64) -> Int64 {
        let initial = initialDelay.milliseconds, maximum = maximumDelay.milliseconds
        let shift = min(max(attempts - 1, 0), 40)
        let ceiling = min(initial << shift, maximum)
        return ceiling / 2 + random(0...max(ceiling / 2, 1))
    }
}

extension Duration {
    /// Saturating, as a configured window of `.seconds(Int64.max)` means "no limit".
    var milliseconds: Int64 {
        let (scaled, overflow) = components.seconds.multipliedReportingOverflow(by: 1_000)
        if overflow { return components.seconds < 0 ? .min : .max }
        let (sum, overflowAgain) = scaled.addingReportingOverflow(components.attoseconds / 1_000_000_000_000_000)
        return overflowAgain ? .max : sum
    }
}
