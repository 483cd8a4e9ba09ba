import Crypto
import Foundation
import HeraldJSON
import HeraldProtocol

/// An APNs provider token: a JSON Web Token signed with ES256, sent as `authorization: bearer
/// <token>` ("Establishing a token-based connection to APNs").
///
/// Its header is `{"alg":"ES256","kid":<key ID>}` and its claims `{"iss":<team ID>,"iat":<UNIX
/// seconds>}`, each compact JSON in unpadded base64url, then the signature: the raw `r‖s` of
/// ECDSA P-256 over SHA-256, as JOSE specifies. Parsing also accepts a DER signature, which Apple's
/// own `openssl` recipe produces and APNs accepts.
///
/// A token is a credential: ``description`` names its key, team and age, never the token.
public struct ProviderToken: Sendable, Hashable, CustomStringConvertible {
    /// The compact token (three base64url parts joined by dots).
    public let rawValue: String
    /// `alg` of the header.
    public let algorithm: String
    /// `kid` of the header.
    public let keyID: String
    /// `iss` of the claims.
    public let teamID: String
    /// `iat` of the claims, in UNIX seconds.
    public let issuedAt: Int64
    /// Whether `iat` was written as a string (`"1700000000"`): some clients do, and APNs is
    /// reported to accept it.
    public let issuedAtIsString: Bool
    /// Whether `iat` was written with a fraction or an exponent (`1700000000.25`, as PyJWT
    /// writes `time.time()`): RFC 7519's NumericDate allows it; ``issuedAt`` is its whole
    /// seconds.
    public let issuedAtIsFractional: Bool
    /// The signature bytes as sent (64 raw bytes, or DER).
    let signature: [UInt8]
    /// The signed text: `header.claims`.
    let signingInput: Substring

    /// The signature algorithm APNs accepts.
    public static let algorithmES256 = "ES256"

    /// Signs a new token with a provider key.
    public static func sign(with key: ProviderSigningKey, issuedAt: Date) -> ProviderToken {
        let seconds = Int64(issuedAt.timeIntervalSince1970.rounded(.down))
        var header = JSONWriter(output: JSONBytes())
        header.beginObject()
        header.key("alg")
        header.string(algorithmES256)
        header.key("kid")
        header.string(key.keyID.rawValue)
        header.endObject()
        var claims = JSONWriter(output: JSONBytes())
        claims.beginObject()
        claims.key("iss")
        claims.string(key.teamID.rawValue)
        claims.key("iat")
        claims.integer(seconds)
        claims.endObject()
        let input = Base64URL.encode(header.output.bytes) + "." + Base64URL.encode(claims.output.bytes)
        // Signing a well-formed input with a valid P-256 key does not fail; BoringSSL reports only
        // allocation failures here.
        let signature = (try? key.privateKey.signature(for: Data(input.utf8)))?.rawRepresentation ?? Data()
        let token = input + "." + Base64URL.encode(signature)
        return ProviderToken(
            rawValue: token, algorithm: algorithmES256, keyID: key.keyID.rawValue, teamID: key.teamID.rawValue,
            issuedAt: seconds, issuedAtIsString: false, issuedAtIsFractional: false, signature: Array(signature),
            signingInput: token[..<token.lastIndex(of: ".")!])
    }

    /// Whether the signature verifies with `key`: raw `r‖s` (64 bytes) or DER.
    func isSigned(by key: ProviderPublicKey) -> Bool {
        let signed = Data(signingInput.utf8)
        if signature.count == 64, let raw = try? P256.Signing.ECDSASignature(rawRepresentation: signature) {
            return key.publicKey.isValidSignature(raw, for: signed)
        }
        if let der = try? P256.Signing.ECDSASignature(derRepresentation: signature) {
            return key.publicKey.isValidSignature(der, for: signed)
        }
        return false
    }

    /// Whether the signature is DER rather than raw `r‖s`.
    public var hasDERSignature: Bool { signature.count != 64 }

    /// `provider token (kid ABC123DEFG, iss DEF123GHIJ, iat 1700000000)`: never the token.
    public var description: String { "provider token (kid \(keyID), iss \(teamID), iat \(issuedAt))" }
}

// Reading a token. The initializer lives in an extension so that the struct keeps the
// memberwise one, which `sign(with:issuedAt:)` and this use.
extension ProviderToken {
    /// Reads a token's structure (not its signature: see ``ProviderTokenVerifier``).
    ///
    /// - Throws: ``ProviderTokenError`` saying which part is malformed and how.
    public init(parsing text: String) throws(ProviderTokenError) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else {
            throw .malformed("a provider token has three parts separated by dots (header.claims.signature); this has \(parts.count)")
        }
        guard text.utf8.count <= 8192 else { throw .malformed("the token is \(text.utf8.count) bytes; provider tokens are a few hundred") }
        let header = try Self.object(parts[0], part: "header")
        let claims = try Self.object(parts[1], part: "claims")
        guard let algorithm = header["alg"]?.stringValue else {
            throw .malformed("the header has no \"alg\"; APNs requires \"alg\":\"ES256\"")
        }
        guard let keyID = header["kid"]?.stringValue else {
            throw .malformed("the header has no \"kid\" (the key ID)")
        }
        guard let teamID = claims["iss"]?.stringValue else {
            throw .malformed("the claims have no \"iss\" (the team ID)")
        }
        guard let issued = claims["iat"] else {
            throw .malformed("the claims have no \"iat\" (the issue time in UNIX seconds)")
        }
        let issuedAt: Int64
        var isString = false
        var isFractional = false
        if let seconds = issued.int64Value {
            issuedAt = seconds
        } else if let text = issued.stringValue, let seconds = Int64(text) {
            issuedAt = seconds
            isString = true
        } else if issued.kind == .number, let value = issued.doubleValue, value.isFinite, value >= 0, value < 1e15 {
            // A NumericDate with a fraction (RFC 7519 allows it): its whole seconds.
            issuedAt = Int64(value.rounded(.down))
            isFractional = true
        } else {
            throw .malformed("\"iat\" is \(issued.sourceText); expected UNIX seconds such as 1700000000")
        }
        guard let signature = Base64URL.decode(parts[2]), !signature.isEmpty else {
            throw .malformed("the signature is not unpadded base64url")
        }
        self.init(
            rawValue: text, algorithm: algorithm, keyID: keyID, teamID: teamID, issuedAt: issuedAt,
            issuedAtIsString: isString, issuedAtIsFractional: isFractional, signature: signature, signingInput: text[..<parts[2].startIndex].dropLast())
    }

    private static func object(_ part: Substring, part name: String) throws(ProviderTokenError) -> JSONDocument.Node {
        guard let bytes = Base64URL.decode(part) else {
            throw .malformed("the \(name) is not unpadded base64url")
        }
        let document: JSONDocument
        do {
            document = try JSONDocument(parsing: bytes, options: JSONParser.Options(maximumDepth: 8))
        } catch {
            throw .malformed("the \(name) is not JSON: \(error.message)")
        }
        guard document.root.kind == .object else {
            throw .malformed("the \(name) is \(document.root.kind); expected a JSON object")
        }
        return document.root
    }
}

/// Why a string is not a provider token.
public enum ProviderTokenError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The structure is wrong; APNs answers `InvalidProviderToken`.
    case malformed(String)

    /// What is wrong.
    public var description: String {
        switch self {
        case .malformed(let problem): problem
        }
    }
}
