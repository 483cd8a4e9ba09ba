import Foundation
import Synchronization

/// Makes and caches the provider token for one key, refreshing it on a policy: one token per key
/// shared by every connection and worker, as Apple asks ("Establishing a token-based connection to
/// APNs": refresh no more than once every 20 minutes and no less than once every 60).
///
/// ```swift
/// let signer = ProviderTokenSigner(key: key)
/// let bearer = signer.token().rawValue
/// ```
///
/// Safe to share between threads and tasks; asking for the token never suspends, so an event loop
/// can ask for it while writing a request.
public final class ProviderTokenSigner: Sendable {
    /// When to make a new token.
    public struct RefreshPolicy: Sendable, Hashable {
        /// The age at which a token is replaced: 50 minutes by default.
        public let interval: TimeInterval

        /// The shortest interval Apple allows: a new token more often than every 20 minutes on
        /// one connection gives 429 `TooManyProviderTokenUpdates`.
        public static let minimumInterval: TimeInterval = 20 * 60
        /// The longest: APNs refuses tokens older than 60 minutes.
        public static let maximumInterval: TimeInterval = 60 * 60

        /// A policy; the interval is clamped to 20…60 minutes.
        public init(interval: TimeInterval = 50 * 60) {
            self.interval = min(max(interval, Self.minimumInterval), Self.maximumInterval)
        }
    }

    /// The key tokens are signed with.
    public let key: ProviderSigningKey
    /// The refresh policy.
    public let policy: RefreshPolicy
    private let now: @Sendable () -> Date
    private let current = Mutex<ProviderToken?>(nil)

    /// A signer; `now` is the clock (injectable for tests).
    public init(key: ProviderSigningKey, policy: RefreshPolicy = RefreshPolicy(), now: @escaping @Sendable () -> Date = Date.init) {
        self.key = key
        self.policy = policy
        self.now = now
    }

    /// The current token, made anew when the cached one reached the policy's age.
    public func token() -> ProviderToken {
        let time = now()
        return current.withLock { current in
            if let token = current, time.timeIntervalSince1970 - Double(token.issuedAt) < policy.interval {
                return token
            }
            let token = ProviderToken.sign(with: key, issuedAt: time)
            current = token
            return token
        }
    }

    /// After APNs answered `ExpiredProviderToken` for `rejected`: a new token if `rejected` is
    /// still the current one (so many requests failing together refresh once), otherwise the
    /// current token.
    public func token(replacing rejected: ProviderToken) -> ProviderToken {
        let time = now()
        return current.withLock { current in
            if let token = current, token != rejected { return token }
            let token = ProviderToken.sign(with: key, issuedAt: time)
            current = token
            return token
        }
    }
}
