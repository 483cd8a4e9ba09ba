import NIOCore

/// When a pool may try to connect to its endpoint: at will while connections succeed; once one
/// fails, one attempt at a time, each after a backoff that doubles from ``initialBackoff`` to
/// ``maximumBackoff`` (half of it fixed, half at random, so many clients do not retry in step).
///
/// A value owned by the pool's state, with no I/O and no clock of its own: the pool says when
/// an attempt failed or succeeded, and asks whether it may try now. The changes it reports
/// (unreachable, reachable again) are what the pool logs, once per outage.
struct ConnectionBreaker {
    /// What an attempt's outcome changed.
    enum Change: Equatable {
        case none
        /// The first failure after a success (or of the first attempt).
        case becameUnreachable(error: ConnectionFailure)
        /// The first success after failures; how long the endpoint was unreachable.
        case becameReachable(after: Duration)
    }

    static let initialBackoff: TimeAmount = .milliseconds(250)
    static let maximumBackoff: Duration = .seconds(30)

    /// Failed attempts since the last success.
    private(set) var failures = 0
    /// No attempt before this, while failing.
    private(set) var retryAt: NIODeadline?
    /// Why the last attempt failed.
    private(set) var lastError: ConnectionFailure?
    /// Whether that failure is one waiting cannot mend soon (``ConnectionFailure/Cause/isPersistent``:
    /// a name that does not resolve, an untrusted certificate, a server that does not speak
    /// HTTP/2, a proxy that refuses): requests then fail at once with it instead of waiting for
    /// the next attempt.
    private(set) var lastErrorIsFatal = false
    private var unreachableSince: NIODeadline?
    private let random: @Sendable (ClosedRange<Int64>) -> Int64

    init(random: @escaping @Sendable (ClosedRange<Int64>) -> Int64 = { Int64.random(in: $0) }) {
        self.random = random
    }

    /// Whether a new connection may be opened now, `opening` being those already being opened.
    func mayConnect(now: NIODeadline, opening: Int) -> Bool {
        guard failures > 0 else { return true }
        return opening == 0 && now >= (retryAt ?? now)
    }

    mutating func failed(now: NIODeadline, error: ConnectionFailure) -> Change {
        failures += 1
        lastError = error
        lastErrorIsFatal = error.cause.isPersistent
        let shift = min(failures - 1, 20)
        let ceiling = min(Self.initialBackoff.nanoseconds << Int64(shift), Self.maximumBackoff.nanoseconds)
        retryAt = now + .nanoseconds(ceiling / 2 + random(0...max(ceiling / 2, 1)))
        guard unreachableSince == nil else { return .none }
        unreachableSince = now
        return .becameUnreachable(error: error)
    }

    mutating func succeeded(now: NIODeadline) -> Change {
        defer {
            failures = 0
            retryAt = nil
            lastError = nil
            lastErrorIsFatal = false
            unreachableSince = nil
        }
        guard let since = unreachableSince else { return .none }
        return .becameReachable(after: .nanoseconds((now - since).nanoseconds))
    }
}
