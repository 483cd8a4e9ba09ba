import Foundation
import HeraldAuth
import HeraldProtocol
import Logging
import Metrics

/// How an ``APNsClient`` reaches APNs, authenticates, and behaves under load and failure.
///
/// The defaults suit production use: TLS with the system's trust store, two connections opened on
/// demand, at most 1,000 requests in flight, a 30-second deadline per request (retries included),
/// and up to three attempts for the failures Apple says may be retried.
public struct APNsClientConfiguration: Sendable {
    /// Where requests go.
    public enum Server: Sendable, Hashable, CustomStringConvertible {
        /// `api.push.apple.com`.
        case production
        /// `api.sandbox.push.apple.com`.
        case sandbox
        /// Any host and port, such as a `herald mock`; `environment` is what the server plays
        /// (used in messages and advice).
        case custom(host: String, port: Int, environment: APNsEnvironment = .sandbox)

        /// The host name connected to.
        public var host: String {
            switch self {
            case .production: APNsEnvironment.production.host
            case .sandbox: APNsEnvironment.sandbox.host
            case .custom(let host, _, _): host
            }
        }

        /// The environment the server belongs to.
        public var environment: APNsEnvironment {
            switch self {
            case .production: .production
            case .sandbox: .sandbox
            case .custom(_, _, let environment): environment
            }
        }

        /// `host:port`.
        public var description: String { "\(host):\(defaultPort)" }

        var defaultPort: Int {
            if case .custom(_, let port, _) = self { return port }
            return APNsEnvironment.port
        }
    }

    /// How the client proves who it is.
    public enum Credentials: Sendable {
        /// Token-based: a provider token (JWT) signed with this key on every request, one token
        /// shared by all connections and refreshed on the policy.
        case token(ProviderSigningKey, refresh: ProviderTokenSigner.RefreshPolicy = .init())
        /// Certificate-based: the client certificate is presented in the TLS handshake.
        case certificate(APNsCertificateIdentity)
    }

    /// When failed attempts are tried again.
    public struct RetryPolicy: Sendable, Hashable {
        /// The most attempts per request, the first included (1 never retries).
        public var maximumAttempts: Int
        /// The wait before the second attempt; it doubles each time, with full jitter.
        public var initialBackoff: Duration
        /// The longest wait between two attempts.
        public var maximumBackoff: Duration

        /// A policy; `maximumAttempts` is at least 1.
        public init(maximumAttempts: Int = 3, initialBackoff: Duration = .milliseconds(100), maximumBackoff: Duration = .seconds(5)) {
            self.maximumAttempts = max(1, maximumAttempts)
            self.initialBackoff = initialBackoff
            self.maximumBackoff = maximumBackoff
        }

        /// One attempt only.
        public static let never = RetryPolicy(maximumAttempts: 1)
    }

    /// An HTTP proxy reached with `CONNECT`.
    public struct Proxy: Sendable, Hashable {
        /// The proxy's host.
        public var host: String
        /// The proxy's port.
        public var port: Int
        /// `Proxy-Authorization` credentials (`user:password`, sent as Basic), if the proxy needs them.
        public var basicCredentials: String?

        /// A proxy.
        public init(host: String, port: Int, basicCredentials: String? = nil) {
            self.host = host
            self.port = port
            self.basicCredentials = basicCredentials
        }
    }

    /// The server.
    public var server: Server
    /// The port, when not the server's own (443 for Apple's hosts): 2197 is Apple's alternative.
    public var port: Int?
    /// The credentials.
    public var credentials: Credentials
    /// The broadcast channel-management host, when not the environment's
    /// (`api-manage-broadcast…`; for a custom server, its own host).
    public var channelManagementHost: String?
    /// The channel-management port, when not the environment's (2196 production, 2195 sandbox).
    public var channelManagementPort: Int?
    /// Trusted CA certificates (PEM) besides the system's, such as the CA `herald mock` writes.
    public var additionalTrustRootsPEM: [String] = []
    /// Whether the system's trust store is used (on by default).
    public var trustsSystemRoots: Bool = true
    /// HTTP/2 without TLS, with prior knowledge: only for a `herald mock --plaintext`.
    public var plaintext: Bool = false
    /// An HTTP `CONNECT` proxy, if connections must go through one.
    public var proxy: Proxy?
    /// The most connections to the server; each carries as many streams as the server allows.
    public var maximumConnections: Int = 2
    /// The most requests in flight over the whole client; `send` suspends beyond it, within the
    /// request's deadline (a request that finds no place in time is not sent, and fails with
    /// ``APNsClientError/Kind/deadlineExceeded`` and no attempt).
    public var maximumRequestsInFlight: Int = 1_000
    /// The longest a request may take from `send` to its outcome, retries included.
    public var requestTimeout: Duration = .seconds(30)
    /// The longest a connection may take to open (TCP, proxy, TLS and HTTP/2 settings).
    public var connectTimeout: Duration = .seconds(10)
    /// Retries after connection failures, 429, 500 and 503.
    public var retry: RetryPolicy = .init()
    /// A connection with no request for this long is closed (`nil`: never).
    public var idleTimeout: Duration? = .seconds(300)
    /// An idle connection is checked with an HTTP/2 PING this often, and closed if the answer
    /// does not come within ``pingTimeout`` (`nil`: no PINGs).
    public var pingInterval: Duration? = .seconds(60)
    /// How long a PING may go unanswered.
    public var pingTimeout: Duration = .seconds(10)
    /// Whether each payload is linted before it is sent, and refused when APNs would reject it.
    public var lintsBeforeSending: Bool = false
    /// The logger; device tokens in its messages are shortened unless ``logsFullDeviceTokens``.
    public var logger: Logger = Logger(label: "herald.client")
    /// Whether log messages carry full device tokens (off: the first 8 hex digits and `…`).
    public var logsFullDeviceTokens: Bool = false
    /// The prefix of the swift-metrics labels (`herald_client_sent_total`, …).
    public var metricsPrefix: String = "herald_client"
    /// Where the metrics go: `nil` (the default) uses the factory the application bootstrapped
    /// with `MetricsSystem.bootstrap`; a factory of its own keeps this client's metrics apart.
    public var metricsFactory: (any MetricsFactory)? = nil
    /// The clock (token ages, timestamps); injectable for tests.
    public var now: @Sendable () -> Date = Date.init

    /// A configuration for `server` with `credentials` and the defaults.
    public init(server: Server, credentials: Credentials) {
        self.server = server
        self.credentials = credentials
    }

    /// The port connected to.
    public var effectivePort: Int { port ?? server.defaultPort }
}

extension Duration {
    var timeInterval: TimeInterval {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }

    /// Saturating: a deadline of `.seconds(Int64.max)` means "never", not a crash.
    var nanoseconds: Int64 {
        let (scaled, overflow) = components.seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return components.seconds < 0 ? .min : .max }
        let (sum, overflowAgain) = scaled.addingReportingOverflow(components.attoseconds / 1_000_000_000)
        return overflowAgain ? (scaled < 0 ? .min : .max) : sum
    }
}
