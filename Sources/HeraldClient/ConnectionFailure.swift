import NIOCore
import NIOPosix
import NIOSSL

/// Why no connection to an APNs endpoint could be made or kept, as a person fixes it: the name
/// did not resolve, the server refused, nothing answered, its TLS certificate is not trusted…
///
/// ``APNsClientError/connectionFailure`` carries it for a request that never got an answer
/// because of the connection (``APNsClientError/Kind/connectionFailed``, and a deadline passed
/// while the endpoint refused).
public struct ConnectionFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure it is.
    public enum Cause: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// The host name does not resolve (DNS).
        case nameNotResolved = "dns"
        /// The server refused the connection: nothing listens on that port, or a firewall says no.
        case refused
        /// The network has no route to the host.
        case unreachable
        /// Nothing answered in time (the connection, the TLS handshake or the HTTP/2 settings).
        case timeout
        /// The server's TLS certificate is not trusted here (an unknown CA, a self-signed
        /// certificate, a name that does not match).
        case tlsUntrusted = "tls-untrusted"
        /// TLS failed otherwise (no common version or cipher, a client certificate refused).
        case tls
        /// The server does not speak HTTP/2 (ALPN chose something else).
        case notHTTP2 = "not-http2"
        /// The HTTP proxy refused the tunnel.
        case proxy
        /// The connection closed or broke.
        case closed

        /// The cause's name, as in logs and metrics.
        public var description: String { rawValue }

        /// Whether another attempt in a moment will not mend it: the configuration (a name, a
        /// trusted CA, a proxy's credentials) or the server is wrong.
        public var isPersistent: Bool {
            switch self {
            case .nameNotResolved, .tlsUntrusted, .tls, .notHTTP2, .proxy: true
            case .refused, .unreachable, .timeout, .closed: false
            }
        }

        /// The cause in a few words.
        public var phrase: String {
            switch self {
            case .nameNotResolved: "the host name does not resolve"
            case .refused: "the connection was refused"
            case .unreachable: "the network cannot reach the host"
            case .timeout: "no answer in time"
            case .tlsUntrusted: "the server's TLS certificate is not trusted"
            case .tls: "the TLS handshake failed"
            case .notHTTP2: "the server does not speak HTTP/2"
            case .proxy: "the proxy refused the tunnel"
            case .closed: "the connection closed"
            }
        }
    }

    /// The kind of failure.
    public var cause: Cause
    /// The endpoint, `host:port`.
    public var endpoint: String
    /// What the system said, in one line without source paths (`CERTIFICATE_VERIFY_FAILED`,
    /// `errno 111`).
    public var detail: String

    /// A failure of `cause` at `endpoint`.
    public init(cause: Cause, endpoint: String, detail: String) {
        self.cause = cause
        self.endpoint = endpoint
        self.detail = detail
    }

    /// `cannot connect to api.push.apple.com:443: the server's TLS certificate is not trusted (CERTIFICATE_VERIFY_FAILED)`.
    public var description: String {
        "cannot connect to \(endpoint): \(cause.phrase)" + (detail.isEmpty ? "" : " (\(detail))")
    }

    /// What to do about it, naming the client's settings.
    public var advice: String {
        switch cause {
        case .nameNotResolved: "check the host name (api.push.apple.com, api.sandbox.push.apple.com, or your mock's) and the machine's DNS"
        case .refused: "check the port (443 or 2197 for APNs, your mock's port otherwise) and that the server runs; requests wait for it within their deadline"
        case .unreachable: "check the network route and the firewall"
        case .timeout: "check the firewall and the network; a proxy may be needed"
        case .tlsUntrusted: "trust the server's CA (additionalTrustRootsPEM; a herald mock prints its CA file), or check that the host name matches its certificate"
        case .tls: "check the client certificate and that the server is an APNs endpoint"
        case .notHTTP2: "APNs speaks HTTP/2 over TLS: check the host and port, and plaintext for a mock started with --plaintext"
        case .proxy: "check the proxy's address and credentials"
        case .closed: "the server or the network closed the connection; requests are retried within their deadline"
        }
    }

    /// The failure an error from opening a connection to `endpoint` stands for.
    static func classify(_ error: any Error, endpoint: String) -> ConnectionFailure {
        if let failure = error as? ConnectionFailure { return failure }
        if let failure = error as? AttemptFailure, case .connectFailed(let inner) = failure { return inner }
        if let error = error as? NIOConnectionError {
            if let first = error.connectionErrors.first { return classify(first.error, endpoint: endpoint) }
            let dns = (error.dnsAError ?? error.dnsAAAAError).map { "\($0)" } ?? "no address"
            // `SocketAddressError.UnknownHost: Name or service not known (error -2) for host …`:
            // the resolver's own words are what a reader needs.
            var words = Substring(dns)
            if let colon = words.range(of: ": ") { words = words[colon.upperBound...] }
            if let end = words.range(of: " (error") ?? words.range(of: " for host") { words = words[..<end.lowerBound] }
            return ConnectionFailure(cause: .nameNotResolved, endpoint: endpoint, detail: String(words))
        }
        if let error = error as? IOError {
            switch error.errnoCode {
            case 111: return ConnectionFailure(cause: .refused, endpoint: endpoint, detail: "ECONNREFUSED")
            case 110: return ConnectionFailure(cause: .timeout, endpoint: endpoint, detail: "ETIMEDOUT")
            case 101, 113: return ConnectionFailure(cause: .unreachable, endpoint: endpoint, detail: error.errnoCode == 101 ? "ENETUNREACH" : "EHOSTUNREACH")
            default: return ConnectionFailure(cause: .closed, endpoint: endpoint, detail: "errno \(error.errnoCode)")
            }
        }
        if let error = error as? ChannelError, case .connectTimeout(let amount) = error {
            return ConnectionFailure(cause: .timeout, endpoint: endpoint, detail: "no TCP connection within \(amount.nanoseconds / 1_000_000) ms")
        }
        if let error = error as? NIOSSLExtraError, error == .failedToValidateHostname {
            return ConnectionFailure(cause: .tlsUntrusted, endpoint: endpoint, detail: "the certificate is not for this host name")
        }
        if let error = error as? NIOSSLError {
            let code = Self.openSSLCode(in: "\(error)")
            let untrusted = ["CERTIFICATE_VERIFY_FAILED", "TLSV1_ALERT_UNKNOWN_CA"].contains(code ?? "")
            return ConnectionFailure(cause: untrusted ? .tlsUntrusted : .tls, endpoint: endpoint, detail: code ?? Self.withoutPaths("\(error)"))
        }
        return ConnectionFailure(cause: .closed, endpoint: endpoint, detail: Self.withoutPaths("\(error)"))
    }

    /// BoringSSL's reason code in an error's text (`…:OPENSSL_internal:CERTIFICATE_VERIFY_FAILED at
    /// /path/handshake.cc:320`): the upper-case word after the last colon before ` at `.
    static func openSSLCode(in text: String) -> String? {
        guard let range = text.range(of: "OPENSSL_internal:") else { return nil }
        let code = text[range.upperBound...].prefix { $0.isUppercase || $0.isNumber || $0 == "_" }
        return code.isEmpty ? nil : String(code)
    }

    /// `text` with ` at /a/source/path.cc:123` pieces removed: a build machine's paths mean
    /// nothing to the reader.
    static func withoutPaths(_ text: String) -> String {
        var result = ""
        var rest = Substring(text)
        while let range = rest.range(of: " at /") {
            result += rest[..<range.lowerBound]
            rest = rest[range.upperBound...].drop { $0 != " " && $0 != "]" && $0 != ")" && $0 != "," }
        }
        return result + rest
    }
}
