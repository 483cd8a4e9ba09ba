import ArgumentParser
import Foundation
import HeraldAuth
import HeraldClient
import HeraldGateway
import HeraldJSON
import HeraldLocalization
import HeraldMock
import HeraldPayload
import HeraldProtocol
import Logging
import NIOPosix
import ServiceLifecycle

/// `herald demo`: the mock and the client in one process, for a first look at the inbox.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Start a mock APNs server, send it the example payloads through Herald's client, and keep it running for the web inbox.",
        discussion: """
            The quickest look at Herald: no key, certificate or device needed. It starts the mock \
            (TLS with a CA made at start-up, a provider key made for the demo, a demo app's \
            strings in English and French), sends the example \
            payloads of Apple's documents through Herald's real HTTP/2 client to a demo device, \
            prints each answer and the inbox address, and serves until Ctrl-C. Open the address in \
            a browser to see the pushes as the device shows them.

            It also writes the demo key, the CA and a payload.json to --dir and prints a herald \
            send command that sends your own payload to the same mock (absolute paths: it works \
            from any folder).

            With --gateway it runs the whole path: a push gateway (herald serve) on SQLite in \
            --dir whose app points at the mock, the same examples submitted through its REST API \
            as a backend would, each outcome, and the curl for its API with the demo's admin key.

            Exit status: 0 stopped normally, 1 an example was not accepted, 2 bad arguments or a \
            port in use.

            Examples:
              herald demo                         # then open http://127.0.0.1:8197/
              herald demo --port 0 --api-port 0   # any free ports (printed)
              herald demo --once                  # send, print, and stop (for scripts)
              herald demo --gateway               # and a gateway on http://127.0.0.1:8080/
            """
    )

    @Option(help: ArgumentHelp("The address to listen on.", valueName: "HOST"))
    var host: String = "127.0.0.1"

    @Option(help: ArgumentHelp("The provider API port (0 picks one).", valueName: "PORT"))
    var port: Int = 2197

    @Option(name: .customLong("api-port"), help: ArgumentHelp("The web inbox and API port (0 picks one).", valueName: "PORT"))
    var apiPort: Int = 8197

    @Option(help: ArgumentHelp("Where the demo key and CA are written (default: a folder in the temporary directory).", valueName: "DIR"))
    var dir: String?

    @Flag(help: "Stop after sending instead of serving until Ctrl-C.")
    var once = false

    @Flag(help: "Also run a push gateway (herald serve) on SQLite whose app points at the mock, and send the examples through its REST API too.")
    var gateway = false

    @Option(name: .customLong("gateway-port"), help: ArgumentHelp("The gateway's API port with --gateway (0 picks one).", valueName: "PORT"))
    var gatewayPort: Int = 8080

    static let keyID = try! KeyID("HERALDDEMO")
    static let teamID = try! TeamID("HERALDTEAM")
    static let topic = "com.example.herald-demo"
    /// The demo device (any 32 bytes: the mock registers a device on its first push).
    static let token = try! DeviceToken(hex: "740f4707bebcf74f9b7c25d48e3358945f6aa01da5ddb387462c7eaf61bb78ad")

    func validate() throws {
        for (name, value) in [("--port", port), ("--api-port", apiPort), ("--gateway-port", gatewayPort)] where !(0...65_535).contains(value) {
            throw ValidationError("\(name) \(value) is not a port (0 to 65535; 0 picks a free one)")
        }
    }

    func run() async throws {
        if gateway, gatewayPort != 0 {
            // The gateway starts after the mock's demo: a port it cannot have is said now, not
            // after the whole demo has run.
            do {
                let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(host: host, port: gatewayPort).get()
                try await channel.close()
            } catch {
                let described = GatewayServer.describeBindError(error)
                throw UsageError(message: "cannot start the gateway: cannot listen on \(host):\(gatewayPort): \(described)\(ServeCommand.hint(for: described, port: gatewayPort, flag: "--gateway-port"))")
            }
        }
        let key = ProviderSigningKey.generate(keyID: Self.keyID, teamID: Self.teamID)
        var configuration = MockConfiguration()
        configuration.host = host
        configuration.port = port
        configuration.apiPort = apiPort
        configuration.channelPort = 0
        configuration.transport = .generatedTLS
        configuration.keys = [key.publicKey]
        configuration.localization = Self.strings
        let (server, logger) = try await MockCommand.start(configuration, label: "herald.demo")
        // Absolute paths: the commands printed below work as pasted from any folder.
        let folder = Invocation.absolute(dir ?? (NSTemporaryDirectory() as NSString).appendingPathComponent("herald-demo-\(server.port)"))
        let keyFile = (folder as NSString).appendingPathComponent("AuthKey_\(Self.keyID).p8")
        let caFile = (folder as NSString).appendingPathComponent("herald-mock-ca.pem")
        let payloadFile = (folder as NSString).appendingPathComponent("payload.json")
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try key.pkcs8PEM.write(toFile: keyFile, atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: keyFile)
            try (server.trustRootPEM ?? "").write(toFile: caFile, atomically: true, encoding: .utf8)
            // A payload of one's own to start from (kept if it is already there: it may be edited).
            if !FileManager.default.fileExists(atPath: payloadFile) {
                try #"{"aps":{"alert":{"title":"Hello","body":"My first push through Herald"},"sound":"default"}}"#.appending("\n")
                    .write(toFile: payloadFile, atomically: true, encoding: .utf8)
            }
        } catch {
            await server.stop()
            throw UsageError(message: "cannot write the demo key and CA to '\(folder)': \(error.localizedDescription)")
        }

        server.pasteHints = MockPasteHints(herald: Invocation.herald, trustFile: caFile, keyFiles: [Self.keyID.rawValue: keyFile])
        let inbox = "http://\(host):\(server.apiPort ?? apiPort)/"
        print("herald demo: a mock APNs server on \(server.providerURL); the inbox is \(inbox)")
        print("Sending Apple's example payloads to the demo device \(Self.token.hex.prefix(8))… through Herald's client:")
        fflush(nil)
        var clientConfiguration = APNsClientConfiguration(
            server: .custom(host: host, port: server.port, environment: configuration.environment), credentials: .token(key))
        clientConfiguration.additionalTrustRootsPEM = server.trustRootPEM.map { [$0] } ?? []
        clientConfiguration.trustsSystemRoots = false
        clientConfiguration.requestTimeout = .seconds(10)
        let client: APNsClient
        do {
            client = try APNsClient(configuration: clientConfiguration)
        } catch {
            await server.stop()
            throw UsageError(message: error.message)
        }
        var failed = 0
        for example in Self.examples {
            let line: String
            do {
                let request = try APNsRequest(payload: Payload(decoding: example.json), to: Self.token, topic: Self.topic)
                let response = try await client.send(request)
                line = "  accepted  \(example.name)  (apns-id \(response.apnsID))"
            } catch let error as APNsClientError {
                failed += 1
                line = "  NOT SENT  \(example.name): \(error.message)"
            } catch {
                failed += 1
                line = "  NOT SENT  \(example.name): \(error)"
            }
            print(line)
            fflush(nil)
        }
        await client.shutdown()
        var services: [any Service] = [server]
        if gateway {
            do {
                let started = try await runGateway(
                    folder: folder, mock: server, trustPEM: server.trustRootPEM ?? "", key: key, inbox: inbox)
                failed += started.failed
                services.append(StopOnShutdown(server: started.server))
            } catch {
                await server.stop()
                throw error
            }
        }
        print("""

            Open \(inbox) to see them on the device. Send your own payload (edit \(payloadFile)) to the same mock:
              \(Invocation.herald) send \(shellQuoted(payloadFile)) --token \(Self.token.hex) --topic \(Self.topic) \\
                  --host \(host) --port \(server.port) --ca-file \(shellQuoted(caFile)) \\
                  --p8 \(shellQuoted(keyFile)) --key-id \(Self.keyID) --team-id \(Self.teamID)
            """)
        fflush(nil)
        if once {
            for case let stopping as StopOnShutdown in services { await stopping.server.stop() }
            await server.stop()
        } else {
            try await serve(services, banner: "Serving until Ctrl-C.\n", logger: logger)
            print("herald demo: stopped")
        }
        if failed > 0 { throw ExitStatus.failure }
    }

    /// Starts a gateway on SQLite (a new database in `folder`) with one app whose server is the
    /// mock, submits the examples through its REST API as a backend would, prints each outcome
    /// and the `curl` for its API, and returns it running.
    private func runGateway(
        folder: String, mock: MockAPNsServer, trustPEM: String, key: ProviderSigningKey, inbox: String
    ) async throws -> (server: GatewayServer, failed: Int) {
        let mockPort = mock.port
        let database = (folder as NSString).appendingPathComponent("gateway.db")
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: database + suffix) }
        var configuration = GatewayConfiguration(database: .sqlite(path: database))
        configuration.host = host
        configuration.port = gatewayPort
        var random = SystemRandomNumberGenerator()
        let adminKey = "hgk_demo_" + (0..<4).map { _ in String(random.next() as UInt64, radix: 16) }.joined()
        configuration.adminKey = adminKey
        var logger = Logger(label: "herald.demo.gateway")
        logger.logLevel = .warning
        configuration.logger = logger
        let gateway: GatewayServer
        do {
            gateway = try await GatewayServer.open(configuration: configuration)
            try await gateway.start()
        } catch {
            throw UsageError(message: "cannot start the gateway: \(error)\(ServeCommand.hint(for: error, port: gatewayPort, flag: "--gateway-port"))")
        }
        let port = gateway.port ?? gatewayPort
        let base = "http://\(host):\(port)"
        func call(_ method: String, _ path: String, _ body: JSONValue? = nil) throws -> (Int, JSONDocument?) {
            let bytes = body.map { value -> [UInt8] in
                var writer = JSONWriter(output: JSONBytes())
                writer.value(value)
                return writer.output.bytes
            }
            let answer = try LoopbackHTTP.request(method, host: host, port: port, path: path, key: adminKey, body: bytes)
            return (answer.status, try? JSONDocument(parsing: answer.body))
        }
        print("")
        print("herald demo: a push gateway on \(base)/ (SQLite \(database)); its app \(Self.topic) sends to the mock.")
        print("Submitting the same payloads through the gateway's REST API (POST /v1/apps/\(Self.topic)/notifications):")
        fflush(nil)
        let app: JSONValue = [
            "bundleId": .string(Self.topic), "environment": "sandbox",
            "token": ["key": .string(key.pkcs8PEM), "keyId": .string(Self.keyID.rawValue), "teamId": .string(Self.teamID.rawValue)],
            "server": ["host": .string(host), "port": .number(JSONNumber(mockPort)), "caCertificate": .string(trustPEM)],
        ]
        let (created, createdBody) = try call("POST", "/v1/apps", app)
        guard created == 201 || created == 200 else {
            await gateway.stop()
            throw UsageError(message: "the gateway refused the demo app (\(created)): \(createdBody?.root["error"]?["message"]?.stringValue ?? "")")
        }
        var failed = 0
        var lastID = ""
        for example in Self.examples {
            guard let payload = try? JSONDocument(parsing: Array(example.json.utf8)) else { continue }
            let (status, answer) = try call(
                "POST", "/v1/apps/\(Self.topic)/notifications", ["payload": payload.root.value, "tokens": [.string(Self.token.hex)]])
            guard status == 202, let id = answer?.root["id"]?.stringValue else {
                failed += 1
                print("  NOT SENT  \(example.name): \(status) \(answer?.root["error"]?["message"]?.stringValue ?? "")")
                continue
            }
            lastID = id
            // The outcome, once the gateway has it (it sends at once; a few seconds at most here).
            let deadline = ContinuousClock.now + .seconds(30)
            var line = "  pending   \(example.name)  (notification \(id))"
            while ContinuousClock.now < deadline {
                let (_, deliveries) = try call("GET", "/v1/apps/\(Self.topic)/notifications/\(id)/deliveries")
                if let delivery = deliveries?.root["deliveries"]?.elements.first(where: { _ in true }),
                   let state = delivery["state"]?.stringValue, state != "queued", state != "claimed" {
                    if state == "accepted" {
                        line = "  accepted  \(example.name)  (notification \(id), apns-id \(delivery["apnsId"]?.stringValue ?? "?"))"
                    } else {
                        failed += 1
                        line = "  \(state)  \(example.name): \(delivery["status"]?.int64Value.map(String.init) ?? "") \(delivery["reason"]?.stringValue ?? "")"
                    }
                    break
                }
                try await Task.sleep(for: .milliseconds(100))
            }
            if line.hasPrefix("  pending") { failed += 1 }
            print(line)
            fflush(nil)
        }
        failed += try await liveActivity(call: call, mock: mock, base: base, adminKey: adminKey)
        print("""

            They are in the inbox too (\(inbox)). The gateway's console: \(base)/console/
            (sign in with the demo's admin key, \(adminKey)). Its API, with the same key:
              curl -H 'Authorization: Bearer \(adminKey)' -d '{"payload": {"aps": {"alert": "Hello through the gateway"}}, "tokens": ["\(Self.token.hex)"]}' \\
                  \(base)/v1/apps/\(Self.topic)/notifications
              curl -H 'Authorization: Bearer \(adminKey)' \(base)/v1/apps/\(Self.topic)/notifications/\(lastID)/deliveries
            """)
        fflush(nil)
        return (gateway, failed)
    }

    /// The push-to-start token of the demo's Live Activity.
    static let startToken = try! DeviceToken(hex: "5a" + String(repeating: "0", count: 60) + "a5")

    /// A Live Activity through the gateway, with the mock as the device: started by push on the
    /// user's push-to-start token, the update token reported by the mock, three updates, the end;
    /// prints each step and returns how many failed.
    private func liveActivity(
        call: (String, String, JSONValue?) throws -> (Int, JSONDocument?), mock: MockAPNsServer, base: String, adminKey: String
    ) async throws -> Int {
        mock.reportActivityTokens(to: ActivityTokenReport(
            url: "\(base)/v1/apps/\(Self.topic)/activity-tokens", headers: [("Authorization", "Bearer \(adminKey)")]))
        print("")
        print("A Live Activity through the gateway (the mock plays the device and reports its update token):")
        let path = "/v1/apps/\(Self.topic)/activities/order-1842"
        _ = try call("POST", "/v1/apps/\(Self.topic)/start-tokens", [
            "token": .string(Self.startToken.hex), "attributesType": "DeliveryAttributes", "user": "demo-user",
        ])
        /// Waits (10 s at most) until the activity shows `done`; its view then.
        func settled(_ done: (JSONDocument.Node) -> Bool) async throws -> JSONDocument.Node? {
            let deadline = ContinuousClock.now + .seconds(10)
            while ContinuousClock.now < deadline {
                if let view = try call("GET", path, nil).1?.root, done(view) { return view }
                try await Task.sleep(for: .milliseconds(100))
            }
            return nil
        }
        let (started, startAnswer) = try call("POST", "/v1/apps/\(Self.topic)/activities", [
            "id": "order-1842", "attributesType": "DeliveryAttributes", "attributes": ["orderId": "order-1842"],
            "contentState": ["status": "Preparing", "eta": 20], "alert": ["title": "Order 1842", "body": "We are preparing your order"],
            "to": ["user": "demo-user"],
        ])
        guard started == 202, let view = try await settled({ $0["updateToken"]?.stringValue != nil }) else {
            print("  NOT STARTED  order-1842: \(started) \(startAnswer?.root["error"]?["message"]?.stringValue ?? "no update token reported")")
            return 1
        }
        print("  started   order-1842 on the push-to-start token; the device reported update token \(view["updateToken"]?.stringValue ?? "?")")
        var failed = 0
        let steps: [(String, Int)] = [("Baking", 12), ("On its way", 6), ("At the door", 1)]
        for (status, eta) in steps {
            let (code, _) = try call("PATCH", path, ["contentState": ["status": .string(status), "eta": .number(JSONNumber(eta))]])
            if code == 202, try await settled({ $0["pending"]?.kind == .null && $0["lastContent"]?["eta"]?.int64Value == Int64(eta) }) != nil {
                print("  updated   order-1842: \(status), \(eta) min")
            } else {
                failed += 1
                print("  NOT SENT  update \(status): \(code)")
            }
        }
        let dismissal = Int64(Date().timeIntervalSince1970) + 3_600
        let (ended, _) = try call("POST", "\(path)/end", ["contentState": ["status": "Delivered", "eta": 0], "dismissalDate": .number(JSONNumber(dismissal))])
        if ended == 202, try await settled({ $0["pending"]?.kind == .null && $0["state"]?.stringValue == "ended" }) != nil {
            print("  ended     order-1842: Delivered (on the Lock Screen for an hour)")
        } else {
            failed += 1
            print("  NOT ENDED order-1842: \(ended)")
        }
        print("  its state: GET \(base)\(path) (with the admin key); the inbox shows its card")
        fflush(nil)
        return failed
    }

    /// The demo app's strings: the Localizable.strings of the same guide (its positional
    /// example), and a French translation, so the localized examples render and the inbox can
    /// show the device in either language.
    static let strings = LocalizationBundle(
        tables: [
            "en": ["Localizable": StringsTable(strings: [
                "GAME_PLAY_REQUEST_FORMAT": "%@ and %@ have invited you to play Monopoly", "PLAY": "Play",
            ])],
            "fr": ["Localizable": StringsTable(strings: [
                "GAME_PLAY_REQUEST_FORMAT": "%@ et %@ vous invitent à jouer au Monopoly", "PLAY": "Jouer",
            ])],
        ],
        developmentRegion: "en")

    /// The example payloads of Apple's documents ("Generating a remote notification" listings 1
    /// to 3, and the examples of "Examples of JSON Payloads" in the older Local and Remote
    /// Notification Programming Guide), compacted.
    static let examples: [(name: String, json: String)] = [
        ("an alert with title and subtitle", #"{"aps":{"alert":{"title":"Game Request","subtitle":"Five Card Draw","body":"Bob wants to play poker"},"category":"GAME_INVITATION"},"gameID":"12345678"}"#),
        ("a badge and a sound", #"{"aps":{"badge":9,"sound":"bingbong.aiff"},"messageID":"ABCDEFGHIJ"}"#),
        ("a localized alert (loc-key and loc-args)", #"{"aps":{"alert":{"loc-key":"GAME_PLAY_REQUEST_FORMAT","loc-args":["Shelly","Rick"]}}}"#),
        ("a plain string alert", #"{"aps":{"alert":"Message received from Bob"},"acme2":["bang","whiz"]}"#),
        ("an alert with a custom action button", #"{"aps":{"alert":{"title":"Game Request","body":"Bob wants to play poker","action-loc-key":"PLAY"},"badge":5},"acme1":"bar","acme2":["bang","whiz"]}"#),
        ("an alert, badge and sound", #"{"aps":{"alert":"You got your emails.","badge":9,"sound":"bingbong.aiff"},"acme1":"bar","acme2":42}"#),
        ("a localized alert with a sound", #"{"aps":{"alert":{"loc-key":"GAME_PLAY_REQUEST_FORMAT","loc-args":["Jenna","Frank"]},"sound":"chime.aiff"},"acme":"foo"}"#),
    ]
}
