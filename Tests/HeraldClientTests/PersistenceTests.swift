import Foundation
import HeraldAuth
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import HeraldClient
@testable import HeraldMock
import HeraldProtocol
import HeraldTestSupport
import Testing

/// `herald mock --db FILE`: what was captured survives a restart and a kill, the API's filters
/// run in the database, and retention applies by count and by age.
@Suite(.serialized) struct PersistenceTests {
    /// The API's answer for `query`, read by Python's `json`: total, then each record's
    /// `[id, apnsId, status]`.
    static func listing(_ apiPort: Int, _ query: String = "") async throws -> (total: Int, records: String) {
        let (data, _) = try await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(apiPort)/api/v1/notifications\(query)")!)
        let values = try ExternalTools.pythonJSON(Array(data), ["d['total']", "[[n['id'], n['apnsId'], n['status']] for n in d['notifications']]"])
        return (Int(values[0]) ?? -1, values[1])
    }

    @Test func requestsSurviveARestartAndFiltersRunInTheDatabase() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("mock.db")
        let harness = try await ClientHarness.start {
            $0.apiPort = 0
            $0.databasePath = path
        }
        let tokens = ClientHarness.tokens(4, salt: 3)
        _ = harness.mock.addFault(try FaultRule(parsing: "status=400/BadDeviceToken,token=\(tokens[3].hex)"))
        let client = try harness.client()
        var accepted: [String] = []
        for token in tokens.prefix(3) { accepted.append(try await client.send(ClientHarness.request(to: token)).apnsID) }
        let rejected = await client.outcome(of: ClientHarness.request(to: tokens[3]))
        #expect(rejected.failure?.reason == .badDeviceToken)
        await client.shutdown()
        let before = try await Self.listing(try #require(harness.mock.apiPort))
        #expect(before.total == 4)
        await harness.stop()

        // A new server on the same file: the same requests, newest first, and new ids after them.
        let again = try MockAPNsServer(configuration: harness.mock.configuration)
        try await again.start()
        defer { Task { await again.stop() } }
        let apiPort = try #require(again.apiPort)
        let after = try await Self.listing(apiPort)
        #expect(after.total == 4 && after.records == before.records, "\(after.records)")
        for id in accepted { #expect(after.records.contains(id)) }
        #expect(try await Self.listing(apiPort, "?accepted=false").total == 1)
        #expect(try await Self.listing(apiPort, "?reason=BadDeviceToken&limit=1").records.contains("400"))
        #expect(try await Self.listing(apiPort, "?token=\(tokens[1].hex)").total == 1)
        #expect(try await Self.listing(apiPort, "?q=\(accepted[2].uppercased())").total == 1, "search ignores case")
        #expect(try await Self.listing(apiPort, "?q=%25").total == 0, "a LIKE wildcard is matched as text")
        let paged = try await Self.listing(apiPort, "?before=3")
        #expect(paged.total == 2)
        let second = try ClientHarness(mock: again, key: harness.key).client()
        _ = try await second.send(ClientHarness.request(to: tokens[0]))
        await second.shutdown()
        #expect(try await Self.listing(apiPort, "?limit=1").records.hasPrefix("[[5,"), "ids continue after the stored ones")
        let (single, _) = try await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(apiPort)/api/v1/notifications/\(accepted[0])")!)
        #expect(try ExternalTools.pythonJSON(Array(single), ["d['apnsId']"]) == ["\"\(accepted[0])\""])
    }

    @Test func anAnswerMeansTheRowIsCommitted() async throws {
        // A slow disk: each write waits 150 ms. Every answer must still come after its row is in
        // the file, as another reader (Python's sqlite3) sees it the moment the answer arrives.
        let directory = try TemporaryDirectory()
        let path = directory.path("mock.db")
        let harness = try await ClientHarness.start {
            $0.databasePath = path
            $0.databaseWriteDelay = .milliseconds(150)
        }
        defer { Task { await harness.stop() } }
        let client = try harness.client()
        for token in ClientHarness.tokens(3, salt: 6) {
            let id = try await client.send(ClientHarness.request(to: token)).apnsID
            let found = try ExternalTools.python(
                "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); print(c.execute('SELECT count(*) FROM notifications WHERE apns_id = ?', (sys.argv[2],)).fetchone()[0])",
                arguments: [path, id])
            #expect(String(decoding: found, as: UTF8.self) == "1\n", "\(id) answered before it was stored")
        }
        await client.shutdown()
    }

    @Test func retentionKeepsTheNewestAndDropsTheOld() async throws {
        let directory = try TemporaryDirectory()
        let clock = SharedClock()
        let harness = try await ClientHarness.start {
            $0.apiPort = 0
            $0.databasePath = directory.path("mock.db")
            $0.databaseKeepCount = 3
            $0.databaseMaximumAge = .seconds(3600)
            $0.now = { clock.now }
        }
        defer { Task { await harness.stop() } }
        let apiPort = try #require(harness.mock.apiPort)
        let client = try harness.client { $0.now = { clock.now } }
        for token in ClientHarness.tokens(5, salt: 4) { _ = try await client.send(ClientHarness.request(to: token)) }
        var listing = try await Self.listing(apiPort)
        for _ in 0..<50 where listing.total != 3 {
            try await Task.sleep(for: .milliseconds(100))
            listing = try await Self.listing(apiPort)
        }
        #expect(listing.total == 3 && listing.records.hasPrefix("[[5,") && listing.records.contains("[3,"), "\(listing.records)")
        // Two hours later, everything is older than the hour kept.
        clock.advance(by: 2 * 3600)
        for _ in 0..<50 where listing.total != 0 {
            try await Task.sleep(for: .milliseconds(100))
            listing = try await Self.listing(apiPort)
        }
        #expect(listing.total == 0)
        await client.shutdown()
    }

    @Test func aKilledMockLosesNothingItAnswered() async throws {
        let directory = try TemporaryDirectory()
        let key = directory.path("key.p8")
        let signing = ProviderSigningKey.generate(keyID: ClientHarness.keyID, teamID: ClientHarness.teamID)
        try signing.pkcs8PEM.write(toFile: key, atomically: true, encoding: .utf8)
        func start() throws -> (RunningProgram, port: Int, apiPort: Int, ca: String) {
            let mock = try RunningProgram(Fixtures.heraldBinary, [
                "mock", "--port", "0", "--api-port", "0", "--channel-port", "0", "--ca-out", directory.path("ca.pem"),
                "--key", key, "--key-id", "\(ClientHarness.keyID)", "--team-id", "\(ClientHarness.teamID)", "--db", directory.path("mock.db"),
            ])
            let banner = mock.read(until: "/3/device/", timeout: .seconds(30))
            let port = try #require(banner.firstMatch(of: /APNs on https:\/\/127\.0\.0\.1:(\d+)/).flatMap { Int($0.output.1) })
            let apiPort = try #require(banner.firstMatch(of: /inbox      http:\/\/127\.0\.0\.1:(\d+)\//).flatMap { Int($0.output.1) })
            #expect(banner.contains("database   \(directory.path("mock.db"))"))
            return (mock, port, apiPort, try String(contentsOfFile: directory.path("ca.pem"), encoding: .utf8))
        }
        let (mock, port, _, ca) = try start()
        var configuration = APNsClientConfiguration(
            server: .custom(host: "127.0.0.1", port: port, environment: .sandbox), credentials: .token(signing))
        configuration.additionalTrustRootsPEM = [ca]
        configuration.trustsSystemRoots = false
        configuration.retry = .init(maximumAttempts: 1)
        let client = try APNsClient(configuration: configuration)
        let outcomes = await ClientHarness.sendAll(client, to: ClientHarness.tokens(200, salt: 5))
        // Killed the moment the last answer is in: no graceful shutdown, no flush.
        kill(mock.process.processIdentifier, SIGKILL)
        mock.process.waitUntilExit()
        await client.shutdown()
        let answered = outcomes.compactMap { try? $0.1.get().apnsID }
        #expect(answered.count == 200)

        let (restarted, _, apiPort, _) = try start()
        defer { _ = restarted }
        let listing = try await Self.listing(apiPort, "?limit=1000")
        #expect(listing.total == 200)
        for id in answered where !listing.records.contains(id) { Issue.record("\(id) was answered and is not in the database") }
    }
}
