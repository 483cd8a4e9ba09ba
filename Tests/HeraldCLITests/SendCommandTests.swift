import Foundation
import HeraldAuth
import HeraldMock
import HeraldProtocol
import HeraldTestSupport
import HeraldHarness
import Testing

/// `herald send`, `herald token` and `herald bench send` as processes, against an in-process
/// mock over TLS.
@Suite(.serialized) struct SendCommandTests {
    struct Setup {
        let harness: ClientHarness
        let directory: TemporaryDirectory
        var serverArguments: [String] {
            ["--host", "127.0.0.1", "--port", String(harness.mock.port), "--ca-file", directory.path("ca.pem")]
        }
        var keyArguments: [String] {
            ["--p8", directory.path("AuthKey.p8"), "--key-id", ClientHarness.keyID.rawValue, "--team-id", ClientHarness.teamID.rawValue]
        }

        static func start() async throws -> Setup {
            let harness = try await ClientHarness.start()
            let directory = try TemporaryDirectory()
            try directory.write("ca.pem", try #require(harness.mock.trustRootPEM))
            try directory.write("AuthKey.p8", harness.key.pkcs8PEM)
            return Setup(harness: harness, directory: directory)
        }

        func herald(_ arguments: [String], environment: [String: String]? = nil) async throws -> (status: Int32, stdout: String, stderr: String) {
            let run = try await HeraldProcess.runInBackground(arguments, environment: environment ?? [:], timeout: .seconds(120))
            return (run.status, String(decoding: run.stdout, as: UTF8.self), run.stderr)
        }
    }

    static let tokens = ClientHarness.tokens(3, salt: 5)

    @Test func sendsToOneTokenAndPrintsItsApnsID() async throws {
        let setup = try await Setup.start()
        defer { Task { await setup.harness.stop() } }
        let body = #"{"aps":{"alert":{"title":"Hello","body":"from herald send"}},"order":42}"#
        try setup.directory.write("alert.json", body)
        let run = try await setup.herald(["send", setup.directory.path("alert.json"), "--token", Self.tokens[0].hex, "--topic", ClientHarness.topic] + setup.serverArguments + setup.keyArguments)
        #expect(run.status == 0, "\(run.stderr)")
        let fields = run.stdout.split(separator: " ")
        #expect(fields.count >= 4 && fields[0] == Self.tokens[0].hex && fields[1] == "accepted" && fields[2] == "apns-id", "\(run.stdout)")
        let id = String(fields[3]).trimmingCharacters(in: .whitespacesAndNewlines)
        let record = try #require(try await setup.harness.mock.notification(id: id))
        #expect(record.body == Array(body.utf8), "the file's bytes, as they are")
        #expect(record.topic == ClientHarness.topic)
    }

    @Test func tokensFileGivesOneLinePerTokenAndExit1OnARejection() async throws {
        let setup = try await Setup.start()
        defer { Task { await setup.harness.stop() } }
        setup.harness.mock.unregister(Self.tokens[1], at: Date(timeIntervalSince1970: 1_700_000_000))
        try setup.directory.write("alert.json", #"{"aps":{"alert":"Hi"}}"#)
        // Comments, blank lines, CRLF, spaces and tabs around tokens, no final newline.
        try setup.directory.write("tokens.txt", "# devices\r\n  \(Self.tokens[0].hex)  \r\n\r\n\t\(Self.tokens[1].hex)\n   \n\(Self.tokens[2].hex)")
        let run = try await setup.herald(["send", setup.directory.path("alert.json"), "--tokens-file", setup.directory.path("tokens.txt"), "--topic", ClientHarness.topic] + setup.serverArguments + setup.keyArguments)
        #expect(run.status == 1)
        let lines = run.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 3)
        #expect(Set(lines.map { String($0.prefix(64)) }) == Set(Self.tokens.map(\.hex)), "full tokens")
        let rejected = try #require(lines.first { $0.hasPrefix(Self.tokens[1].hex) })
        #expect(rejected.contains("rejected 410 Unregistered"))
        #expect(rejected.contains("stop sending"), "advice")
        #expect(run.stderr.contains("2 of 3 accepted"))
        // A bad line in the file is named with its line number, exit 2.
        try setup.directory.write("bad.txt", "\(Self.tokens[0].hex)\nnot-a-token\n")
        let bad = try await setup.herald(["send", setup.directory.path("alert.json"), "--tokens-file", setup.directory.path("bad.txt"), "--topic", ClientHarness.topic] + setup.serverArguments + setup.keyArguments)
        #expect(bad.status == 2)
        #expect(bad.stderr.contains("bad.txt:2:"))
    }

    /// What no retry mends within the timeout is said once, at once, with the flag that fixes
    /// it: never "rejected" (APNs answered nothing), never a build machine's source path.
    @Test func unreachableServersAreSaidAtOnceWithTheFlagThatFixesThem() async throws {
        let setup = try await Setup.start()
        defer { Task { await setup.harness.stop() } }
        try setup.directory.write("alert.json", #"{"aps":{"alert":"Hi"}}"#)
        let base = ["send", setup.directory.path("alert.json"), "--token", Self.tokens[0].hex, "--topic", ClientHarness.topic, "--timeout", "60"] + setup.keyArguments
        let port = String(setup.harness.mock.port)
        let cases: [(arguments: [String], says: String, flag: String)] = [
            (["--host", "127.0.0.1", "--port", port], "TLS certificate is not trusted", "--ca-file"),
            // RFC 6761: names under .invalid never resolve.
            (["--host", "no-such-host.invalid", "--port", port], "does not resolve", "--host"),
            (["--host", "127.0.0.1", "--port", "1"], "refused", "--port"),
        ]
        for (arguments, says, flag) in cases {
            let started = ContinuousClock.now
            let run = try await setup.herald(base + arguments)
            let took = ContinuousClock.now - started
            #expect(run.status == 1, "\(arguments): \(run.stderr)")
            #expect(run.stderr.contains(says) && run.stderr.contains(flag), "\(arguments): \(run.stderr)")
            #expect(!run.stderr.contains("rejected") && !run.stdout.contains("rejected") && !run.stderr.contains(".cc:") && !run.stderr.contains("/.build"), "\(run.stderr)")
            // Not the 60-s timeout: a process start, a connection attempt and the message.
            #expect(took < .seconds(30), "\(arguments) took \(took)")
        }
        #expect(try await setup.harness.mock.notifications().isEmpty)
    }

    @Test func simulatorFilesGiveTheTopicAndKeepTheirKeysHome() async throws {
        let setup = try await Setup.start()
        defer { Task { await setup.harness.stop() } }
        try setup.directory.write("push.apns", """
            {"Simulator Target Bundle": "com.example.app", "aps": {"alert": "From a simulator file"}, "id": 7}
            """)
        let run = try await setup.herald(["send", setup.directory.path("push.apns"), "--token", Self.tokens[0].hex] + setup.serverArguments + setup.keyArguments)
        #expect(run.status == 0, "\(run.stderr)")
        let record = try #require(try await setup.harness.mock.notifications().first)
        #expect(record.topic == "com.example.app")
        #expect(String(decoding: record.body, as: UTF8.self) == #"{"aps": {"alert": "From a simulator file"}, "id": 7}"#)
    }

    @Test func lintErrorsStopTheSendUnlessNoLint() async throws {
        let setup = try await Setup.start()
        defer { Task { await setup.harness.stop() } }
        try setup.directory.write("bad.json", #"{"aps":{"alert":"Hi","badge":"5"}}"#)
        let arguments = ["send", setup.directory.path("bad.json"), "--token", Self.tokens[0].hex, "--topic", ClientHarness.topic] + setup.serverArguments + setup.keyArguments
        let refused = try await setup.herald(arguments)
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("bad.json:1:"), "the finding with its place: \(refused.stderr)")
        #expect(refused.stderr.contains("not sent"))
        #expect(try await setup.harness.mock.notifications().isEmpty)
        let forced = try await setup.herald(arguments + ["--no-lint"])
        #expect(forced.status == 0, "\(forced.stderr)")
        #expect(try await setup.harness.mock.notifications().count == 1)
    }

    @Test func credentialsFromTheEnvironmentAndClearUsageErrors() async throws {
        let setup = try await Setup.start()
        defer { Task { await setup.harness.stop() } }
        try setup.directory.write("alert.json", #"{"aps":{"alert":"Hi"}}"#)
        var environment = ProcessInfo.processInfo.environment
        environment["HERALD_P8"] = setup.directory.path("AuthKey.p8")
        environment["HERALD_KEY_ID"] = ClientHarness.keyID.rawValue
        environment["HERALD_TEAM_ID"] = ClientHarness.teamID.rawValue
        let base = ["send", setup.directory.path("alert.json"), "--token", Self.tokens[0].hex, "--topic", ClientHarness.topic]
        let run = try await setup.herald(base + setup.serverArguments, environment: environment)
        #expect(run.status == 0, "\(run.stderr)")

        environment["HERALD_P8"] = nil
        let noCredentials = try await setup.herald(base + setup.serverArguments, environment: environment)
        #expect(noCredentials.status == 2)
        #expect(noCredentials.stderr.contains("--p8 FILE --key-id ID --team-id ID"))
        let noServer = try await setup.herald(base + setup.keyArguments)
        #expect(noServer.status == 2)
        #expect(noServer.stderr.contains("--sandbox"))
        let missingKey = try await setup.herald(base + setup.serverArguments + ["--p8", setup.directory.path("nope.p8"), "--key-id", "ABC123DEFG", "--team-id", "DEF123GHIJ"])
        #expect(missingKey.status == 2)
        #expect(missingKey.stderr.contains("nope.p8"))
        let endless = try await setup.herald(base + setup.serverArguments + setup.keyArguments + ["--timeout", "1e300"])
        #expect(endless.status == 2 && endless.stderr.contains("at most 86400"), "\(endless.stderr)")
        // The header flags herald lint shares: malformed values are refused before anything is
        // sent, naming the flag and what it takes.
        let sending = base + setup.serverArguments + setup.keyArguments
        for (flags, expected) in [
            (["--priority", "7"], "--priority is 10, 5 or 1, not 7"), (["--push-type", "loud"], "--push-type loud is not one of alert"),
            (["--apns-id", "42"], "apns-id"), (["--expiration", "soon"], "apns-expiration"),
        ] {
            let refused = try await setup.herald(sending + flags)
            #expect(refused.status == 2 && refused.stderr.contains(expected), "\(flags): \(refused.stderr)")
        }
        // A key file named as Apple names it says which key it is: another --key-id is refused
        // before anything is sent (APNs would refuse every push with InvalidProviderToken).
        try setup.directory.write("AuthKey_OTHERKEY12.p8", setup.harness.key.pkcs8PEM)
        let misnamed = try await setup.herald(base + setup.serverArguments + [
            "--p8", setup.directory.path("AuthKey_OTHERKEY12.p8"), "--key-id", ClientHarness.keyID.rawValue, "--team-id", ClientHarness.teamID.rawValue,
        ])
        #expect(misnamed.status == 2 && misnamed.stderr.contains("is the key OTHERKEY12") && misnamed.stderr.contains("--key-id"), "\(misnamed.stderr)")
        #expect(try await setup.harness.mock.notifications().count == 1, "only the first run sent")
    }

    @Test func tokenCommandPrintsAVerifiableJWT() async throws {
        let setup = try await Setup.start()
        defer { Task { await setup.harness.stop() } }
        let run = try await setup.herald(["token"] + setup.keyArguments)
        #expect(run.status == 0, "\(run.stderr)")
        let jwt = run.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let verifier = ProviderTokenVerifier(keys: [setup.harness.key.publicKey])
        let verified = try verifier.verify(jwt, at: Date()).get()
        #expect(verified.keyID == ClientHarness.keyID.rawValue)
        #expect(abs(Double(verified.issuedAt) - Date().timeIntervalSince1970) < 120)
    }

    @Test(.heavy) func benchSendReportsThroughputLatencyAndMemory() async throws {
        let setup = try await Setup.start()
        defer { Task { await setup.harness.stop() } }
        let run = try await setup.herald(["bench", "send", "--count", "500", "--warmup", "50", "--connections", "2", "--concurrency", "20"] + setup.serverArguments + setup.keyArguments)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("requests: 500 in"))
        #expect(run.stdout.contains("throughput: "))
        #expect(run.stdout.contains("latency ms: p50 "))
        #expect(run.stdout.contains("accepted: 500"))
        #expect(run.stdout.contains("errors: none"))
        #expect(run.stdout.contains("peak memory: "))
        var query = NotificationQuery()
        query.limit = 10_000
        #expect(try await setup.harness.mock.notifications(query).count == 550, "warm-up and measured requests reached the mock")
    }
}
