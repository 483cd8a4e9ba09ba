import Foundation
import HeraldAuth
import HeraldProtocol

/// One connection's provider authentication as a value, with no I/O: a client certificate's
/// facts (from the TLS handshake) or the provider token last accepted, and the rules Apple gives
/// for both. ``MockCore`` asks it about each request; the connection owns it.
///
/// Token rules ("Establishing a token-based connection to APNs"): a token is verified once per
/// connection and then only its age is checked; it may be at most an hour old; the first accepted
/// push binds the connection to its team; a connection may change its token at most every 20
/// minutes (429 `TooManyProviderTokenUpdates`). Certificate rules ("Establishing a
/// certificate-based connection to APNs"): the certificate must be valid now and for the mock's
/// environment.
struct ProviderAuthentication: Sendable {
    /// The reason a token rotation within this time gives `TooManyProviderTokenUpdates`.
    static let tokenUpdateInterval: TimeInterval = 20 * 60

    /// The client certificate's topics and environments, on a certificate-based connection.
    var certificate: APNsCertificateInfo?
    /// A push the mock sends itself (the inbox's Resend): its sender was authenticated when it
    /// first came, and its record keeps no signature to check again.
    var trusted = false
    /// The provider token last accepted, its `iat`, and when it replaced the one before.
    private(set) var token: String?
    private(set) var tokenIssuedAt: Int64 = 0
    /// The oldest `iat` age the verifier that accepted ``token`` allowed: the token's age is
    /// checked against it on every later request, without reading the verifier again.
    private var tokenMaximumAge: TimeInterval = 0
    private(set) var tokenChangedAt: Date?
    /// The team bound by the first accepted push.
    private(set) var team: String?
    /// What the token last accepted got through only by the mock's leniency (an `iat` as a
    /// string or with a fraction): noted on every record it authenticates, so a developer sees
    /// what `--strict`, and perhaps APNs, would refuse.
    private(set) var tokenLeniencies: [NotificationRecord.Finding] = []
    /// The verifier's verdict on the last token that did not become this connection's, and
    /// when it was given. A client that sends a refused token again (one that expired during a
    /// load test, one signed with the wrong key) is answered from it for ``verdictReuse``
    /// instead of by another ES256 verification: verified on every request, such a token cost
    /// the mock 3.5 times the CPU of an accepted 4 KB push. (A key registered meanwhile is seen
    /// within that time.) With it, the verifier's age limit then.
    private var lastVerdict: (jwt: String, verdict: Result<ProviderToken, ProviderTokenRejection>, at: Date, maximumAge: TimeInterval)?
    /// How long a verdict on a token not accepted is reused on its connection.
    static let verdictReuse: TimeInterval = 1

    /// Decides whether a request with this `authorization` token (`nil` when it has none) may go
    /// on at `now`.
    ///
    /// - Returns: whether a new token was accepted (the connection may then raise its stream
    ///   limit).
    /// - Throws: ``Rejection`` with Apple's reason.
    mutating func authenticate(
        _ jwt: String?, at now: Date, environment: APNsEnvironment, verifier: @autoclosure () -> ProviderTokenVerifier
    ) throws(Rejection) -> Bool {
        if trusted { return false }
        if let certificate {
            if certificate.notValidAfter < now || certificate.notValidBefore > now {
                throw Rejection(.badCertificate, "the client certificate is not valid now (valid \(certificate.notValidBefore) to \(certificate.notValidAfter))")
            }
            guard certificate.environments.contains(environment) else {
                throw Rejection(
                    .badCertificateEnvironment,
                    "the client certificate is for \(certificate.environments.map(\.rawValue).sorted().joined(separator: ", ")), not \(environment)")
            }
            return false
        }
        guard let jwt else {
            throw Rejection(.missingProviderToken, "no authorization header: token-based connections send \"authorization: bearer <provider token>\"")
        }
        if jwt == token {
            // Verified on this connection before: only its age can have changed.
            let age = now.timeIntervalSince1970 - Double(tokenIssuedAt)
            if age > tokenMaximumAge {
                throw Rejection(.expiredProviderToken, "the provider token's iat is \(Int(age)) seconds old; tokens older than one hour are refused: make a new one")
            }
            return false
        }
        let verdict: (jwt: String, verdict: Result<ProviderToken, ProviderTokenRejection>, at: Date, maximumAge: TimeInterval)
        if let last = lastVerdict, last.jwt == jwt, now >= last.at, now.timeIntervalSince(last.at) < Self.verdictReuse {
            verdict = last
        } else {
            // The mock's verifier is read (under its lock) only when a token needs verifying.
            let verifier = verifier()
            verdict = (jwt, verifier.verify(jwt, at: now), now, verifier.options.maximumAge)
            lastVerdict = verdict
        }
        let verified: ProviderToken
        switch verdict.verdict {
        case .success(let token): verified = token
        case .failure(let rejection): throw Rejection(rejection.reason, rejection.problem)
        }
        if let team, team != verified.teamID {
            throw Rejection(.invalidProviderToken, "this connection is bound to team \(team) by its first push; tokens for team \(verified.teamID) need a new connection")
        }
        if token != nil, let changed = tokenChangedAt, now.timeIntervalSince(changed) < Self.tokenUpdateInterval {
            throw Rejection(
                .tooManyProviderTokenUpdates,
                "the provider token changed \(Int(now.timeIntervalSince(changed))) seconds after the previous change on this connection; change it at most every 20 minutes")
        }
        token = jwt
        lastVerdict = nil
        tokenLeniencies = Self.leniencies(of: verified)
        tokenIssuedAt = verified.issuedAt
        tokenMaximumAge = verdict.maximumAge
        tokenChangedAt = now
        team = verified.teamID
        return true
    }

    /// The undocumented forms `verified` was accepted with.
    static func leniencies(of verified: ProviderToken) -> [NotificationRecord.Finding] {
        var notes: [NotificationRecord.Finding] = []
        func note(_ rule: String, _ message: String) {
            notes.append(NotificationRecord.Finding(rule: rule, severity: "warning", message: message, header: APNsHeader.authorization))
        }
        if verified.issuedAtIsString {
            note(
                "provider-token-iat-string",
                "the provider token's iat is a string; \"Establishing a token-based connection to APNs\" gives it as a number of seconds. Accepted by this mock's leniency; --strict refuses it (403 InvalidProviderToken), and APNs may")
        }
        if verified.issuedAtIsFractional {
            note(
                "provider-token-iat-fractional",
                "the provider token's iat has a fraction; \"Establishing a token-based connection to APNs\" gives it in whole seconds. Accepted by this mock's leniency; --strict refuses it (403 InvalidProviderToken), and APNs may")
        }
        return notes
    }
}
