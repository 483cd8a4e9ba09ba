import Foundation
import HeraldAuth
import HeraldProtocol
import HeraldTestSupport
import Testing

/// APNs certificates made by Python's `cryptography` as Apple makes them (subject `UID`, the
/// environment extensions, the topics extension), exported as PKCS#12 and PEM, read by Herald;
/// and Herald's development CA checked by `cryptography` and `openssl`.
@Suite(.ownThreads) struct CertificateTests {
    /// Python that builds an Apple-style push certificate. `topics` is a list of (topic, kinds).
    static let builder = """
        import datetime, sys
        from cryptography import x509
        from cryptography.x509.oid import NameOID
        from cryptography.hazmat.primitives import hashes, serialization as s
        from cryptography.hazmat.primitives.asymmetric import rsa
        from cryptography.hazmat.primitives.serialization import pkcs12

        def tlv(tag, body):
            n = len(body)
            length = bytes([n]) if n < 128 else bytes([0x81, n]) if n < 256 else bytes([0x82, n >> 8, n & 255])
            return bytes([tag]) + length + body
        def utf8(t): return tlv(0x0c, t.encode())
        def topics_ext(topics):
            return tlv(0x30, b''.join(utf8(t) + tlv(0x30, b''.join(utf8(k) for k in kinds)) for t, kinds in topics))

        def make(bundle, topics, envs, voip=False):
            key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
            name = x509.Name([
                x509.NameAttribute(NameOID.USER_ID, bundle),
                x509.NameAttribute(NameOID.COMMON_NAME, 'Apple Push Services: ' + bundle),
                x509.NameAttribute(NameOID.ORGANIZATIONAL_UNIT_NAME, 'DEF123GHIJ'),
                x509.NameAttribute(NameOID.COUNTRY_NAME, 'US')])
            now = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
            b = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
                 .serial_number(x509.random_serial_number()).not_valid_before(now)
                 .not_valid_after(now + datetime.timedelta(days=365)))
            for env in envs:
                oid = {'sandbox': '1.2.840.113635.100.6.3.1', 'production': '1.2.840.113635.100.6.3.2'}[env]
                b = b.add_extension(x509.UnrecognizedExtension(x509.ObjectIdentifier(oid), b'\\x05\\x00'), False)
            if voip:
                b = b.add_extension(x509.UnrecognizedExtension(x509.ObjectIdentifier('1.2.840.113635.100.6.3.4'), b'\\x05\\x00'), False)
            if topics is not None:
                b = b.add_extension(x509.UnrecognizedExtension(x509.ObjectIdentifier('1.2.840.113635.100.6.3.6'), topics_ext(topics)), False)
            return key, b.sign(key, hashes.SHA256())
        """

    /// Writes `cert.p12` (password `secret`), `cert.pem`, `key.pem`, `key-encrypted.pem`
    /// (passphrase `hunter2`) and `other-key.pem` into `directory`.
    static func makeFiles(in directory: TemporaryDirectory, bundle: String, topics: String, envs: String, voip: Bool = false) throws {
        try ExternalTools.requirePython(modules: "cryptography", package: "cryptography")
        _ = try ExternalTools.python(builder + "\n" + """
            import os
            os.chdir(sys.argv[1] if len(sys.argv) > 1 else '\(directory.path)')
            key, cert = make('\(bundle)', \(topics), \(envs), voip=\(voip ? "True" : "False"))
            other, _ = make('x', None, [])
            open('cert.p12', 'wb').write(pkcs12.serialize_key_and_certificates(b'push', key, cert, None, s.BestAvailableEncryption(b'secret')))
            legacy = s.PrivateFormat.PKCS12.encryption_builder().kdf_rounds(2048).key_cert_algorithm(pkcs12.PBES.PBESv1SHA1And3KeyTripleDESCBC).hmac_hash(hashes.SHA1()).build(b'secret')
            open('cert-3des.p12', 'wb').write(pkcs12.serialize_key_and_certificates(b'push', key, cert, None, legacy))
            open('cert.pem', 'wb').write(cert.public_bytes(s.Encoding.PEM))
            open('key.pem', 'wb').write(key.private_bytes(s.Encoding.PEM, s.PrivateFormat.PKCS8, s.NoEncryption()))
            open('key-encrypted.pem', 'wb').write(key.private_bytes(s.Encoding.PEM, s.PrivateFormat.PKCS8, s.BestAvailableEncryption(b'hunter2')))
            open('other-key.pem', 'wb').write(other.private_bytes(s.Encoding.PEM, s.PrivateFormat.PKCS8, s.NoEncryption()))
            """)
    }

    @Test func universalCertificateFromPKCS12() throws {
        let directory = try TemporaryDirectory()
        try Self.makeFiles(
            in: directory, bundle: "com.example.app",
            topics: "[('com.example.app', ['app']), ('com.example.app.voip', ['voip']), ('com.example.app.complication', ['complication'])]",
            envs: "['sandbox', 'production']")
        let identity = try APNsCertificateIdentity(pkcs12File: directory.path("cert.p12"), passphrase: "secret")
        let info = identity.info
        #expect(info.bundleID == "com.example.app")
        #expect(info.topicNames == ["com.example.app", "com.example.app.voip", "com.example.app.complication"])
        #expect(info.topics.map(\.kinds) == [["app"], ["voip"], ["complication"]])
        #expect(info.environments == [.sandbox, .production])
        #expect(info.defaultTopic == "com.example.app")
        #expect(info.allows(topic: "com.example.app.voip") && !info.allows(topic: "com.other.app"))
        #expect(info.notValidAfter == Date(timeIntervalSince1970: 1_767_225_600 + 365 * 86_400))
        #expect(identity.description.contains("com.example.app") && !identity.description.contains("BEGIN"))

        // Keychain Access and older OpenSSL export with SHA-1 and 3DES: also read.
        let legacy = try APNsCertificateIdentity(pkcs12File: directory.path("cert-3des.p12"), passphrase: "secret")
        #expect(legacy.info == info)

        // The same from PEM, plain and encrypted.
        let pem = try APNsCertificateIdentity(certificatePEMFile: directory.path("cert.pem"), privateKeyPEMFile: directory.path("key.pem"))
        #expect(pem.info == info)
        let encrypted = try APNsCertificateIdentity(
            certificatePEMFile: directory.path("cert.pem"), privateKeyPEMFile: directory.path("key-encrypted.pem"), passphrase: "hunter2")
        #expect(encrypted.info == info)
    }

    @Test func sandboxOnlyAndLegacySingleTopicCertificates() throws {
        let directory = try TemporaryDirectory()
        try Self.makeFiles(in: directory, bundle: "com.example.dev", topics: "[('com.example.dev', ['app'])]", envs: "['sandbox']")
        let sandbox = try APNsCertificateIdentity(pkcs12File: directory.path("cert.p12"), passphrase: "secret").info
        #expect(sandbox.environments == [.sandbox] && sandbox.topicNames == ["com.example.dev"])

        // No topics extension: the subject's UID is the topic, with .voip for a VoIP certificate.
        let legacy = try TemporaryDirectory()
        try Self.makeFiles(in: legacy, bundle: "com.example.old", topics: "None", envs: "['production']", voip: true)
        let info = try APNsCertificateIdentity(pkcs12File: legacy.path("cert.p12"), passphrase: "secret").info
        #expect(info.topicNames == ["com.example.old", "com.example.old.voip"])
        #expect(info.environments == [.production])
    }

    @Test func badFilesAndPasswords() throws {
        let directory = try TemporaryDirectory()
        try Self.makeFiles(in: directory, bundle: "com.example.app", topics: "[('com.example.app', ['app'])]", envs: "['sandbox']")
        try directory.write("not.p12", "hello")
        let cases: [(() throws -> APNsCertificateIdentity, String, String)] = [
            ({ try APNsCertificateIdentity(pkcs12File: directory.path("cert.p12"), passphrase: "wrong") }, "cert.p12", "password"),
            ({ try APNsCertificateIdentity(pkcs12File: directory.path("not.p12"), passphrase: "x") }, "not.p12", "PKCS#12"),
            ({ try APNsCertificateIdentity(pkcs12File: directory.path("absent.p12"), passphrase: "x") }, "absent.p12", "cannot read"),
            ({ try APNsCertificateIdentity(certificatePEMFile: directory.path("cert.pem"), privateKeyPEMFile: directory.path("other-key.pem")) }, "cert.pem", "does not belong"),
            ({ try APNsCertificateIdentity(certificatePEMFile: directory.path("key.pem"), privateKeyPEMFile: directory.path("key.pem")) }, "key.pem", "no PEM certificate"),
            ({ try APNsCertificateIdentity(certificatePEMFile: directory.path("cert.pem"), privateKeyPEMFile: directory.path("key-encrypted.pem")) }, "key-encrypted.pem", "no passphrase"),
            ({ try APNsCertificateIdentity(certificatePEMFile: directory.path("cert.pem"), privateKeyPEMFile: directory.path("key-encrypted.pem"), passphrase: "nope") }, "key-encrypted.pem", "passphrase is wrong"),
        ]
        for (load, file, problem) in cases {
            let error = try #require(throws: CredentialError.self) { _ = try load() }
            #expect(error.source.hasSuffix(file), "\(error)")
            #expect(error.problem.contains(problem), "\(error)")
            #expect(!error.description.contains("secret") && !error.description.contains("hunter2"))
        }
    }

    @Test func developmentAuthorityIsTrustedByOpenSSLAndReadByPython() throws {
        try ExternalTools.requirePython(modules: "cryptography", package: "cryptography")
        let openssl = try ExternalTools.require("openssl", package: "openssl")
        let authority = try DevelopmentCertificateAuthority()
        let directory = try TemporaryDirectory()
        try directory.write("ca.pem", authority.certificatePEM)
        try directory.write("server.pem", authority.serverCertificatePEM)
        for host in ["localhost"] {
            let out = try ExternalTools.run(openssl, ["verify", "-CAfile", directory.path("ca.pem"), "-verify_hostname", host, "-purpose", "sslserver", directory.path("server.pem")])
            #expect(String(decoding: out, as: UTF8.self).contains(": OK"))
        }
        for ip in ["127.0.0.1", "::1"] {
            let out = try ExternalTools.run(openssl, ["verify", "-CAfile", directory.path("ca.pem"), "-verify_ip", ip, directory.path("server.pem")])
            #expect(String(decoding: out, as: UTF8.self).contains(": OK"), "\(ip)")
        }
        let wrong = try ExternalTools.execute(openssl, ["verify", "-CAfile", directory.path("ca.pem"), "-verify_hostname", "example.com", directory.path("server.pem")])
        #expect(wrong.status != 0, "the certificate is not valid for other names")

        // A client certificate with Apple's extensions: Python reads the same topics and environments.
        let client = try authority.issueClientCertificate(bundleID: "com.example.app", environments: [.sandbox])
        try directory.write("client.pem", client.certificatePEM)
        let python = try ExternalTools.python("""
            from cryptography import x509
            from cryptography.x509.oid import NameOID
            c = x509.load_pem_x509_certificate(open('\(directory.path("client.pem"))', 'rb').read())
            oids = sorted(e.oid.dotted_string for e in c.extensions)
            topics = c.extensions.get_extension_for_oid(x509.ObjectIdentifier('1.2.840.113635.100.6.3.6')).value.value
            uid = c.subject.get_attributes_for_oid(NameOID.USER_ID)[0].value
            print(uid, oids, topics.hex())
            """)
        let text = String(decoding: python, as: UTF8.self)
        #expect(text.hasPrefix("com.example.app "))
        #expect(text.contains("'1.2.840.113635.100.6.3.1'") && !text.contains("'1.2.840.113635.100.6.3.2'"))
        // SEQUENCE { UTF8String "com.example.app", SEQUENCE { UTF8String "app" }, … } as Apple encodes it.
        #expect(text.contains(" 30"), "an outer SEQUENCE: \(text)")
        #expect(text.contains("0c0f636f6d2e6578616d706c652e61707030050c03617070"), "\(text)")
        let identity = try client.identity()
        #expect(identity.info.environments == [.sandbox])
        #expect(identity.info.topicNames == ["com.example.app", "com.example.app.voip", "com.example.app.complication"])
    }
}
