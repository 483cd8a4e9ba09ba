import Foundation
import HeraldAuth
import HeraldProtocol

/// Properties of provider-token parsing and verification, shared by the fuzzer
/// (`FuzzProviderToken`) and the tests that replay its findings.
public enum ProviderTokenChecks {
    /// One fixed key: verifying against it is deterministic for a given input.
    static let key: ProviderSigningKey = {
        // A fixed scalar, so a saved fuzz input means the same thing on every run.
        let pem = """
            -----BEGIN PRIVATE KEY-----
            MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgevZzL1gdAFr88hb2
            OF/2NxApJCzGCEDdfSp6VQO30hyhRANCAAQRWz+jn65BtOMvdyHKcvjBeBSDZH2r
            1RTwjmYSi9R/zpBnuQ4EiMnCqfMPWiZqB4QdbAd0E7oH50VpuZ1P087G
            -----END PRIVATE KEY-----
            """
        return try! ProviderSigningKey(pem: pem, keyID: try! KeyID("FUZZKEY001"), teamID: try! TeamID("FUZZTEAM01"))
    }()
    static let now = Date(timeIntervalSince1970: 1_790_000_000)

    /// Any bytes as a token: parsing and verifying never crash; a token the verifier accepts is
    /// ES256, names the registered key and team, and is within the age rules. Then the input
    /// picks one position of a freshly signed token to change: every change is refused.
    public static func check(_ bytes: [UInt8]) -> [String] {
        var violations: [String] = []
        let text = String(decoding: bytes, as: UTF8.self)
        let verifier = ProviderTokenVerifier(keys: [key.publicKey])
        switch verifier.verify(text, at: now) {
        case .success(let token):
            if token.algorithm != "ES256" { violations.append("accepted alg \(token.algorithm)") }
            if token.keyID != "FUZZKEY001" || token.teamID != "FUZZTEAM01" { violations.append("accepted another key or team") }
            if abs(now.timeIntervalSince1970 - Double(token.issuedAt)) > 3600 { violations.append("accepted iat \(token.issuedAt)") }
        case .failure(let rejection):
            if rejection.reason != .invalidProviderToken && rejection.reason != .expiredProviderToken {
                violations.append("rejection with reason \(rejection.reason)")
            }
        }
        _ = ProviderTokenVerifier(keys: []).verify(text, at: now)

        // Tampering: a signed token with one character replaced by the input's choice.
        guard bytes.count >= 3 else { return violations }
        let issued = now.addingTimeInterval(-Double(bytes[0]))
        let token = Array(ProviderToken.sign(with: key, issuedAt: issued).rawValue.utf8)
        if (try? verifier.verify(String(decoding: token, as: UTF8.self), at: now).get()) == nil {
            violations.append("a freshly signed token was refused")
        }
        var changed = token
        let index = (Int(bytes[1]) << 8 | Int(bytes[2])) % token.count
        let replacement = bytes.count > 3 ? bytes[3] : UInt8(ascii: "A")
        guard replacement != changed[index] else { return violations }
        changed[index] = replacement
        if (try? verifier.verify(String(decoding: changed, as: UTF8.self), at: now).get()) != nil {
            violations.append("a token changed at \(index) (\(UnicodeScalar(token[index])) -> \(replacement)) was accepted")
        }
        return violations
    }
}
