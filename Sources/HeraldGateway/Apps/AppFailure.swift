import HeraldClient
import HeraldProtocol

/// The answers that condemn an app's credentials or server rather than one device, in one
/// place: the gateway pauses the app's sending on them (its deliveries wait, within their
/// expiration) instead of throwing every delivery away, and says what to fix.
///
/// - APNs refused the provider token or certificate: `InvalidProviderToken`,
///   `ExpiredProviderToken` (after the client's fresh token: the clock or the key is wrong),
///   `MissingProviderToken`, `BadCertificate`, `BadCertificateEnvironment`, `Forbidden`,
///   `UnrelatedKeyIdInToken`, `BadEnvironmentKeyIdInToken`, `BadEnvironmentKeyInToken`
///   (Apple's "Handling notification responses from APNs").
/// - The topic is the app's (the bundle ID and the push type's suffix) and APNs refused it:
///   `TopicDisallowed`, `BadTopic`. A topic the submission named itself is that
///   notification's fault, and only its deliveries are rejected.
/// - The endpoint cannot be used: its name does not resolve, its TLS certificate is not
///   trusted, TLS fails, it does not speak HTTP/2 (``ConnectionFailure/Cause/isPersistent``).
///   A refused or silent endpoint is an outage instead: deliveries wait and retry.
struct AppFailure: Sendable, Equatable {
    /// What happened, in a sentence.
    var reason: String
    /// What the operator does about it.
    var advice: String

    static let credentialReasons: Set<APNsReason> = [
        .invalidProviderToken, .expiredProviderToken, .missingProviderToken, .badCertificate, .badCertificateEnvironment, .forbidden,
        .unrelatedKeyIDInToken, .badEnvironmentKeyIDInToken, .badEnvironmentKeyInToken,
    ]
    static let topicReasons: Set<APNsReason> = [.topicDisallowed, .badTopic]

    /// The app-level failure `result` stands for, if it is one; `usesAppTopic` says whether the
    /// request's topic was the app's own (not one the submission named).
    static func of(_ result: Result<APNsResponse, APNsClientError>, app: GatewayApp, usesAppTopic: Bool) -> AppFailure? {
        guard case .failure(let error) = result else { return nil }
        let path = "PATCH /v1/apps/\(app.id)"
        if let reason = error.reason, error.kind == .rejected {
            let answered = "APNs answered \(error.status.map(String.init) ?? "") \(reason.rawValue)"
            if credentialReasons.contains(reason) {
                let fix: String
                switch app.credentials {
                case .token:
                    fix = reason == .expiredProviderToken
                        ? "the provider token was refused as expired although it was fresh: check this machine's clock, then \(path) or POST /v1/apps/\(app.id)/resume"
                        : "\(path) with the right \"token\": the .p8 file's text, its 10-character key ID and your team ID, from the Apple Developer account of the app's team"
                case .certificate:
                    fix = "\(path) with a \"certificate\" valid for \(app.environment.rawValue) and \(app.bundleID) (a production certificate for production, a development one for sandbox)"
                }
                return AppFailure(reason: answered, advice: fix)
            }
            if topicReasons.contains(reason), usesAppTopic {
                return AppFailure(
                    reason: answered,
                    advice: "the credentials may not push to \(app.bundleID): \(path) with the app's right \"bundleId\", or credentials of the team that owns it")
            }
            return nil
        }
        guard let connection = error.connectionFailure, connection.cause.isPersistent else { return nil }
        let fix: String
        switch connection.cause {
        case .tlsUntrusted: fix = "\(path) with \"server\": {\"caCertificate\": the server's CA as PEM text} (a herald mock prints its CA), or the host its certificate names"
        case .nameNotResolved: fix = "\(path) with the right \"server\" host, or remove \"server\" to send to Apple"
        case .notHTTP2: fix = "\(path): the server does not speak HTTP/2; for a herald mock started with --plaintext, set \"server\": {\"plaintext\": true}"
        default: fix = "\(path) with a \"server\" and credentials that work: \(connection.advice)"
        }
        return AppFailure(reason: "\(connection)", advice: fix)
    }
}
