import Foundation
import HeraldAuth
import HeraldJSON
import HeraldLocalization
import HeraldPayload
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import HeraldClient
@testable import HeraldMock
import HeraldProtocol
import HeraldTestSupport
import HeraldHarness
import Testing

/// `herald mock --db FILE`: what was captured survives a restart and a kill, the API's filters
/// run in the database, and retention applies by count and by age.
@Suite(.serialized) struct PersistenceTests {
    /// The API's answer for `query`, read by Python's `json`: total, then each record's
    /// `[id, apnsId, status]`.
    static func listing(_ apiPort: Int, _ query: String = "") async throws -> (total: Int, records: String) {
        let (data, _) = try await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(apiPort)/api/v1/notifications\(query)")!)
        let values = try await ExternalTools.pythonJSON(Array(data), ["d['total']", "[[n['id'], n['apnsId'], n['status']] for n in d['notifications']]"])
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
        // The library reads what the API reads: the restarted server's own memory is empty.
        #expect(try await again.notifications().compactMap(\.apnsID).filter(accepted.contains).count == 3)
        #expect(try await again.notification(id: accepted[1])?.isAccepted == true)
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
        #expect(try await ExternalTools.pythonJSON(Array(single), ["d['apnsId']"]) == ["\"\(accepted[0])\""])
        // Cleared in the database before it returns (it used to delete in a detached task).
        try await again.clearNotifications()
        #expect(try await Self.listing(apiPort).total == 0)
        #expect(try await again.notifications().isEmpty)
    }

    /// A file of the first schema (made here by Python's `sqlite3`, as an earlier Herald left
    /// it) is brought to the current one and used; a file of a newer schema is refused and left
    /// as it was.
    @Test func earlierSchemasAreMigratedAndNewerOnesRefused() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("mock.db")
        _ = try await ExternalTools.python(
            """
            import sqlite3, sys
            c = sqlite3.connect(sys.argv[1])
            c.executescript('''
            CREATE TABLE notifications (id INTEGER PRIMARY KEY, apns_id TEXT, received_at REAL NOT NULL, kind TEXT NOT NULL,
                device_token TEXT, topic TEXT, push_type TEXT, status INTEGER, accepted INTEGER NOT NULL,
                reason TEXT, search TEXT NOT NULL, json TEXT NOT NULL);
            PRAGMA user_version = 1;
            ''')
            c.commit()
            """, arguments: [path])
        let harness = try await ClientHarness.start { $0.databasePath = path }
        let client = try harness.client()
        let id = try await client.send(ClientHarness.request(to: ClientHarness.tokens(1, salt: 9)[0])).apnsID
        await client.shutdown()
        await harness.stop()
        let schema = try await ExternalTools.python(
            """
            import sqlite3, sys
            c = sqlite3.connect(sys.argv[1])
            print(c.execute('PRAGMA user_version').fetchone()[0])
            print(sorted(r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type = 'table'")))
            print([r[1] for r in c.execute('PRAGMA table_info(notifications)')][-2:])
            print(c.execute('SELECT apns_id FROM notifications').fetchall())
            """, arguments: [path])
        #expect(String(decoding: schema, as: UTF8.self) == """
            2
            ['channels', 'devices', 'faults', 'notifications']
            ['channel_id', 'body']
            [('\(id)',)]

            """)

        _ = try await ExternalTools.python(
            "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute('PRAGMA user_version = 7'); c.commit()", arguments: [path])
        let newer = try MockAPNsServer(configuration: harness.mock.configuration)
        do {
            try await newer.start()
            await newer.stop()
            Issue.record("a database of a newer schema was opened")
        } catch let error as MockDatabaseError {
            #expect(error.problem == "it was written by a newer Herald (schema 7; this one knows 2)")
        }
        let version = try await ExternalTools.python(
            "import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute('PRAGMA user_version').fetchone()[0])", arguments: [path])
        #expect(String(decoding: version, as: UTF8.self) == "7\n")
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
            let found = try await ExternalTools.python(
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
        func start() async throws -> (RunningProgram, port: Int, apiPort: Int, ca: String) {
            let mock = try HeraldProcess.start([
                "mock", "--port", "0", "--api-port", "0", "--channel-port", "0", "--ca-out", directory.path("ca.pem"),
                "--key", key, "--key-id", "\(ClientHarness.keyID)", "--team-id", "\(ClientHarness.teamID)", "--db", directory.path("mock.db"),
            ])
            let banner = await mock.read(until: "/3/device/", timeout: .seconds(30))
            let port = try #require(banner.firstMatch(of: /APNs on https:\/\/127\.0\.0\.1:(\d+)/).flatMap { Int($0.output.1) })
            let apiPort = try #require(banner.firstMatch(of: /inbox      http:\/\/127\.0\.0\.1:(\d+)\//).flatMap { Int($0.output.1) })
            #expect(banner.contains("database   \(directory.path("mock.db"))"))
            return (mock, port, apiPort, try String(contentsOfFile: directory.path("ca.pem"), encoding: .utf8))
        }
        let (mock, port, _, ca) = try await start()
        var configuration = APNsClientConfiguration(
            server: .custom(host: "127.0.0.1", port: port, environment: .sandbox), credentials: .token(signing))
        configuration.additionalTrustRootsPEM = [ca]
        configuration.trustsSystemRoots = false
        configuration.retry = .init(maximumAttempts: 1)
        let client = try APNsClient(configuration: configuration)
        let outcomes = await ClientHarness.sendAll(client, to: ClientHarness.tokens(200, salt: 5))
        // Killed the moment the last answer is in: no graceful shutdown, no flush.
        mock.process.signal(SIGKILL)
        _ = await mock.waitForExit()
        await client.shutdown()
        let answered = outcomes.compactMap { try? $0.1.get().apnsID }
        #expect(answered.count == 200)

        let (restarted, _, apiPort, _) = try await start()
        defer { _ = restarted }
        let listing = try await Self.listing(apiPort, "?limit=1000")
        #expect(listing.total == 200)
        for id in answered where !listing.records.contains(id) { Issue.record("\(id) was answered and is not in the database") }
    }

    /// The API's JSON at `path`, as a document.
    static func api(_ port: Int, _ path: String, method: String = "GET", body: String? = nil) async throws -> (status: Int, document: JSONDocument?) {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
        request.httpMethod = method
        if let body {
            request.httpBody = Data(body.utf8)
            request.setValue("application/json", forHTTPHeaderField: "content-type")
        }
        let (data, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, try? JSONDocument(parsing: Array(data)))
    }

    @Test func devicesFaultsAndChannelsSurviveARestart() async throws {
        let directory = try TemporaryDirectory()
        let harness = try await ClientHarness.start {
            $0.apiPort = 0
            $0.databasePath = directory.path("mock.db")
        }
        let tokens = ClientHarness.tokens(3, salt: 9)
        let client = try harness.client()
        for (index, body) in [#"{"aps":{"alert":"one","thread-id":"a","badge":1}}"#, #"{"aps":{"alert":"two","thread-id":"a","badge":2}}"#,
                               #"{"aps":{"alert":"score 1-0"}}"#, #"{"aps":{"alert":"score 2-0"}}"#, #"{"aps":{"content-available":1}}"#].enumerated() {
            var headers = APNsRequestHeaders(target: .device(tokens[0]), pushType: index == 4 ? .background : .alert, topic: ClientHarness.topic)
            if index >= 2 && index < 4 { headers.collapseID = try CollapseID("score") }
            if index == 4 { headers.priority = .conservePower }
            _ = try await client.send(APNsRequest(headers: headers, body: Array(body.utf8)))
        }
        harness.mock.unregister(tokens[1], at: Date(timeIntervalSince1970: 1_790_000_000))
        let fault = harness.mock.addFault(try FaultRule(parsing: "status=503/ServiceUnavailable,token=\(tokens[2].hex),times=3"))
        let noRetry = try harness.client { $0.retry = .never }
        #expect(await noRetry.outcome(of: ClientHarness.request(to: tokens[2])).failure?.status == 503, "the rule applies once")
        await noRetry.shutdown()
        let channel = try await client.createChannel(bundleID: ClientHarness.topic, storesMessages: true)
        harness.mock.subscribe(tokens[0], toChannel: channel)
        let live = Payload.liveActivity(event: .update, timestamp: 1_790_000_000, contentState: ["score": "3-1"])
        _ = try await client.broadcast(live, bundleID: ClientHarness.topic, channelID: channel, expiration: .immediately)
        await client.shutdown()
        let before = try #require(harness.mock.device(tokens[0]))
        await harness.stop()

        let again = try MockAPNsServer(configuration: harness.mock.configuration)
        try await again.start()
        defer { Task { await again.stop() } }
        let restarted = ClientHarness(mock: again, key: harness.key)
        let after = try #require(again.device(tokens[0]), "the device is back")
        #expect(after.topic == ClientHarness.topic && after.channels == [channel])
        #expect(after.device.badge == 2 && before.device.badge == 2)
        #expect(after.device.groups.map { $0.notifications.map(\.content.body) } == before.device.groups.map { $0.notifications.map(\.content.body) },
                "the same Notification Center: threads, and the collapsed score shown once")
        #expect(after.device.groups.flatMap(\.notifications).contains { $0.content.body == "score 2-0" && $0.replacements == 1 })
        #expect(after.device.backgroundWakes.count == 1 && after.device.activities.count == 1 && after.deliveries == before.deliveries)
        #expect(again.device(tokens[1])?.unregisteredAt == Date(timeIntervalSince1970: 1_790_000_000))
        #expect(again.faults.map(\.id) == [fault], "the fault rule, with its id")
        #expect(again.channels.map(\.id) == [channel])

        let second = try restarted.client { $0.retry = .never }
        #expect(await second.outcome(of: ClientHarness.request(to: tokens[1])).failure?.reason == .unregistered)
        // The rule applied once before the restart: twice more, then the token is answered.
        #expect(await second.outcome(of: ClientHarness.request(to: tokens[2])).failure?.status == 503)
        #expect(await second.outcome(of: ClientHarness.request(to: tokens[2])).failure?.status == 503)
        #expect(try await second.send(ClientHarness.request(to: tokens[2])).status == 200)
        #expect(try await second.channel(channel, bundleID: ClientHarness.topic).storesMessages)
        await second.shutdown()
        #expect(again.faults.isEmpty, "used up")
    }

    /// A bundle with English and French strings for the seed's loc-key example.
    static func bundle(in directory: TemporaryDirectory) throws -> LocalizationBundle {
        try directory.write("App/en.lproj/Localizable.strings", #""GAME_PLAY_REQUEST_FORMAT" = "%@ and %@ have invited you to play Monopoly";"#)
        try directory.write("App/fr.lproj/Localizable.strings", #""GAME_PLAY_REQUEST_FORMAT" = "%@ et %@ vous invitent à jouer au Monopoly";"#)
        return try LocalizationBundle.load(path: directory.path("App"))
    }

    @Test func devicesAndRecordsRenderInTheLanguageAsked() async throws {
        let directory = try TemporaryDirectory()
        let bundle = try Self.bundle(in: directory)
        for database in [false, true] {
            let harness = try await ClientHarness.start {
                $0.apiPort = 0
                $0.localization = bundle
                $0.languages = ["en"]
                if database { $0.databasePath = directory.path("mock.db") }
            }
            let apiPort = try #require(harness.mock.apiPort)
            let token = ClientHarness.tokens(1, salt: 12)[0]
            let client = try harness.client()
            let body = try Fixtures.bytes("seeds/legacy-example-4.json")
            let id = try await client.send(APNsRequest(headers: APNsRequestHeaders(target: .device(token), pushType: .alert, topic: ClientHarness.topic), body: body)).apnsID
            await client.shutdown()

            let english = "Jenna and Frank have invited you to play Monopoly"
            let french = "Jenna et Frank vous invitent à jouer au Monopoly"
            let status = try #require(try await Self.api(apiPort, "/api/v1/status").document)
            #expect(status.root["languages"]?.elements.compactMap(\.stringValue) == ["en", "fr"])
            #expect(try await Self.api(apiPort, "/api/v1/notifications/\(id)").document?.root["rendered"]?["body"]?.stringValue == english)
            #expect(try await Self.api(apiPort, "/api/v1/notifications/\(id)?lang=fr").document?.root["rendered"]?["body"]?.stringValue == french)
            let list = try await Self.api(apiPort, "/api/v1/notifications?lang=fr-CA&token=\(token.hex)").document
            #expect(list?.root["notifications"]?[0]?["rendered"]?["body"]?.stringValue == french, "fr-CA falls back to fr")
            let device = try await Self.api(apiPort, "/api/v1/devices/\(token.hex)?lang=fr").document
            #expect(device?.root["language"]?.stringValue == "fr")
            #expect(device?.root["groups"]?[0]?["notifications"]?[0]?["content"]?["body"]?.stringValue == french)
            let devices = try await Self.api(apiPort, "/api/v1/devices?lang=en&limit=5").document
            #expect(devices?.root["devices"]?[0]?["groups"]?[0]?["notifications"]?[0]?["content"]?["body"]?.stringValue == english)
            await harness.stop()
        }
    }

    @Test func resendAndReleaseToAnotherMock() async throws {
        let other = try await ClientHarness.start()
        defer { Task { await other.stop() } }
        var release = other.configuration()
        release.lintsBeforeSending = true
        let harness = try await ClientHarness.start {
            $0.apiPort = 0
            $0.releaseTarget = ReleaseTarget(name: "the other mock", client: release)
        }
        defer { Task { await harness.stop() } }
        let apiPort = try #require(harness.mock.apiPort)
        let tokens = ClientHarness.tokens(2, salt: 14)
        let client = try harness.client()
        let sent = try await client.send(ClientHarness.request(to: tokens[0]))
        _ = try await client.createChannel(bundleID: ClientHarness.topic)
        await client.shutdown()

        // Resend: judged and delivered again by this mock, with a new apns-id.
        let (resentStatus, resent) = try await Self.api(apiPort, "/api/v1/notifications/\(sent.apnsID)/resend", method: "POST")
        #expect(resentStatus == 201)
        let resentID = try #require(resent?.root["apnsId"]?.stringValue)
        #expect(resentID != sent.apnsID && resent?.root["status"]?.int64Value == 200)
        #expect(resent?.root["payload"]?["aps"]?["alert"]?["title"]?.stringValue == "Hello")
        #expect(harness.mock.device(tokens[0])?.deliveries == 2)

        // Release: sent to the other mock through the client, to another token.
        let arrival = Task { try await other.mock.nextNotification(timeout: .seconds(20)) }
        let (releaseStatus, released) = try await Self.api(apiPort, "/api/v1/notifications/\(sent.apnsID)/release", method: "POST", body: #"{"token":"\#(tokens[1].hex)"}"#)
        let record = try await arrival.value
        #expect(releaseStatus == 200 && released?.root["accepted"]?.boolValue == true, "\(String(describing: released?.root.value))")
        #expect(released?.root["target"]?.stringValue == "the other mock")
        #expect(record.deviceToken == tokens[1].hex && record.isAccepted && record.body == ClientHarness.request(to: tokens[0]).body)
        #expect(released?.root["apnsId"]?.stringValue == record.apnsID)

        // What cannot be resent or released says why.
        let channelRecord = try #require(try await harness.mock.notifications().first { $0.kind == .channel })
        #expect(try await Self.api(apiPort, "/api/v1/notifications/\(channelRecord.id)/resend", method: "POST").status == 400)
        #expect(try await Self.api(apiPort, "/api/v1/notifications/no-such-id/release", method: "POST").status == 404)
        let plain = try await ClientHarness.start { $0.apiPort = 0 }
        defer { Task { await plain.stop() } }
        let plainClient = try plain.client()
        let plainID = try await plainClient.send(ClientHarness.request(to: tokens[0])).apnsID
        await plainClient.shutdown()
        let off = try await Self.api(try #require(plain.mock.apiPort), "/api/v1/notifications/\(plainID)/release", method: "POST")
        #expect(off.status == 409 && off.document?.root["error"]?["message"]?.stringValue?.contains("--release-to") == true)
    }
}
