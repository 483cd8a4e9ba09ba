import Foundation
import HeraldProtocol
import NIOSSL
import SwiftASN1
import X509

/// What an APNs provider certificate allows: its topics and environments, read from the
/// extensions Apple puts in it ("Establishing a certificate-based connection to APNs").
///
/// - Topics come from the extension `1.2.840.113635.100.6.3.6`, which lists each topic with the
///   kinds of push it serves (`app`, `voip`, `complication`). A certificate without it (an old
///   single-topic certificate) has the bundle ID of its subject's `UID` attribute as its topic,
///   with `.voip` added when it carries the VoIP extension `1.2.840.113635.100.6.3.4`.
/// - Environments come from `1.2.840.113635.100.6.3.1` (development, the sandbox) and
///   `1.2.840.113635.100.6.3.2` (production); a universal certificate carries both.
public struct APNsCertificateInfo: Sendable, Hashable, CustomStringConvertible {
    /// One topic of the certificate and the kinds of push it names for it.
    public struct Topic: Sendable, Hashable {
        /// The topic (`com.example.app`, `com.example.app.voip`, …).
        public var name: String
        /// The kinds listed for it (`app`, `voip`, `complication`); empty when not listed.
        public var kinds: [String]

        /// Creates a topic entry.
        public init(name: String, kinds: [String]) {
            self.name = name
            self.kinds = kinds
        }
    }

    /// The subject, as `CN=…, UID=…, …`.
    public let subject: String
    /// The `UID` attribute of the subject: the app's bundle ID on Apple's certificates.
    public let bundleID: String?
    /// The topics the certificate may push to, in the certificate's order.
    public let topics: [Topic]
    /// The environments the certificate may connect to.
    public let environments: Set<APNsEnvironment>
    /// The first moment the certificate is valid.
    public let notValidBefore: Date
    /// The last moment the certificate is valid.
    public let notValidAfter: Date

    /// Apple's object identifiers in push certificates.
    enum OID {
        static let development: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 3, 1]
        static let production: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 3, 2]
        static let voip: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 3, 4]
        static let topics: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 3, 6]
        static let userID: ASN1ObjectIdentifier = [0, 9, 2342, 19_200_300, 100, 1, 1]
    }

    /// Reads a DER-encoded certificate.
    public init(derEncoded bytes: [UInt8]) throws(CredentialError) {
        let certificate: Certificate
        do {
            certificate = try Certificate(derEncoded: bytes)
        } catch {
            throw CredentialError(source: "the certificate", problem: "not a DER-encoded X.509 certificate (\(error))")
        }
        try self.init(certificate)
    }

    /// Reads a parsed certificate.
    public init(_ certificate: Certificate) throws(CredentialError) {
        subject = certificate.subject.description
        var uid: String?
        for rdn in certificate.subject {
            for attribute in rdn where attribute.type == OID.userID {
                uid = String(describing: attribute.value)
            }
        }
        bundleID = uid
        var environments: Set<APNsEnvironment> = []
        var topics: [Topic]?
        var hasVoIP = false
        for item in certificate.extensions {
            switch item.oid {
            case OID.development: environments.insert(.sandbox)
            case OID.production: environments.insert(.production)
            case OID.voip: hasVoIP = true
            case OID.topics:
                do {
                    topics = try Self.parseTopics(item.value)
                } catch {
                    throw CredentialError(source: "the certificate", problem: "its APNs topics extension (1.2.840.113635.100.6.3.6) is malformed: \(error)")
                }
            default: break
            }
        }
        if topics == nil, let uid {
            topics = [Topic(name: uid, kinds: ["app"])]
            if hasVoIP { topics?.append(Topic(name: uid + ".voip", kinds: ["voip"])) }
        }
        self.topics = topics ?? []
        self.environments = environments
        notValidBefore = certificate.notValidBefore
        notValidAfter = certificate.notValidAfter
    }

    /// Parses `SEQUENCE { UTF8String topic, SEQUENCE { UTF8String kind, … }, … }`.
    static func parseTopics(_ value: ArraySlice<UInt8>) throws -> [Topic] {
        let root = try DER.parse(value)
        guard case .constructed(let children) = root.content, root.identifier == .sequence else {
            throw CredentialError(source: "the extension", problem: "expected a SEQUENCE")
        }
        var topics: [Topic] = []
        for node in children {
            if node.identifier == .sequence, case .constructed(let kindNodes) = node.content {
                guard !topics.isEmpty else { continue }
                for kind in kindNodes {
                    if let text = try? String(ASN1UTF8String(derEncoded: kind)) {
                        topics[topics.count - 1].kinds.append(text)
                    }
                }
            } else if let text = try? String(ASN1UTF8String(derEncoded: node)) {
                topics.append(Topic(name: text, kinds: []))
            }
        }
        return topics
    }

    /// The topic names.
    public var topicNames: [String] { topics.map(\.name) }

    /// The topic used when a request names none: the only topic of a single-topic certificate,
    /// else the bundle ID (Apple: with certificate auth `apns-topic` may be omitted, and the
    /// certificate's subject is used).
    public var defaultTopic: String? {
        if topics.count == 1 { return topics[0].name }
        return bundleID ?? topics.first?.name
    }

    /// Whether the certificate may push to `topic`.
    public func allows(topic: String) -> Bool { topics.contains { $0.name == topic } }

    /// `subject (topics: a, b; environments: sandbox, production; valid until …)`.
    public var description: String {
        let envs = environments.map(\.rawValue).sorted().joined(separator: ", ")
        return "\(subject) (topics: \(topicNames.joined(separator: ", ")); environments: \(envs.isEmpty ? "none" : envs); valid until \(notValidAfter))"
    }
}

/// A client certificate and its private key, for certificate-based connections to APNs.
///
/// Load an Apple push certificate exported as PKCS#12 (`.p12`, with its password) or as a PEM
/// certificate and PEM key. ``info`` says which topics and environments it allows. Key material
/// never appears in ``description`` or in errors.
public struct APNsCertificateIdentity: Sendable, CustomStringConvertible {
    /// What the certificate allows.
    public let info: APNsCertificateInfo
    /// The certificate chain, leaf first, for a TLS configuration.
    public let certificateChain: [NIOSSLCertificate]
    /// The private key, for a TLS configuration.
    public let privateKey: NIOSSLPrivateKey

    /// Loads a PKCS#12 file (`.p12`) protected by `passphrase`.
    public init(pkcs12File path: String, passphrase: String) throws(CredentialError) {
        guard let bytes = FileManager.default.contents(atPath: path) else {
            throw CredentialError(source: path, problem: "cannot read the file")
        }
        try self.init(pkcs12: Array(bytes), passphrase: passphrase, source: path)
    }

    /// Reads a PKCS#12 file's bytes (`.p12`, as sent to an API) protected by `passphrase`;
    /// `source` names it in errors.
    public init(pkcs12 bytes: [UInt8], passphrase: String, source: String = "the .p12 certificate") throws(CredentialError) {
        let bundle: NIOSSLPKCS12Bundle
        do {
            bundle = try NIOSSLPKCS12Bundle(buffer: bytes, passphrase: Array(passphrase.utf8))
        } catch {
            throw CredentialError(source: source, problem: "not a PKCS#12 file, or the password is wrong")
        }
        try self.init(chain: bundle.certificateChain, key: bundle.privateKey, source: source)
    }

    /// Loads a PEM certificate (with any intermediates after it) and its PEM private key,
    /// decrypting the key with `passphrase` when it is encrypted.
    public init(certificatePEMFile certificatePath: String, privateKeyPEMFile keyPath: String, passphrase: String? = nil) throws(CredentialError) {
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMFile(certificatePath)
        } catch {
            throw CredentialError(source: certificatePath, problem: Self.readable(certificatePath) ? "no PEM certificate (-----BEGIN CERTIFICATE-----) found" : "cannot read the file")
        }
        guard !chain.isEmpty else {
            throw CredentialError(source: certificatePath, problem: "no PEM certificate (-----BEGIN CERTIFICATE-----) found")
        }
        let key: NIOSSLPrivateKey
        do {
            let secret = Array((passphrase ?? "").utf8)
            key = try NIOSSLPrivateKey(file: keyPath, format: .pem) { (setter: ([UInt8]) -> Void) in setter(secret) }
        } catch {
            let problem = !Self.readable(keyPath) ? "cannot read the file"
                : passphrase == nil ? "no PEM private key found, or it is encrypted and no passphrase was given"
                : "no PEM private key found, or the passphrase is wrong"
            throw CredentialError(source: keyPath, problem: problem)
        }
        try self.init(chain: chain, key: key, source: certificatePath)
    }

    private static func readable(_ path: String) -> Bool { FileManager.default.isReadableFile(atPath: path) }

    init(chain: [NIOSSLCertificate], key: NIOSSLPrivateKey, source: String) throws(CredentialError) {
        guard let leaf = chain.first else {
            throw CredentialError(source: source, problem: "holds no certificate")
        }
        let der: [UInt8]
        do {
            der = try leaf.toDERBytes()
        } catch {
            throw CredentialError(source: source, problem: "the certificate cannot be encoded")
        }
        do {
            info = try APNsCertificateInfo(derEncoded: der)
        } catch {
            throw CredentialError(source: source, problem: error.problem)
        }
        // BoringSSL refuses a key that is not the certificate's when both are installed.
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.certificateChain = chain.map { .certificate($0) }
        configuration.privateKey = .privateKey(key)
        do {
            _ = try NIOSSLContext(configuration: configuration)
        } catch {
            throw CredentialError(source: source, problem: "the private key does not belong to the certificate")
        }
        certificateChain = chain
        privateKey = key
    }

    /// The certificate's description; never the key.
    public var description: String { "certificate \(info)" }
}
