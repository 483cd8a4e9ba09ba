import Foundation
import HeraldAuth
@testable import HeraldMock
import HeraldProtocol
import Testing

/// A connection's provider authentication on its own: a token the verifier refused is answered
/// from that verdict for ``ProviderAuthentication/verdictReuse`` (no ES256 verification per
/// request), and verified again after it.
struct ProviderAuthenticationTests {
    let key = ProviderSigningKey.generate(keyID: try! KeyID("ABC123DEFG"), teamID: try! TeamID("DEF123GHIJ"))

    /// A verifier that knows the key, and one that knows none of this team's: the second refuses
    /// what the first accepts, so which one decided shows in the answer.
    var knowing: ProviderTokenVerifier { ProviderTokenVerifier(keys: [key.publicKey]) }
    var stranger: ProviderTokenVerifier {
        ProviderTokenVerifier(keys: [ProviderSigningKey.generate(keyID: try! KeyID("ZZZ999YYYX"), teamID: try! TeamID("DEF123GHIJ")).publicKey])
    }

    func token(issuedAt: Date) -> String {
        ProviderTokenSigner(key: key, now: { issuedAt }).token().rawValue
    }

    func answer(_ authentication: inout ProviderAuthentication, _ jwt: String, at now: Date, _ verifier: ProviderTokenVerifier) -> APNsReason? {
        do throws(Rejection) {
            _ = try authentication.authenticate(jwt, at: now, environment: .sandbox, verifier: verifier)
            return nil
        } catch {
            return error.reason
        }
    }

    @Test func aRefusedTokenIsAnsweredFromItsVerdictForASecond() {
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let jwt = token(issuedAt: start)
        var authentication = ProviderAuthentication()
        #expect(answer(&authentication, jwt, at: start, stranger) == .invalidProviderToken)
        // Within the second the verdict stands, whichever verifier is asked now.
        #expect(answer(&authentication, jwt, at: start.addingTimeInterval(0.5), knowing) == .invalidProviderToken)
        #expect(answer(&authentication, jwt, at: start.addingTimeInterval(0.99), knowing) == .invalidProviderToken)
        // After it, the token is verified again (here accepted), and from then on only its age counts.
        #expect(answer(&authentication, jwt, at: start.addingTimeInterval(1.0), knowing) == nil)
        #expect(answer(&authentication, jwt, at: start.addingTimeInterval(2), stranger) == nil)
        #expect(answer(&authentication, jwt, at: start.addingTimeInterval(3_601), knowing) == .expiredProviderToken)
    }

    /// The mock's verifier sits behind a lock every connection shares: a connection reads it
    /// only to verify a token, not on each request its accepted token authenticates, and the
    /// accepted token still expires by the limit of the verifier that accepted it.
    @Test func anAcceptedTokenNeedsNoVerifierAgain() {
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let jwt = token(issuedAt: start)
        var authentication = ProviderAuthentication()
        var reads = 0
        func verifier(_ limit: TimeInterval) -> ProviderTokenVerifier {
            reads += 1
            return ProviderTokenVerifier(keys: [key.publicKey], options: .init(maximumAge: limit))
        }
        func answer(at seconds: Double, limit: TimeInterval = 600) -> APNsReason? {
            do throws(Rejection) {
                _ = try authentication.authenticate(jwt, at: start.addingTimeInterval(seconds), environment: .sandbox, verifier: verifier(limit))
                return nil
            } catch {
                return error.reason
            }
        }
        #expect(answer(at: 0) == nil && reads == 1)
        for second in 1...100 { #expect(answer(at: Double(second)) == nil) }
        #expect(reads == 1, "the verifier was read \(reads) times for one token")
        // Past the accepting verifier's 600 seconds, whatever a verifier now would allow.
        #expect(answer(at: 601, limit: 3_600) == .expiredProviderToken)
        #expect(reads == 1)
    }

    @Test func anExpiredTokenStaysExpiredAndAnotherTokenIsVerifiedAtOnce() {
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let old = token(issuedAt: start.addingTimeInterval(-3_700))
        var authentication = ProviderAuthentication()
        for step in 0..<5 {
            #expect(answer(&authentication, old, at: start.addingTimeInterval(Double(step) * 0.3), knowing) == .expiredProviderToken)
        }
        // A different token is never answered from the verdict on the last one.
        #expect(answer(&authentication, token(issuedAt: start), at: start.addingTimeInterval(1.3), knowing) == nil)
        // A clock that went back is not within the second.
        var other = ProviderAuthentication()
        let fresh = token(issuedAt: start)
        #expect(answer(&other, fresh, at: start, stranger) == .invalidProviderToken)
        #expect(answer(&other, fresh, at: start.addingTimeInterval(-0.5), knowing) == nil)
    }
}
