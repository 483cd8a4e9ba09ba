import Crypto
import Foundation

/// The private half of an APNs provider key: the `.p8` file from Apple's developer account (a
/// PKCS#8 PEM holding a P-256 key), or a SEC1 `EC PRIVATE KEY` PEM.
///
/// The key material never appears in a description, a log or an error: `print(key)` shows only
/// the key ID.
public struct ProviderSigningKey: Sendable, CustomStringConvertible, CustomReflectable {
    /// The key's ID (`kid`).
    public let keyID: KeyID
    /// The team the key belongs to (`iss`).
    public let teamID: TeamID
    let privateKey: P256.Signing.PrivateKey

    /// A new random key (for tests and for the mock server's demo credentials).
    public static func generate(keyID: KeyID, teamID: TeamID) -> ProviderSigningKey {
        ProviderSigningKey(keyID: keyID, teamID: teamID, privateKey: P256.Signing.PrivateKey())
    }

    /// The public half, for a verifier.
    public var publicKey: ProviderPublicKey {
        ProviderPublicKey(keyID: keyID, teamID: teamID, publicKey: privateKey.publicKey)
    }

    /// The key as a PKCS#8 PEM, as Apple's `.p8` files hold it. Handle with care: this is the
    /// secret.
    public var pkcs8PEM: String { privateKey.pemRepresentation }

    /// `provider key ABC123DEFG (team DEF123GHIJ)`: never the key itself.
    public var description: String { "provider key \(keyID) (team \(teamID))" }

    /// What `dump` shows: the IDs, never the key.
    public var customMirror: Mirror { Mirror(self, children: ["keyID": keyID, "teamID": teamID]) }

    static func parsePrivateKey(_ pem: String, source: String) throws(CredentialError) -> P256.Signing.PrivateKey {
        let kind = CredentialError.pemLabel(of: pem)
        switch kind {
        case "PRIVATE KEY", "EC PRIVATE KEY":
            do {
                return try P256.Signing.PrivateKey(pemRepresentation: pem)
            } catch {
                throw CredentialError(source: source, problem: "the \(kind ?? "") block is not a P-256 (ES256) private key; APNs provider keys are P-256, as Apple's .p8 files are")
            }
        case nil:
            throw CredentialError(source: source, problem: "no PEM block found; expected -----BEGIN PRIVATE KEY----- (a .p8 file) or -----BEGIN EC PRIVATE KEY-----")
        case let other?:
            throw CredentialError(source: source, problem: "the PEM block is \(other); expected PRIVATE KEY (a .p8 file) or EC PRIVATE KEY")
        }
    }
}

/// The public half of a provider key, which a server verifies provider tokens with.
public struct ProviderPublicKey: Sendable, CustomStringConvertible {
    /// The key's ID (`kid`).
    public let keyID: KeyID
    /// The team the key belongs to (`iss`).
    public let teamID: TeamID
    let publicKey: P256.Signing.PublicKey

    /// The key as a `PUBLIC KEY` PEM.
    public var pem: String { publicKey.pemRepresentation }

    /// `public key ABC123DEFG (team DEF123GHIJ)`.
    public var description: String { "public key \(keyID) (team \(teamID))" }
}

// Reading keys. The initializers live in extensions so that each struct keeps Swift's
// memberwise initializer, which they and `generate` delegate to.
extension ProviderSigningKey {
    /// The key ID a `.p8` file's name gives, when it is named as Apple names it
    /// (`AuthKey_ABC123DEFG.p8`, any folder): the ten characters after `AuthKey_`.
    public static func keyID(inFileName path: String) -> String? {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        guard name.hasPrefix("AuthKey_"), name.hasSuffix(".p8") else { return nil }
        let id = name.dropFirst(8).dropLast(3)
        guard id.count == 10, id.allSatisfy({ $0.isASCII && ($0.isUppercase || $0.isNumber) }) else { return nil }
        return String(id)
    }

    /// A key from PEM text (PKCS#8 `PRIVATE KEY` or SEC1 `EC PRIVATE KEY`).
    ///
    /// - Parameters:
    ///   - pem: The PEM text.
    ///   - keyID: The key ID Apple shows for the key.
    ///   - teamID: The team the key belongs to.
    ///   - source: What to call the text in errors (a file name).
    public init(pem: String, keyID: KeyID, teamID: TeamID, source: String = "the key") throws(CredentialError) {
        self.init(keyID: keyID, teamID: teamID, privateKey: try Self.parsePrivateKey(pem, source: source))
    }

    /// A key read from a `.p8` (or SEC1 PEM) file.
    public init(contentsOfFile path: String, keyID: KeyID, teamID: TeamID) throws(CredentialError) {
        try self.init(pem: try CredentialError.readText(path), keyID: keyID, teamID: teamID, source: path)
    }
}

extension ProviderPublicKey {
    /// A public key from PEM text (`PUBLIC KEY`), or the public half of a private key PEM.
    public init(pem: String, keyID: KeyID, teamID: TeamID, source: String = "the key") throws(CredentialError) {
        let publicKey: P256.Signing.PublicKey
        switch CredentialError.pemLabel(of: pem) {
        case "PUBLIC KEY":
            do {
                publicKey = try P256.Signing.PublicKey(pemRepresentation: pem)
            } catch {
                throw CredentialError(source: source, problem: "the PUBLIC KEY block is not a P-256 public key")
            }
        default:
            publicKey = try ProviderSigningKey.parsePrivateKey(pem, source: source).publicKey
        }
        self.init(keyID: keyID, teamID: teamID, publicKey: publicKey)
    }

    /// A public key read from a PEM file (`PUBLIC KEY`, or a `.p8` whose public half is used).
    public init(contentsOfFile path: String, keyID: KeyID, teamID: TeamID) throws(CredentialError) {
        try self.init(pem: try CredentialError.readText(path), keyID: keyID, teamID: teamID, source: path)
    }
}

/// Why a key or certificate file cannot be used: the file, and what is wrong and what was
/// expected; never the key material or a password.
public struct CredentialError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file (or "the key" for text given directly).
    public var source: String
    /// What is wrong and what was expected.
    public var problem: String

    /// `FILE: problem`.
    public var description: String { "\(source): \(problem)" }

    /// The label of the first PEM block (`PRIVATE KEY`), or `nil`.
    static func pemLabel(of text: String) -> String? {
        guard let begin = text.range(of: "-----BEGIN "),
              let end = text[begin.upperBound...].range(of: "-----") else { return nil }
        return String(text[begin.upperBound..<end.lowerBound])
    }

    static func readText(_ path: String) throws(CredentialError) -> String {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            let reason = (error as NSError).localizedFailureReason ?? "cannot be read"
            throw CredentialError(source: path, problem: FileManager.default.fileExists(atPath: path) ? reason : "no such file")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw CredentialError(source: path, problem: "the file is not text; expected a PEM file such as Apple's .p8")
        }
        return text
    }
}
