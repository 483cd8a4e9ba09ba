import Foundation
import HeraldProtocol

/// Checks provider tokens as APNs does ("Establishing a token-based connection to APNs"): ES256
/// only, a known key ID whose team is the token's `iss`, a valid signature (raw `r‖s` or DER),
/// and an `iat` no more than one hour old and not in the future beyond a small clock skew.
///
/// Each rejection carries the reason APNs answers with: `InvalidProviderToken` for
/// a malformed, unsigned or wrongly signed token, `ExpiredProviderToken` for one
/// issued more than an hour ago.
///
/// With no keys registered the verifier checks form, algorithm and age but cannot check
/// signatures (``verifiesSignatures`` is `false`); the mock server says so at start-up.
public struct ProviderTokenVerifier: Sendable {
    /// How strict to be where Apple does not document APNs' behaviour.
    public struct Options: Sendable, Hashable {
        /// The oldest `iat` accepted: one hour (Apple: "no more than one hour" old).
        public var maximumAge: TimeInterval
        /// How far in the future an `iat` may lie before the token is refused (undocumented;
        /// clocks drift).
        public var allowedClockSkew: TimeInterval
        /// Accept `"iat":"1700000000"` (a string), as APNs is reported to. Off in strict mode.
        public var acceptsStringIssuedAt: Bool
        /// Accept `"iat":1700000000.25` (a fraction, as PyJWT-based clients write
        /// `time.time()`; RFC 7519's NumericDate allows it), using its whole seconds. Off in
        /// strict mode.
        public var acceptsFractionalIssuedAt: Bool

        /// Defaults: one hour, 60 seconds of skew, string and fractional `iat` accepted.
        public init(
            maximumAge: TimeInterval = 3600, allowedClockSkew: TimeInterval = 60, acceptsStringIssuedAt: Bool = true,
            acceptsFractionalIssuedAt: Bool = true
        ) {
            self.maximumAge = maximumAge
            self.allowedClockSkew = allowedClockSkew
            self.acceptsStringIssuedAt = acceptsStringIssuedAt
            self.acceptsFractionalIssuedAt = acceptsFractionalIssuedAt
        }
    }

    /// The keys whose signatures are accepted, by key ID.
    public let keys: [String: ProviderPublicKey]
    /// The options.
    public let options: Options

    /// A verifier for these public keys.
    public init(keys: [ProviderPublicKey], options: Options = Options()) {
        self.keys = Dictionary(keys.map { ($0.keyID.rawValue, $0) }, uniquingKeysWith: { _, last in last })
        self.options = options
    }

    /// Whether signatures are checked (some key is registered).
    public var verifiesSignatures: Bool { !keys.isEmpty }

    /// Verifies an `authorization` token at time `now`.
    public func verify(_ text: String, at now: Date) -> Result<ProviderToken, ProviderTokenRejection> {
        let token: ProviderToken
        do {
            token = try ProviderToken(parsing: text)
        } catch {
            return .failure(ProviderTokenRejection(reason: .invalidProviderToken, problem: error.description))
        }
        return verify(token, at: now)
    }

    /// Verifies a parsed token at time `now`.
    public func verify(_ token: ProviderToken, at now: Date) -> Result<ProviderToken, ProviderTokenRejection> {
        func reject(_ reason: APNsReason, _ problem: String) -> Result<ProviderToken, ProviderTokenRejection> {
            .failure(ProviderTokenRejection(reason: reason, problem: problem))
        }
        guard token.algorithm == ProviderToken.algorithmES256 else {
            return reject(.invalidProviderToken, "\"alg\" is \"\(token.algorithm)\"; APNs accepts only \"\(ProviderToken.algorithmES256)\"")
        }
        if token.issuedAtIsString && !options.acceptsStringIssuedAt {
            return reject(.invalidProviderToken, "\"iat\" is a string; it must be a number of UNIX seconds (strict mode)")
        }
        if token.issuedAtIsFractional && !options.acceptsFractionalIssuedAt {
            return reject(.invalidProviderToken, "\"iat\" has a fraction; it must be whole UNIX seconds (strict mode)")
        }
        if verifiesSignatures {
            guard let key = keys[token.keyID] else {
                return reject(.invalidProviderToken, "no key with ID \"\(token.keyID)\" is registered")
            }
            guard key.teamID.rawValue == token.teamID else {
                return reject(.invalidProviderToken, "key \(key.keyID) belongs to team \(key.teamID), but \"iss\" is \"\(token.teamID)\"")
            }
            guard token.isSigned(by: key) else {
                return reject(.invalidProviderToken, "the signature does not verify with key \(key.keyID)")
            }
        }
        let age = now.timeIntervalSince1970 - Double(token.issuedAt)
        if age > options.maximumAge {
            return reject(.expiredProviderToken, "\"iat\" is \(Int(age)) seconds old; tokens older than \(Int(options.maximumAge)) seconds are refused: make a new one")
        }
        if -age > options.allowedClockSkew {
            return reject(.invalidProviderToken, "\"iat\" is \(Int(-age)) seconds in the future; check the sender's clock")
        }
        return .success(token)
    }
}

/// Why a provider token is refused, and the reason APNs answers with.
public struct ProviderTokenRejection: Error, Sendable, Hashable, CustomStringConvertible {
    /// The APNs reason (403 `InvalidProviderToken` or `ExpiredProviderToken`).
    public var reason: APNsReason
    /// What is wrong.
    public var problem: String

    /// `problem (403 Reason)`.
    public var description: String { "\(problem) (\(reason.statusAndReason))" }
}
