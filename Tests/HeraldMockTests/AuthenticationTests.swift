import Foundation
import HeraldAuth
import HeraldJSON
import HeraldMock
import HeraldProtocol
import HeraldTestSupport
import Synchronization
import Testing

/// Token and certificate authentication as Apple describes it ("Establishing a token-based
/// connection to APNs", "Establishing a certificate-based connection to APNs"), seen by Python's
/// `h2` with tokens signed by `cryptography` and client certificates from the mock's CA.
@Suite(.serialized) struct AuthenticationTests {
    typealias H = MockHarness

    @Test func providerTokenReasons() async throws {
        let mock = try await H.start()
        defer { Task { await mock.stop() } }
        let stranger = ProviderSigningKey.generate(keyID: try KeyID("ZZZ999YYYX"), teamID: H.teamID)
        let run = try await mock.python([
            H.push(jwt: nil, connection: "none"),
            H.push(jwt: ["key": "main", "flipSignature": true], connection: "badsig"),
            H.push(jwt: ["key": "stranger"], connection: "unknown-kid"),
            H.push(jwt: ["key": "main", "alg": "none"], connection: "alg-none"),
            H.push(jwt: ["key": "main", "alg": "HS256"], connection: "alg-hs256"),
            H.push(jwt: ["key": "main", "age": 3700], connection: "old"),
            H.push(jwt: ["key": "main", "age": -3600], connection: "future"),
            H.push(jwt: ["key": "main", "der": true], connection: "der"),
            H.push(jwt: ["key": "main", "iss": "OTHERTEAM1"], connection: "wrong-iss"),
        ], extraKeys: ["stranger": stranger])
        let expected: [(Int, String?)] = [
            (403, "MissingProviderToken"), (403, "InvalidProviderToken"), (403, "InvalidProviderToken"), (403, "InvalidProviderToken"),
            (403, "InvalidProviderToken"), (403, "ExpiredProviderToken"), (403, "InvalidProviderToken"), (200, nil), (403, "InvalidProviderToken"),
        ]
        for (index, answer) in run.answers.enumerated() {
            #expect(answer.status == expected[index].0 && answer.reason == expected[index].1, "case \(index): \(answer.status ?? -1) \(answer.body)")
        }
        // The record says why, in words.
        let expired = try await mock.server.notifications(NotificationQuery()).first { $0.reason == .expiredProviderToken }
        #expect(expired?.explanation?.contains("seconds old") == true)
        #expect(expired?.headers.first { $0.name == "authorization" }?.value.hasSuffix(".…") == true, "the signature is not recorded")
    }

    @Test func oneStreamUntilAValidTokenThenRaised() async throws {
        let mock = try await H.start { $0.maximumConcurrentStreams = 500 }
        defer { Task { await mock.stop() } }
        let run = try await mock.python([
            H.push(jwt: ["key": "main", "flipSignature": true]),
            ["connection": "a", "action": "pump", "seconds": 0.3],
            H.push(),
            ["connection": "a", "action": "pump", "seconds": 0.3],
        ])
        #expect(run.answers.map(\.status) == [403, 200])
        // The first SETTINGS allowed one stream; a rejected token raised nothing; the first valid one did.
        #expect(run.settings() == [1, 500], "\(run.settings())")
    }

    @Test func tokenRotationAndTeamBindingOnOneConnection() async throws {
        let mock = try await H.start()
        defer { Task { await mock.stop() } }
        let otherTeam = ProviderSigningKey.generate(keyID: try KeyID("OTHERKEY01"), teamID: try TeamID("OTHERTEAM1"))
        let mock2Keys = [mock.key.publicKey, otherTeam.publicKey]
        await mock.stop()
        let both = try await H.start { $0.keys = mock2Keys }
        defer { Task { await both.stop() } }
        // The harness's own key differs from `mock.key`; sign with the keys the server knows.
        let run = try await both.python([
            H.push(jwt: ["key": "first"]),
            H.push(jwt: ["key": "first"]),  // the same token again: fine
            H.push(jwt: ["key": "first", "age": 1]),  // a different token minutes after the first: too soon
            H.push(jwt: ["key": "other"]),  // another team on this connection
            H.push(jwt: ["key": "other"], connection: "b"),  // on its own connection: fine
        ], extraKeys: ["first": mock.key, "other": otherTeam])
        #expect(run.answers.map(\.status) == [200, 200, 429, 403, 200])
        #expect(run.answers[2].reason == "TooManyProviderTokenUpdates")
        #expect(run.answers[3].reason == "InvalidProviderToken")
    }

    @Test func tokenRotationAfterTwentyMinutesIsAccepted() async throws {
        // The mock's clock: the first request at real time, later ones 21 minutes on.
        let calls = Mutex(0)
        let mock = try await H.start {
            $0.now = {
                let count = calls.withLock { value -> Int in value += 1; return value }
                return Date().addingTimeInterval(count > 1 ? 21 * 60 : 0)
            }
        }
        defer { Task { await mock.stop() } }
        let run = try await mock.python([
            H.push(jwt: ["key": "main"]),
            H.push(jwt: ["key": "main", "age": 1]),  // a new token 21 minutes after the first
            H.push(jwt: ["key": "main", "age": 2]),  // and another at once: too soon
        ])
        #expect(run.answers.map(\.status) == [200, 200, 429])
    }

    @Test func withoutKeysSignaturesAreNotChecked() async throws {
        let mock = try await H.start(registerKey: false)
        defer { Task { await mock.stop() } }
        let run = try await mock.python([
            H.push(jwt: ["key": "main", "flipSignature": true]),
            H.push(jwt: ["key": "main", "age": 4000], connection: "b"),
            H.push(jwt: ["key": "main", "alg": "none"], connection: "c"),
        ])
        #expect(run.answers.map(\.status) == [200, 403, 403])
        #expect(run.answers.map(\.reason) == [nil, "ExpiredProviderToken", "InvalidProviderToken"])
    }

    @Test func certificateAuthenticationTakesTopicsFromTheCertificate() async throws {
        let mock = try await H.start(tls: true) { $0.authentication = .certificate(trustRoots: [], acceptsAnyCertificate: false) }
        defer { Task { await mock.stop() } }
        let authority = try #require(mock.server.certificateAuthority)
        let client = try authority.issueClientCertificate(bundleID: "com.example.app", environments: [.sandbox])
        let single = try authority.issueClientCertificate(
            bundleID: "com.example.single", topics: [.init(name: "com.example.single", kinds: ["app"])], environments: [.sandbox])
        let production = try authority.issueClientCertificate(bundleID: "com.example.app", environments: [.production])
        for (name, issued) in [("client", client), ("single", single), ("production", production)] {
            try mock.directory.write("\(name).pem", issued.certificatePEM)
            try mock.directory.write("\(name)-key.pem", issued.privateKeyPEM)
        }
        func run(_ name: String, _ steps: [JSONValue]) async throws -> PythonRun {
            try await mock.python(steps, tls: true, cert: mock.directory.path("\(name).pem"), clientKey: mock.directory.path("\(name)-key.pem"))
        }
        let voipToken = H.otherToken
        let multi = try await run("client", [
            H.push(jwt: nil),
            H.push(token: voipToken, headers: [("apns-topic", "com.example.app.voip"), ("apns-push-type", "voip")], jwt: nil),
            H.push(headers: [("apns-topic", "com.other.app"), ("apns-push-type", "alert")], jwt: nil),
            H.push(headers: [("apns-push-type", "alert")], jwt: nil),  // several topics: the bundle ID is the default
        ])
        #expect(multi.answers.map(\.status) == [200, 200, 400, 200])
        #expect(multi.answers[2].reason == "TopicDisallowed")
        // Certificate connections are not limited to one stream at first.
        #expect(multi.settings().first == 1000)

        let alone = try await run("single", [H.push(token: "aa" + String(H.token.dropFirst(2)), headers: [("apns-push-type", "alert")], jwt: nil)])
        #expect(alone.answers[0].status == 200)
        let record = try #require(try await mock.server.notifications(NotificationQuery()).first)
        #expect(record.topic == "com.example.single", "a single-topic certificate's topic is the default")

        let wrongEnvironment = try await run("production", [H.push(jwt: nil)])
        #expect(wrongEnvironment.answers[0].status == 403 && wrongEnvironment.answers[0].reason == "BadCertificateEnvironment")
    }

    @Test func certificateModeRefusesConnectionsWithoutACertificate() async throws {
        let mock = try await H.start(tls: true) { $0.authentication = .certificate(trustRoots: [], acceptsAnyCertificate: false) }
        defer { Task { await mock.stop() } }
        // TLS 1.3 reports the missing certificate after the handshake: the connection is closed
        // without an answer (with TLS 1.2 the handshake itself fails).
        let run = try? await mock.python([H.push(jwt: nil)], tls: true)
        if let run { #expect(run.answers[0].status == nil && run.answers[0].error == "closed") }
        #expect(try await mock.server.notifications().isEmpty, "nothing was processed")
    }
}
