import Foundation
import HeraldAuth
import HeraldClient
import HeraldLocalization
import HeraldProtocol
import NIOSSL

/// How a ``MockAPNsServer`` listens, authenticates and judges requests.
///
/// The defaults are what `herald mock` starts with no flags (TLS with a development CA made at
/// start-up, the sandbox environment, token authentication without registered keys, so tokens
/// are checked for form, algorithm and age but not signature, every well-formed device token a
/// simulated device, and the lenient choices where Apple's behaviour is undocumented), except the
/// ports: the APNs port is 2197 as there, but the API and channel-management ports are 0 (a free
/// port each, so that mocks in tests never collide), where `herald mock` uses 8197 and 2195 or
/// 2196.
public struct MockConfiguration: Sendable {
    /// How connections are secured.
    public enum Transport: Sendable {
        /// TLS 1.2+ with ALPN `h2`, using a development CA and server certificate made at start-up
        /// (``MockAPNsServer/trustRootPEM`` holds the CA for clients).
        case generatedTLS
        /// TLS 1.2+ with ALPN `h2` and this certificate chain and key.
        case tls(certificateChain: [NIOSSLCertificate], privateKey: NIOSSLPrivateKey)
        /// HTTP/2 without TLS, with prior knowledge (`curl --http2-prior-knowledge`): for tests on
        /// loopback.
        case plaintext
    }

    /// How providers authenticate.
    public enum Authentication: Sendable {
        /// Provider tokens (`authorization: bearer <JWT>`), as Apple's token-based connections.
        case token
        /// TLS client certificates (mutual TLS), as Apple's certificate-based connections: the
        /// topics come from the certificate. Certificates are verified against `trustRoots`
        /// (the generated CA is always one when the transport is ``Transport/generatedTLS``), or
        /// accepted unverified when `acceptsAnyCertificate` is set (for Apple-issued
        /// certificates, whose CA the mock does not have).
        case certificate(trustRoots: [NIOSSLCertificate], acceptsAnyCertificate: Bool)
    }

    /// Where Apple's behaviour is undocumented: what the mock does. The defaults follow what
    /// real APNs is reported to do; ``strict`` rejects each.
    public struct Leniency: Sendable, Hashable {
        /// A `background` push at priority 10: Apple says "an error" but documents no reason;
        /// APNs is reported to accept it (and not wake the app). Strict: 400 `BadPriority`.
        public var acceptsBackgroundAtPriority10: Bool
        /// A topic without the suffix its push type needs (`.voip`, `.push-type.liveactivity`,
        /// …): reported answered with 400 `DeviceTokenNotForTopic`, which is the default.
        /// Setting this accepts such pushes.
        public var acceptsTopicSuffixMismatch: Bool
        /// `apns-id` with uppercase hex: Apple specifies lowercase; APNs is reported to accept
        /// uppercase. Strict: 400 `BadMessageId`.
        public var acceptsUppercaseAPNsID: Bool
        /// A provider token whose `iat` is a string (`"1700000000"`): reported accepted.
        /// Strict: 403 `InvalidProviderToken`.
        public var acceptsStringIssuedAt: Bool
        /// A provider token whose `iat` has a fraction (`1700000000.25`, as PyAPNs2 and
        /// apns2-up sign with `time.time()`; RFC 7519's NumericDate allows it): its whole
        /// seconds are used. Strict: 403 `InvalidProviderToken`.
        public var acceptsFractionalIssuedAt: Bool

        /// The reported behaviour of real APNs.
        public static let `default` = Leniency(
            acceptsBackgroundAtPriority10: true, acceptsTopicSuffixMismatch: false,
            acceptsUppercaseAPNsID: true, acceptsStringIssuedAt: true, acceptsFractionalIssuedAt: true)
        /// Rejects every undocumented case.
        public static let strict = Leniency(
            acceptsBackgroundAtPriority10: false, acceptsTopicSuffixMismatch: false,
            acceptsUppercaseAPNsID: false, acceptsStringIssuedAt: false, acceptsFractionalIssuedAt: false)

        /// Creates a leniency setting.
        public init(
            acceptsBackgroundAtPriority10: Bool, acceptsTopicSuffixMismatch: Bool, acceptsUppercaseAPNsID: Bool, acceptsStringIssuedAt: Bool,
            acceptsFractionalIssuedAt: Bool = true
        ) {
            self.acceptsBackgroundAtPriority10 = acceptsBackgroundAtPriority10
            self.acceptsTopicSuffixMismatch = acceptsTopicSuffixMismatch
            self.acceptsUppercaseAPNsID = acceptsUppercaseAPNsID
            self.acceptsStringIssuedAt = acceptsStringIssuedAt
            self.acceptsFractionalIssuedAt = acceptsFractionalIssuedAt
        }

        /// Each undocumented point, its default and its strict answer: what `herald mock --help`
        /// and the docs list.
        public static let points: [(name: String, lenient: String, strict: String)] = [
            ("background push at priority 10", "accepted (reported; the app is not woken)", "400 BadPriority"),
            ("topic without its push type's suffix", "400 DeviceTokenNotForTopic (reported)", "400 DeviceTokenNotForTopic"),
            ("apns-id with uppercase hex", "accepted (reported)", "400 BadMessageId"),
            ("provider token with a string iat", "accepted (reported)", "403 InvalidProviderToken"),
            ("provider token with a fractional iat (RFC 7519 allows it)", "accepted, its whole seconds", "403 InvalidProviderToken"),
        ]
    }

    /// The host to bind: `127.0.0.1` by default (loopback only); `0.0.0.0` or `::` for every
    /// interface.
    public var host: String = "127.0.0.1"
    /// The APNs port (Apple's alternate port 2197 by default); 0 picks a free one.
    public var port: Int = 2197
    /// The channel-management port (broadcast channels); 0 picks a free one, `nil` disables it.
    public var channelPort: Int? = 0
    /// The inspection API, event stream and metrics port; 0 picks a free one, `nil` disables it.
    public var apiPort: Int? = 0
    /// How connections are secured.
    public var transport: Transport = .generatedTLS
    /// How providers authenticate.
    public var authentication: Authentication = .token
    /// The environment the mock plays: `sandbox` answers with `apns-unique-id`.
    public var environment: APNsEnvironment = .sandbox
    /// Keys whose signatures are verified. With none, tokens are checked for form, algorithm and
    /// age only.
    public var keys: [ProviderPublicKey] = []
    /// Device tokens that answer 410 `Unregistered` from the start.
    public var unregisteredTokens: [DeviceToken] = []
    /// Whether an unknown well-formed device token becomes a simulated device for the request's
    /// topic and environment (the default). When off, only registered devices are accepted and
    /// others answer 400 `BadDeviceToken`.
    public var registersDevicesOnFirstPush: Bool = true
    /// Fault rules, applied in order.
    public var faults: [FaultRule] = []
    /// The undocumented points.
    public var leniency: Leniency = .default
    /// How many requests the store keeps (the newest); older ones are dropped.
    public var storeCapacity: Int = 10_000
    /// How many devices keep a history (Notification Center, up to 64 notifications, and the
    /// event log): the most recently reached. Older devices keep their token, binding, badge
    /// and Live Activities but forget what they showed (``MockDevice/historyForgotten``), so a
    /// load test over many devices holds the mock's memory flat.
    public var deviceHistories: Int = 1_000
    /// An SQLite file that keeps every request across restarts (`nil`, the default: memory
    /// only). Each request's answer waits until its row is committed; the API reads from it.
    public var databasePath: String? = nil
    /// How many requests the database keeps (the newest).
    public var databaseKeepCount: Int = 100_000
    /// Requests older than this are deleted from the database (`nil`: kept whatever their age).
    public var databaseMaximumAge: Duration? = nil
    /// Tests only: each database write waits this long first (a slow disk).
    var databaseWriteDelay: Duration? = nil
    /// `SETTINGS_MAX_CONCURRENT_STREAMS` once a connection is authenticated (token auth starts
    /// at 1 until a valid token is seen).
    public var maximumConcurrentStreams: Int = 1000
    /// The largest request body read; bigger bodies are counted, not kept, and answered 413.
    public var maximumBodyBytes: Int = 64 * 1024
    /// The longest a connection may stay without a request before the mock sends `GOAWAY` with
    /// `IdleTimeout`; `nil` never.
    public var idleTimeout: Duration? = nil
    /// Tests only: how long a client has for its preface and first SETTINGS, and a request (or
    /// a frame) from its start to its end, before its connection goes away as a slow client's.
    var slowClientTimeouts: (preface: Duration, request: Duration) = (.seconds(10), .seconds(30))
    /// The app's strings (an app bundle, a project tree or one table, as `herald preview` reads
    /// them): pushes render as the app would show them. `nil`: `loc-key`s show as the keys.
    public var localization: LocalizationBundle? = nil
    /// The languages devices render in, most preferred first. The API's `lang` shows a
    /// notification or a device in another.
    public var languages: [String] = ["en"]
    /// Where the inbox's Release sends a stored notification: Apple with real credentials, or
    /// another mock. `nil`: releasing is off.
    public var releaseTarget: ReleaseTarget? = nil
    /// Where each new Live Activity update token is posted, as the app would report it to its
    /// backend (`nil`: not reported; the API and the inbox show them).
    public var activityTokenReport: ActivityTokenReport? = nil
    /// The clock (UNIX seconds); injectable for tests of token age.
    public var now: @Sendable () -> Date = Date.init
    /// Event-loop threads of the mock's own (`nil`: NIO's shared group). A test that floods a
    /// mock in the same process gives it its own threads, so other tests' connections are not
    /// queued behind the flood. The group lives until ``MockAPNsServer/stop()``.
    var ownEventLoopThreads: Int? = nil

    /// The defaults.
    public init() {}

    /// Sets every undocumented point to reject (`herald mock --strict`).
    public var strict: Bool {
        get { leniency == .strict }
        set { leniency = newValue ? .strict : .default }
    }

    /// A setting that cannot work, with the setting's name and what it must be.
    public typealias Problem = ConfigurationProblem

    /// Checks every setting; ``MockAPNsServer/init(configuration:logger:)`` calls it, so an
    /// embedder gets the same checks as `herald mock`.
    ///
    /// - Throws: ``Problem`` for the first setting that cannot work.
    public func validate() throws(Problem) {
        let check = ConfigurationProblem.require
        try check(!host.isEmpty, "host", "an address to bind, such as 127.0.0.1")
        for (name, value) in [("port", port), ("channelPort", channelPort), ("apiPort", apiPort)] {
            if let value { try check((0...65_535).contains(value), name, "\(value) is not a port (0 to 65535)") }
        }
        if case .certificate = authentication, case .plaintext = transport {
            throw Problem(setting: "authentication", message: "client certificates need TLS; the transport is plaintext")
        }
        try check(storeCapacity >= 1, "storeCapacity", "at least 1")
        try check(deviceHistories >= 1, "deviceHistories", "at least 1")
        if let databasePath { try check(!databasePath.isEmpty, "databasePath", "a file name") }
        try check(databaseKeepCount >= 1, "databaseKeepCount", "at least 1")
        let day = Duration.seconds(86_400)
        if let databaseMaximumAge { try check(databaseMaximumAge > .zero, "databaseMaximumAge", "above zero") }
        if let idleTimeout { try check(idleTimeout > .zero && idleTimeout <= day, "idleTimeout", "above zero, at most a day") }
        // SETTINGS_MAX_CONCURRENT_STREAMS is 31 bits on the wire.
        try check((1...Int(Int32.max)).contains(maximumConcurrentStreams), "maximumConcurrentStreams", "from 1 to 2^31-1")
        try check(maximumBodyBytes >= 1, "maximumBodyBytes", "at least 1")
        try check(!languages.isEmpty && !languages.contains(where: \.isEmpty), "languages", "at least one language, such as en or fr-CA")
        if let ownEventLoopThreads { try check(ownEventLoopThreads >= 1, "ownEventLoopThreads", "at least 1") }
    }
}

/// Where stored notifications are released to, as Mailpit releases a captured message to a real
/// mail server: a server with credentials (HeraldClient's `APNsClientConfiguration`) and the name the
/// inbox shows.
public struct ReleaseTarget: Sendable {
    /// The name shown in the inbox (`Apple sandbox`, `127.0.0.1:2297`).
    public var name: String
    /// The client that sends: server, credentials, trusted CAs.
    public var client: APNsClientConfiguration

    /// A target; the name defaults to the server's.
    public init(name: String? = nil, client: APNsClientConfiguration) {
        self.client = client
        self.name = name ?? {
            switch client.server {
            case .production: "Apple production (\(client.server.host))"
            case .sandbox: "Apple sandbox (\(client.server.host))"
            case .custom(let host, let port, _): "\(host):\(port)"
            }
        }()
    }
}

/// Where the mock posts a Live Activity's update token when a start with `input-push-token: 1`
/// creates it, as the app reports it to its backend: `POST url` with a JSON body
/// `{"token", "startToken", "attributesType", "attributes", "topic"}` and `headers`.
public struct ActivityTokenReport: Sendable {
    /// The http or https URL.
    public var url: String
    /// Headers to send (`Authorization` with an API key, for instance).
    public var headers: [(String, String)]

    /// A report to `url` with `headers`.
    public init(url: String, headers: [(String, String)] = []) {
        self.url = url
        self.headers = headers
    }
}
