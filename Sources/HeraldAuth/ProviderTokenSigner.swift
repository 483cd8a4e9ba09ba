import Foundation

/// Makes and caches the provider token for one key, refreshing it on a policy: one token per key
/// shared by every connection and worker, as Apple asks ("Establishing a token-based connection to
/// APNs": refresh no more than once every 20 minutes and no less than once every 60).
///
/// ```swift
/// let signer = ProviderTokenSigner(key: key)
/// let bearer = await signer.token().rawValue
/// ```
public actor ProviderTokenSigner {
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
    public nonisolated let key: ProviderSigningKey
    /// The refresh policy.
    public nonisolated let policy: RefreshPolicy
    private let now: @Sendable () -> Date
    private var current: ProviderToken?

    /// A signer; `now` is the clock (injectable for tests).
    public init(key: ProviderSigningKey, policy: RefreshPolicy = RefreshPolicy(), now: @escaping @Sendable () -> Date = Date.init) {
        self.key = key
        self.policy = policy
        self.now = now
    }

    /// The current token, made anew when the cached one reached the policy's age.
    public func token() -> ProviderToken {
        let time = now()
        if let current, time.timeIntervalSince1970 - Double(current.issuedAt) < policy.interval {
            return current
        }
        let token = ProviderToken.sign(with: key, issuedAt: time)
        current = token
        return token
    }

    /// After APNs answered `ExpiredProviderToken` for `rejected`: a new token if `rejected` is
    /// still the current one (so many requests failing together refresh once), otherwise the
    /// current token.
    public func token(replacing rejected: ProviderToken) -> ProviderToken {
        if let current, current != rejected { return current }
        let token = ProviderToken.sign(with: key, issuedAt: now())
        current = token
        return token
    }
}
