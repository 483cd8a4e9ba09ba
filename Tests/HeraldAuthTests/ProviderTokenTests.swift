import Foundation
import HeraldAuth
import HeraldAuthTestSupport
import HeraldProtocol
import HeraldTestSupport
import Testing

/// Provider tokens checked against Python's `cryptography` both ways: tokens Herald signs are
/// verified by Python, and tokens Python signs (raw `r‖s` and DER, as Apple's `openssl` recipe
/// makes) are verified by Herald. Each rejection carries the reason APNs answers with.
@Suite(.ownThreads) struct ProviderTokenTests {
    static let keyID = try! KeyID("ABC123DEFG")
    static let teamID = try! TeamID("DEF123GHIJ")
    static let now = Date(timeIntervalSince1970: 1_790_000_000)

    /// Python: signs `header.claims` (given as JSON texts) with a new P-256 key. Returns the
    /// key's public PEM and the token with a raw and with a DER signature.
    static func pythonTokens(header: String, claims: String) throws -> (publicKey: String, raw: String, der: String) {
        try ExternalTools.requirePython(modules: "cryptography", package: "cryptography")
        let script = """
            import base64, sys, json
            from cryptography.hazmat.primitives.asymmetric import ec
            from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
            from cryptography.hazmat.primitives import hashes, serialization as s
            b = lambda x: base64.urlsafe_b64encode(x).rstrip(b'=').decode()
            header, claims = sys.stdin.read().split('\\n')
            k = ec.generate_private_key(ec.SECP256R1())
            signing_input = b(header.encode()) + '.' + b(claims.encode())
            der = k.sign(signing_input.encode(), ec.ECDSA(hashes.SHA256()))
            r, s_ = decode_dss_signature(der)
            raw = r.to_bytes(32, 'big') + s_.to_bytes(32, 'big')
            print(k.public_key().public_bytes(s.Encoding.PEM, s.PublicFormat.SubjectPublicKeyInfo).decode(), end='|')
            print(signing_input + '.' + b(raw), end='|')
            print(signing_input + '.' + b(der), end='')
            """
        let output = try ExternalTools.python(script, stdin: Array("\(header)\n\(claims)".utf8))
        let parts = String(decoding: output, as: UTF8.self).split(separator: "|").map(String.init)
        return (parts[0], parts[1], parts[2])
    }

    @Test func heraldTokensVerifyInPython() throws {
        try ExternalTools.requirePython(modules: "cryptography", package: "cryptography")
        let key = ProviderSigningKey.generate(keyID: Self.keyID, teamID: Self.teamID)
        let token = ProviderToken.sign(with: key, issuedAt: Self.now)
        let script = """
            import base64, json, sys
            from cryptography.hazmat.primitives.asymmetric import ec
            from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
            from cryptography.hazmat.primitives import hashes, serialization as s
            pem, token = sys.stdin.read().split('|')
            d = lambda x: base64.urlsafe_b64decode(x + '=' * (-len(x) % 4))
            h, c, sig = token.split('.')
            assert '=' not in token and '+' not in token and '/' not in token
            assert len(d(sig)) == 64
            sig = encode_dss_signature(int.from_bytes(d(sig)[:32], 'big'), int.from_bytes(d(sig)[32:], 'big'))
            s.load_pem_public_key(pem.encode()).verify(sig, (h + '.' + c).encode(), ec.ECDSA(hashes.SHA256()))
            print(json.dumps([json.loads(d(h)), json.loads(d(c)), d(h).decode(), d(c).decode()]))
            """
        let output = try ExternalTools.python(script, stdin: Array("\(key.publicKey.pem)|\(token.rawValue)".utf8))
        let text = String(decoding: output, as: UTF8.self)
        // Python verified the signature (or raised); the header and claims are exactly APNs' form.
        #expect(text.contains(#""{\"alg\":\"ES256\",\"kid\":\"ABC123DEFG\"}""#), "\(text)")
        #expect(text.contains(#""{\"iss\":\"DEF123GHIJ\",\"iat\":1790000000}""#), "\(text)")
    }

    @Test func pythonTokensVerifyInHeraldWithRawAndDERSignatures() throws {
        let python = try Self.pythonTokens(header: #"{"alg":"ES256","kid":"ABC123DEFG"}"#, claims: #"{"iss":"DEF123GHIJ","iat":1790000000}"#)
        let key = try ProviderPublicKey(pem: python.publicKey, keyID: Self.keyID, teamID: Self.teamID)
        let verifier = ProviderTokenVerifier(keys: [key])
        let raw = try verifier.verify(python.raw, at: Self.now).get()
        #expect(raw.keyID == "ABC123DEFG" && raw.teamID == "DEF123GHIJ" && raw.issuedAt == 1_790_000_000)
        #expect(!raw.hasDERSignature)
        let der = try verifier.verify(python.der, at: Self.now).get()
        #expect(der.hasDERSignature)
        // Another key does not verify either form.
        let stranger = ProviderTokenVerifier(keys: [ProviderSigningKey.generate(keyID: Self.keyID, teamID: Self.teamID).publicKey])
        for token in [python.raw, python.der] {
            let rejection = try #require(throws: ProviderTokenRejection.self) { try stranger.verify(token, at: Self.now).get() }
            #expect(rejection.reason == .invalidProviderToken)
            #expect(rejection.problem.contains("signature"))
        }
    }

    @Test func otherAlgorithmsAreRefused() throws {
        let key = ProviderSigningKey.generate(keyID: Self.keyID, teamID: Self.teamID)
        let verifier = ProviderTokenVerifier(keys: [key.publicKey])
        let claims = Self.b64(#"{"iss":"DEF123GHIJ","iat":1790000000}"#)
        for alg in ["none", "HS256", "RS256", "ES384", "es256"] {
            let header = Self.b64(#"{"alg":"\#(alg)","kid":"ABC123DEFG"}"#)
            // An unsecured token (empty signature) and one with a plausible 64-byte signature.
            for signature in ["", Self.b64(String(repeating: "x", count: 64))] {
                let rejection = try #require(throws: ProviderTokenRejection.self) {
                    try verifier.verify("\(header).\(claims).\(signature)", at: Self.now).get()
                }
                #expect(rejection.reason == .invalidProviderToken, "\(alg)")
            }
        }
        // Missing alg entirely (Apple's own sample token has none).
        let rejection = try #require(throws: ProviderTokenRejection.self) {
            try verifier.verify("\(Self.b64(#"{"kid":"ABC123DEFG"}"#)).\(claims).\(Self.b64("sig"))", at: Self.now).get()
        }
        #expect(rejection.problem.contains("alg"))
    }

    @Test func tamperingAndUnknownKeysAreRefused() throws {
        let key = ProviderSigningKey.generate(keyID: Self.keyID, teamID: Self.teamID)
        let verifier = ProviderTokenVerifier(keys: [key.publicKey])
        let token = ProviderToken.sign(with: key, issuedAt: Self.now).rawValue
        let parts = token.split(separator: ".").map(String.init)
        #expect(throws: Never.self) { try verifier.verify(token, at: Self.now).get() }
        let tampered = [
            // Claims re-encoded with another team, header with another kid: signature no longer matches.
            "\(parts[0]).\(Self.b64(#"{"iss":"DEF123GHIJ","iat":1790000001}"#)).\(parts[2])",
            "\(Self.b64(#"{"alg":"ES256","kid":"ABC123DEFG","typ":"JWT"}"#)).\(parts[1]).\(parts[2])",
            // One signature byte flipped.
            "\(parts[0]).\(parts[1]).\(Self.flipLast(parts[2]))",
        ]
        for text in tampered {
            let rejection = try #require(throws: ProviderTokenRejection.self) { try verifier.verify(text, at: Self.now).get() }
            #expect(rejection.reason == .invalidProviderToken)
        }
        // A key ID nobody registered, and a key used with another team's iss.
        let otherKid = ProviderSigningKey.generate(keyID: try KeyID("ZZZ999YYYX"), teamID: Self.teamID)
        let unknown = try #require(throws: ProviderTokenRejection.self) {
            try verifier.verify(ProviderToken.sign(with: otherKid, issuedAt: Self.now).rawValue, at: Self.now).get()
        }
        #expect(unknown.problem.contains("ZZZ999YYYX"))
        let wrongTeam = try ProviderSigningKey(pem: key.pkcs8PEM, keyID: Self.keyID, teamID: try TeamID("OTHERTEAM1"))
        let team = try #require(throws: ProviderTokenRejection.self) {
            try verifier.verify(ProviderToken.sign(with: wrongTeam, issuedAt: Self.now).rawValue, at: Self.now).get()
        }
        #expect(team.reason == .invalidProviderToken && team.problem.contains("OTHERTEAM1"))
        // Structure: wrong part count, bad base64url, JSON that is not an object.
        for text in ["", "a.b", "a.b.c.d", "!!!.\(parts[1]).\(parts[2])", "\(Self.b64("[1]")).\(parts[1]).\(parts[2])"] {
            let rejection = try #require(throws: ProviderTokenRejection.self) { try verifier.verify(text, at: Self.now).get() }
            #expect(rejection.reason == .invalidProviderToken)
        }
    }

    @Test func issueTimeRules() throws {
        let key = ProviderSigningKey.generate(keyID: Self.keyID, teamID: Self.teamID)
        let verifier = ProviderTokenVerifier(keys: [key.publicKey])
        func verify(age: TimeInterval) -> Result<ProviderToken, ProviderTokenRejection> {
            verifier.verify(ProviderToken.sign(with: key, issuedAt: Self.now.addingTimeInterval(-age)).rawValue, at: Self.now)
        }
        #expect((try? verify(age: 0).get()) != nil)
        #expect((try? verify(age: 3599).get()) != nil)
        #expect((try? verify(age: 3600).get()) != nil, "exactly one hour is still 'no more than one hour'")
        #expect(verify(age: 3601).failureReason == .expiredProviderToken)
        #expect(verify(age: 86_400).failureReason == .expiredProviderToken)
        #expect((try? verify(age: -30).get()) != nil, "a small clock skew is tolerated")
        #expect(verify(age: -3600).failureReason == .invalidProviderToken)
    }

    @Test func stringIssueTimeIsLenientByDefaultAndRefusedWhenStrict() throws {
        let python = try Self.pythonTokens(header: #"{"alg":"ES256","kid":"ABC123DEFG"}"#, claims: #"{"iss":"DEF123GHIJ","iat":"1790000000","kid":"ABC123DEFG"}"#)
        let key = try ProviderPublicKey(pem: python.publicKey, keyID: Self.keyID, teamID: Self.teamID)
        let lenient = try ProviderTokenVerifier(keys: [key]).verify(python.raw, at: Self.now).get()
        #expect(lenient.issuedAtIsString && lenient.issuedAt == 1_790_000_000)
        let strict = ProviderTokenVerifier(keys: [key], options: .init(acceptsStringIssuedAt: false))
        #expect(strict.verify(python.raw, at: Self.now).failureReason == .invalidProviderToken)
        // Milliseconds, as in Apple's sample token, are far in the future: refused.
        let millis = try Self.pythonTokens(header: #"{"alg":"ES256","kid":"ABC123DEFG"}"#, claims: #"{"iss":"DEF123GHIJ","iat":1790000000000}"#)
        let key2 = try ProviderPublicKey(pem: millis.publicKey, keyID: Self.keyID, teamID: Self.teamID)
        #expect(ProviderTokenVerifier(keys: [key2]).verify(millis.raw, at: Self.now).failureReason == .invalidProviderToken)
    }

    @Test func withoutKeysOnlyFormAlgorithmAndAgeAreChecked() throws {
        let verifier = ProviderTokenVerifier(keys: [])
        #expect(!verifier.verifiesSignatures)
        let key = ProviderSigningKey.generate(keyID: Self.keyID, teamID: Self.teamID)
        let token = ProviderToken.sign(with: key, issuedAt: Self.now).rawValue
        let parts = token.split(separator: ".").map(String.init)
        #expect((try? verifier.verify("\(parts[0]).\(parts[1]).\(Self.flipLast(parts[2]))", at: Self.now).get()) != nil)
        #expect(verifier.verify(token, at: Self.now.addingTimeInterval(7200)).failureReason == .expiredProviderToken)
        let none = "\(Self.b64(#"{"alg":"none","kid":"ABC123DEFG"}"#)).\(parts[1]).\(parts[2])"
        #expect(verifier.verify(none, at: Self.now).failureReason == .invalidProviderToken)
    }

    @Test func signerCachesAndRefreshesOnPolicy() async throws {
        final class Clock: @unchecked Sendable {  // Advanced only between awaits of one task.
            var now = ProviderTokenTests.now
        }
        let clock = Clock()
        let key = ProviderSigningKey.generate(keyID: Self.keyID, teamID: Self.teamID)
        let signer = ProviderTokenSigner(key: key, now: { clock.now })
        let first = signer.token()
        clock.now += 49 * 60
        #expect(signer.token() == first, "cached until the policy's 50 minutes")
        clock.now += 60
        let second = signer.token()
        #expect(second != first && second.issuedAt == first.issuedAt + 50 * 60)
        // After ExpiredProviderToken: one refresh for many rejected requests.
        clock.now += 1
        let third = signer.token(replacing: second)
        #expect(third != second)
        #expect(signer.token(replacing: second) == third)
        // Policies are clamped to Apple's 20 to 60 minutes.
        #expect(ProviderTokenSigner.RefreshPolicy(interval: 60).interval == 20 * 60)
        #expect(ProviderTokenSigner.RefreshPolicy(interval: 7200).interval == 60 * 60)
        #expect(ProviderTokenSigner.RefreshPolicy().interval == 50 * 60)
    }

    static func b64(_ text: String) -> String {
        Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    static func flipLast(_ part: String) -> String {
        var characters = Array(part)
        let index = characters.count - 3
        characters[index] = characters[index] == "A" ? "B" : "A"
        return String(characters)
    }
}

extension Result where Failure == ProviderTokenRejection {
    var failureReason: APNsReason? {
        if case .failure(let rejection) = self { return rejection.reason }
        return nil
    }
}

/// Replays the provider-token fuzzer's saved inputs (`Tests/Fixtures/fuzz/FuzzProviderToken/`)
/// through the property it checks, and the property over tokens the tests make.
@Suite(.ownThreads) struct ProviderTokenPropertyTests {
    @Test("saved fuzz inputs", arguments: Fixtures.fuzzInputs("FuzzProviderToken"))
    func saved(_ path: String) throws {
        #expect(ProviderTokenChecks.check(try Fixtures.bytes(path)) == [])
    }

    @Test func thereAreInputsToReplay() {
        #expect(Fixtures.fuzzInputs("FuzzProviderToken").count >= 8)
    }

    /// Every position of a signed token changed to every other base64url character and a few
    /// others: each change is refused.
    @Test func everySingleCharacterChangeIsRefused() {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.=+/ ".utf8)
        var violations: [String] = []
        for index in 0..<400 {
            for replacement in alphabet.enumerated() where replacement.offset % 7 == index % 7 {
                violations += ProviderTokenChecks.check([10, UInt8(index >> 8), UInt8(index & 0xFF), replacement.element])
            }
        }
        #expect(violations.isEmpty, "\(violations.prefix(5))")
    }
}
