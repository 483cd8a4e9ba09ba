import Foundation
@testable import HeraldClient
@testable import HeraldGateway
import HeraldProtocol
import Testing

/// The retry policy against Apple's “Handling notification responses from APNs”: which answers
/// end a delivery, which mark its token dead, which are tried again and when.
@Suite struct GatewayRetryPolicyTests {
    let policy = GatewayRetryPolicy(initialDelay: .seconds(1), maximumDelay: .seconds(300))

    func rejection(_ status: Int, _ reason: APNsReason?, at date: Date? = nil) -> Result<APNsResponse, APNsClientError> {
        .failure(APNsClientError(kind: .rejected, reason: reason, status: status, unregisteredAt: date, message: "test"))
    }

    @Test func deadTokensAndFinalRejections() {
        let date = Date(timeIntervalSince1970: 1_790_000_000.5)
        guard case .rejected(410, "Unregistered", 1_790_000_000_500, true)? = policy.outcome(of: rejection(410, .unregistered, at: date), attempts: 1, expiresAt: .max, now: 0) else {
            Issue.record("410 Unregistered: rejected, the token dead, the time kept to the millisecond")
            return
        }
        for reason in [APNsReason.badDeviceToken, .expiredToken] {
            guard case .rejected(_, _, _, true)? = policy.outcome(of: rejection(reason.status ?? 400, reason), attempts: 1, expiresAt: .max, now: 0) else {
                Issue.record("\(reason): the token is dead")
                continue
            }
        }
        for reason in [APNsReason.badTopic, .deviceTokenNotForTopic, .payloadTooLarge, .forbidden, .invalidProviderToken, .badCollapseID] {
            guard case .rejected(_, reason.rawValue, nil, false)? = policy.outcome(of: rejection(reason.status ?? 400, reason), attempts: 1, expiresAt: .max, now: 0) else {
                Issue.record("\(reason): final, the token kept")
                continue
            }
        }
    }

    @Test func retryableAnswersWaitLongerEachTime() {
        for (status, reason) in [(429, APNsReason.tooManyRequests), (500, .internalServerError), (503, .serviceUnavailable)] {
            var previousCeiling: Int64 = 0
            for attempt in 1...12 {
                guard case .retry(let at, reason.rawValue)? = policy.outcome(of: rejection(status, reason), attempts: attempt, expiresAt: .max, now: 10_000) else {
                    Issue.record("\(status) on attempt \(attempt): retried")
                    break
                }
                let ceiling = min(Int64(1_000) << Int64(attempt - 1), 300_000)
                #expect(at - 10_000 >= ceiling / 2 && at - 10_000 <= ceiling, "attempt \(attempt): between half and all of \(ceiling) ms")
                #expect(ceiling >= previousCeiling)
                previousCeiling = ceiling
            }
        }
        let lost = Result<APNsResponse, APNsClientError>.failure(APNsClientError(kind: .connectionFailed, message: "reset"))
        guard case .retry? = policy.outcome(of: lost, attempts: 1, expiresAt: .max, now: 0) else { Issue.record("a lost connection is retried"); return }
        let late = Result<APNsResponse, APNsClientError>.failure(APNsClientError(kind: .deadlineExceeded, message: "late"))
        guard case .retry? = policy.outcome(of: late, attempts: 1, expiresAt: .max, now: 0) else { Issue.record("a deadline is retried"); return }
    }

    @Test func retriesStopAtTheExpiration() {
        // The next try would come after the expiration: expired instead.
        guard case .expired("ServiceUnavailable")? = policy.outcome(of: rejection(503, .serviceUnavailable), attempts: 3, expiresAt: 10_500, now: 10_000) else {
            Issue.record("past the expiration: expired")
            return
        }
        guard case .retry? = policy.outcome(of: rejection(503, .serviceUnavailable), attempts: 1, expiresAt: 20_000, now: 10_000) else {
            Issue.record("before it: retried")
            return
        }
    }

    @Test func acceptedAndShutDown() {
        let accepted = Result<APNsResponse, APNsClientError>.success(APNsResponse(apnsID: "x", uniqueID: nil, requestID: nil, channelID: nil, status: 200, body: [], attempts: 1))
        guard case .accepted(200)? = policy.outcome(of: accepted, attempts: 1, expiresAt: 0, now: 0) else { Issue.record("accepted"); return }
        let shutDown = Result<APNsResponse, APNsClientError>.failure(APNsClientError(kind: .shutDown, message: "bye"))
        #expect(policy.outcome(of: shutDown, attempts: 1, expiresAt: .max, now: 0) == nil, "not an attempt: given back")
    }
}
