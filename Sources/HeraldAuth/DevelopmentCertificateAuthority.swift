import Crypto
import Foundation
import HeraldProtocol
import NIOSSL
import SwiftASN1
import X509

/// A throwaway certificate authority for local servers: a CA certificate that clients are told
/// to trust, a TLS server certificate it signs for the given host names and addresses, and
/// (for certificate-based auth) client certificates that carry Apple's push extensions.
///
/// Everything is made in memory with P-256 keys when the authority is created; nothing is read
/// from or written to disk unless the caller writes ``certificatePEM`` somewhere (`herald mock
/// --ca-out FILE`). Never use it outside development and tests.
public struct DevelopmentCertificateAuthority: Sendable {
    /// The CA certificate in PEM: what clients trust (`curl --cacert`, Herald's client).
    public let certificatePEM: String
    /// The server certificate in PEM, signed by the CA.
    public let serverCertificatePEM: String
    /// The host names and IP addresses the server certificate is valid for.
    public let serverNames: [String]
    let caCertificate: Certificate
    let caKey: P256.Signing.PrivateKey
    let serverCertificate: Certificate
    let serverKey: P256.Signing.PrivateKey

    /// Makes a CA and a server certificate valid for `serverNames` (DNS names or IP addresses)
    /// for `validity` seconds from now.
    public init(serverNames: [String] = ["localhost", "127.0.0.1", "::1"], validity: TimeInterval = 30 * 86_400, commonName: String = "Herald development CA") throws {
        let now = Date()
        let notBefore = now.addingTimeInterval(-300)
        let notAfter = now.addingTimeInterval(validity)
        let caKey = P256.Signing.PrivateKey()
        let caName = try DistinguishedName {
            OrganizationName("Herald")
            CommonName("\(commonName) \(Self.shortID())")
        }
        let caCertificate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(caKey.publicKey),
            notValidBefore: notBefore, notValidAfter: notAfter, issuer: caName, subject: caName,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                SubjectKeyIdentifier(hash: .init(caKey.publicKey))
            },
            issuerPrivateKey: .init(caKey))

        let serverKey = P256.Signing.PrivateKey()
        let names: [GeneralName] = serverNames.map { name in
            if let address = Self.ipAddressBytes(name) {
                return .ipAddress(ASN1OctetString(contentBytes: address[...]))
            }
            return .dnsName(name)
        }
        let serverCertificate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(serverKey.publicKey),
            notValidBefore: notBefore, notValidAfter: notAfter, issuer: caName,
            subject: try DistinguishedName {
                OrganizationName("Herald")
                CommonName(serverNames.first ?? "localhost")
            },
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames(names)
                AuthorityKeyIdentifier(keyIdentifier: SubjectKeyIdentifier(hash: .init(caKey.publicKey)).keyIdentifier)
            },
            issuerPrivateKey: .init(caKey))

        self.caKey = caKey
        self.caCertificate = caCertificate
        self.serverKey = serverKey
        self.serverCertificate = serverCertificate
        self.serverNames = serverNames
        certificatePEM = try caCertificate.serializeAsPEM().pemString + "\n"
        serverCertificatePEM = try serverCertificate.serializeAsPEM().pemString + "\n"
    }

    /// The server's certificate chain (server certificate, then the CA) for a TLS configuration.
    public func serverCertificateChain() throws -> [NIOSSLCertificate] {
        [try NIOSSLCertificate(bytes: Array(serverCertificatePEM.utf8), format: .pem),
         try NIOSSLCertificate(bytes: Array(certificatePEM.utf8), format: .pem)]
    }

    /// The server's private key for a TLS configuration.
    public func serverPrivateKey() throws -> NIOSSLPrivateKey {
        try NIOSSLPrivateKey(bytes: Array(serverKey.pemRepresentation.utf8), format: .pem)
    }

    /// The CA certificate for a client's trust roots.
    public func trustRoot() throws -> NIOSSLCertificate {
        try NIOSSLCertificate(bytes: Array(certificatePEM.utf8), format: .pem)
    }

    /// A client certificate as Apple issues for certificate-based APNs connections: the
    /// subject's `UID` is `bundleID`, the topics extension lists `topics`, and the environment
    /// extensions name `environments`. For testing a server's certificate auth.
    public func issueClientCertificate(
        bundleID: String, topics: [APNsCertificateInfo.Topic]? = nil,
        environments: Set<APNsEnvironment> = [.sandbox, .production], validity: TimeInterval = 86_400
    ) throws -> IssuedClientCertificate {
        let key = P256.Signing.PrivateKey()
        let topics = topics ?? [
            .init(name: bundleID, kinds: ["app"]), .init(name: bundleID + ".voip", kinds: ["voip"]),
            .init(name: bundleID + ".complication", kinds: ["complication"]),
        ]
        var extensions = try Certificate.Extensions {
            Critical(BasicConstraints.notCertificateAuthority)
            Critical(KeyUsage(digitalSignature: true))
            try ExtendedKeyUsage([.clientAuth])
        }
        let marker: [UInt8] = [0x05, 0x00]  // NULL, as Apple's environment extensions hold
        if environments.contains(.sandbox) {
            try extensions.append(Certificate.Extension(oid: APNsCertificateInfo.OID.development, critical: false, value: marker[...]))
        }
        if environments.contains(.production) {
            try extensions.append(Certificate.Extension(oid: APNsCertificateInfo.OID.production, critical: false, value: marker[...]))
        }
        try extensions.append(Certificate.Extension(oid: APNsCertificateInfo.OID.topics, critical: false, value: Self.encodeTopics(topics)[...]))
        let now = Date()
        let certificate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(key.publicKey),
            notValidBefore: now.addingTimeInterval(-300), notValidAfter: now.addingTimeInterval(validity),
            issuer: caCertificate.subject,
            subject: try DistinguishedName([
                RelativeDistinguishedName.Attribute(type: APNsCertificateInfo.OID.userID, utf8String: bundleID),
                RelativeDistinguishedName.Attribute(type: .RDNAttributeType.commonName, utf8String: "Apple Push Services: \(bundleID)"),
            ]),
            signatureAlgorithm: .ecdsaWithSHA256, extensions: extensions, issuerPrivateKey: .init(caKey))
        return IssuedClientCertificate(
            certificatePEM: try certificate.serializeAsPEM().pemString + "\n", privateKeyPEM: key.pemRepresentation + "\n")
    }

    /// Encodes Apple's topics extension value.
    static func encodeTopics(_ topics: [APNsCertificateInfo.Topic]) throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.appendConstructedNode(identifier: .sequence) { coder in
            for topic in topics {
                try coder.serialize(ASN1UTF8String(topic.name))
                try coder.appendConstructedNode(identifier: .sequence) { kinds in
                    for kind in topic.kinds { try kinds.serialize(ASN1UTF8String(kind)) }
                }
            }
        }
        return serializer.serializedBytes
    }

    static func shortID() -> String {
        String(UInt32.random(in: .min ... .max), radix: 16)
    }

    /// The 4 or 16 bytes of an IPv4 or IPv6 address, or nil for a host name.
    static func ipAddressBytes(_ text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            return withUnsafeBytes(of: &v4) { Array($0) }
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 {
            return withUnsafeBytes(of: &v6) { Array($0) }
        }
        return nil
    }
}

/// A client certificate issued by a ``DevelopmentCertificateAuthority``, in PEM.
public struct IssuedClientCertificate: Sendable, CustomStringConvertible {
    /// The certificate.
    public let certificatePEM: String
    /// Its private key (PKCS#8). Handle as a secret.
    public let privateKeyPEM: String

    /// Loads it as an identity for a TLS client.
    public func identity() throws(CredentialError) -> APNsCertificateIdentity {
        let chain: [NIOSSLCertificate]
        let key: NIOSSLPrivateKey
        do {
            chain = try NIOSSLCertificate.fromPEMBytes(Array(certificatePEM.utf8))
            key = try NIOSSLPrivateKey(bytes: Array(privateKeyPEM.utf8), format: .pem)
        } catch {
            throw CredentialError(source: "the issued certificate", problem: "cannot be loaded (\(error))")
        }
        return try APNsCertificateIdentity(chain: chain, key: key, source: "the issued certificate")
    }

    /// Never the key.
    public var description: String { "issued client certificate" }
}
