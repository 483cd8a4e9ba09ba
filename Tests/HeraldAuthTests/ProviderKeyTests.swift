import Foundation
import HeraldAuth
import HeraldTestSupport
import Testing

/// Provider keys made by Python's `cryptography` (an independent implementation) in the three
/// PEM forms a server or provider meets, and files that are wrong in each way a user gets wrong.
@Suite(.ownThreads) struct ProviderKeyTests {
    static let keyID = try! KeyID("ABC123DEFG")
    static let teamID = try! TeamID("DEF123GHIJ")

    /// A P-256 key from `cryptography`: PKCS#8, SEC1 and SubjectPublicKeyInfo PEM.
    static func pythonKey() throws -> (pkcs8: String, sec1: String, publicKey: String) {
        try ExternalTools.requirePython(modules: "cryptography", package: "cryptography")
        let output = try ExternalTools.python("""
            from cryptography.hazmat.primitives.asymmetric import ec
            from cryptography.hazmat.primitives import serialization as s
            k = ec.generate_private_key(ec.SECP256R1())
            print(k.private_bytes(s.Encoding.PEM, s.PrivateFormat.PKCS8, s.NoEncryption()).decode(), end='|')
            print(k.private_bytes(s.Encoding.PEM, s.PrivateFormat.TraditionalOpenSSL, s.NoEncryption()).decode(), end='|')
            print(k.public_key().public_bytes(s.Encoding.PEM, s.PublicFormat.SubjectPublicKeyInfo).decode(), end='')
            """)
        let parts = String(decoding: output, as: UTF8.self).split(separator: "|").map(String.init)
        return (parts[0], parts[1], parts[2])
    }

    @Test func identifiersAreTenAlphanumericCharacters() throws {
        #expect(try KeyID("ABC123DEFG").rawValue == "ABC123DEFG")
        for bad in ["", "ABC123DEF", "ABC123DEFGH", "ABC 123DEF", "ABC123DEF!", "ÄBC123DEFG"] {
            #expect(throws: ProviderIdentifierError.self) { try KeyID(bad) }
            #expect(throws: ProviderIdentifierError.self) { try TeamID(bad) }
        }
        let error = try #require(throws: ProviderIdentifierError.self) { try TeamID("short") }
        #expect(error.description.contains("10"), "the error says what is expected: \(error)")
    }

    @Test func allThreePEMFormsLoadAndAgree() throws {
        let pem = try Self.pythonKey()
        let fromPKCS8 = try ProviderSigningKey(pem: pem.pkcs8, keyID: Self.keyID, teamID: Self.teamID)
        let fromSEC1 = try ProviderSigningKey(pem: pem.sec1, keyID: Self.keyID, teamID: Self.teamID)
        let publicKey = try ProviderPublicKey(pem: pem.publicKey, keyID: Self.keyID, teamID: Self.teamID)
        // The public halves derived from both private forms are Python's public key.
        #expect(fromPKCS8.publicKey.pem == publicKey.pem)
        #expect(fromSEC1.publicKey.pem == publicKey.pem)
        // A token signed with either form verifies with the public key from Python.
        let verifier = ProviderTokenVerifier(keys: [publicKey])
        for key in [fromPKCS8, fromSEC1] {
            let token = ProviderToken.sign(with: key, issuedAt: Date())
            #expect(throws: Never.self) { try verifier.verify(token.rawValue, at: Date()).get() }
        }
        // A server may be given the .p8 itself: its public half is used.
        let fromPrivate = try ProviderPublicKey(pem: pem.pkcs8, keyID: Self.keyID, teamID: Self.teamID)
        #expect(fromPrivate.pem == publicKey.pem)
    }

    @Test func badFilesNameTheFileAndTheProblem() throws {
        let directory = try TemporaryDirectory()
        try ExternalTools.requirePython(modules: "cryptography", package: "cryptography")
        let other = try ExternalTools.python("""
            from cryptography.hazmat.primitives.asymmetric import ec, rsa
            from cryptography.hazmat.primitives import serialization as s
            r = rsa.generate_private_key(public_exponent=65537, key_size=2048)
            p = ec.generate_private_key(ec.SECP384R1())
            f = s.PrivateFormat.PKCS8
            print(r.private_bytes(s.Encoding.PEM, f, s.NoEncryption()).decode(), end='|')
            print(p.private_bytes(s.Encoding.PEM, f, s.NoEncryption()).decode(), end='')
            """)
        let parts = String(decoding: other, as: UTF8.self).split(separator: "|").map(String.init)
        let cases: [(name: String, text: String?, problem: String)] = [
            ("missing.p8", nil, "no such file"),
            ("empty.p8", "", "no PEM block"),
            ("cert.p8", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n", "CERTIFICATE"),
            ("rsa.p8", parts[0], "P-256"),
            ("p384.p8", parts[1], "P-256"),
            ("garbage.p8", "-----BEGIN PRIVATE KEY-----\nnot base64 at all\n-----END PRIVATE KEY-----\n", "P-256"),
        ]
        for item in cases {
            if let text = item.text { try directory.write(item.name, text) }
            let path = directory.path(item.name)
            let error = try #require(throws: CredentialError.self) {
                try ProviderSigningKey(contentsOfFile: path, keyID: Self.keyID, teamID: Self.teamID)
            }
            #expect(error.source == path, "\(item.name)")
            #expect(error.problem.contains(item.problem), "\(item.name): \(error.problem)")
            // No key material in the error: no base64 run from the file appears in it.
            if let text = item.text, text.count > 100 {
                let body = text.split(separator: "\n").dropFirst().first.map(String.init) ?? ""
                #expect(!error.description.contains(body.prefix(20)))
            }
        }
        let publicError = try #require(throws: CredentialError.self) {
            try ProviderPublicKey(pem: parts[1], keyID: Self.keyID, teamID: Self.teamID, source: "server.pem")
        }
        #expect(publicError.description.hasPrefix("server.pem: "))
    }

    @Test func keyMaterialNeverInDescriptions() throws {
        let key = ProviderSigningKey.generate(keyID: Self.keyID, teamID: Self.teamID)
        let pemBody = key.pkcs8PEM.split(separator: "\n").dropFirst().joined()
        let texts = [key.description, String(describing: key), String(reflecting: key), "\(key.publicKey)",
                     String(describing: ProviderToken.sign(with: key, issuedAt: Date()))]
        for text in texts {
            #expect(!text.contains(pemBody.prefix(16)), "\(text)")
            #expect(text.contains("ABC123DEFG"))
        }
        let token = ProviderToken.sign(with: key, issuedAt: Date())
        #expect(!String(describing: token).contains(token.rawValue.split(separator: ".")[2]))
    }
}
