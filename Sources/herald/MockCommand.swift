import ArgumentParser
import Foundation
import HeraldAuth
import HeraldClient
import HeraldJSON
import HeraldLocalization
import HeraldMock
import HeraldProtocol
import Logging
import NIOSSL
import ServiceLifecycle

/// `herald mock`: a local APNs server.
struct MockCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mock",
        abstract: "Run a local APNs server that validates like Apple, injects faults and records every push.",
        discussion: """
            Providers send to it exactly as to APNs: HTTP/2, POST /3/device/<token> with the apns-* \
            headers and a provider token (or a client certificate with --auth certificate). It \
            answers with Apple's statuses and reasons, delivers accepted pushes to simulated \
            devices, and records every request. On --api-port: the web inbox at / (the requests \
            as they arrive, each device as a lock screen, every request's headers, payload, lint \
            findings and answer, and faults to add or remove), and the API behind it (GET \
            /api/v1/notifications, devices, faults, a live event stream at /api/v1/events, an \
            OpenAPI document at /api/v1/openapi.json, Prometheus metrics at /metrics).

            TLS: by default a CA and a server certificate for localhost, 127.0.0.1 and ::1 are made \
            at start-up; the CA is written to --ca-out (default: a file in the temporary folder) for \
            clients to trust. --tls-cert and --tls-key use your own; --plaintext serves HTTP/2 with \
            prior knowledge (curl --http2-prior-knowledge).

            Keys: --key FILE --key-id ID --team-id ID (repeatable, in that order) registers a \
            provider key (.p8 or a public-key PEM) whose signatures are verified. With none, \
            provider tokens are checked for form, algorithm and age only.

            Where Apple's behaviour is undocumented the default follows what real APNs is reported \
            to do, and --strict rejects:
            \(MockConfiguration.Leniency.points.map { point in
                point.lenient.hasPrefix(point.strict)
                    ? "  \(point.name)\n      \(point.strict) in both modes (reported)"
                    : "  \(point.name)\n      default: \(point.lenient)\n      --strict: \(point.strict)"
            }.joined(separator: "\n"))

            Fault rules (--fault RULE, repeatable; also the config file and POST /api/v1/faults) \
            are comma-separated items: one action, status=CODE[/REASON], delay=DURATION, \
            goaway=REASON[/before], reset[=CODE], close, max-streams=N or hang; matchers \
            token=HEX, topic=TOPIC, push-type=TYPE, path=device|broadcast|channels, every=N, \
            probability=P; and times=N to stop after N matches.
              --fault 'status=429/TooManyRequests,token=740f…,times=2'
              --fault 'status=503/ServiceUnavailable,every=10'
              --fault 'goaway=Shutdown,times=1'
              --fault 'delay=2s,probability=0.1'

            App strings: --bundle DIR (an app bundle or Xcode project: *.lproj folders, .xcstrings \
            catalogs, Info.plist) or --strings FILE (one table) makes devices show loc-key alerts \
            as the app would, in --lang (default en); the inbox shows each device in any of the \
            bundle's languages.

            Release: --release-to sandbox|production|HOST:PORT with the target's credentials \
            (--release-p8 FILE --release-key-id ID --release-team-id ID, or --release-cert \
            FILE.p12 with its password in $HERALD_RELEASE_CERT_PASSWORD; --release-ca-file PEM for \
            another mock's CA, --release-plaintext for one without TLS) lets the inbox send a \
            captured notification on to real APNs or another mock, as Mailpit releases mail.

            --config FILE reads a JSON object with any of: host, port, apiPort, channelPort, \
            environment, plaintext, tlsCert, tlsKey, caOut, strict, storeLimit, db, dbKeep, dbMaxAge, idleTimeout, unregistered \
            (array of tokens), faults (array of rules), keys (array of {file, keyId, teamId}), \
            bundle, strings, lang (array), releaseTo, releaseP8, releaseKeyId, releaseTeamId, \
            releaseCert, releaseCaFile, releasePlaintext. Flags given on the command line win.

            It listens on three ports: --port (APNs, default 2197), --api-port (the inbox and API, \
            default 8197) and --channel-port (broadcast channel management, default 2195 in \
            sandbox and 2196 in production); a second mock on the same machine needs all three \
            changed (or 0, which picks a free port; the ports are printed). SIGINT or SIGTERM \
            stops it gracefully.

            Examples:
              herald mock
              herald mock --plaintext --port 0 --api-port 0
              herald mock --strict --key AuthKey_ABC123DEFG.p8 \\
                  --key-id ABC123DEFG --team-id DEF123GHIJ
              herald mock --unregistered \\
                  740f4707bebcf74f9b7c25d48e3358945f6aa01da5ddb387462c7eaf61bb78ad
              herald mock --db pushes.db --db-keep 50000 --db-max-age 168   # a week, across restarts
              herald mock --bundle MyApp/ --lang fr,en
              herald mock --release-to sandbox --release-p8 AuthKey_ABC123DEFG.p8 \\
                  --release-key-id ABC123DEFG --release-team-id DEF123GHIJ
            """
    )

    @Option(help: ArgumentHelp("The address to bind (default 127.0.0.1; 0.0.0.0 for every interface).", valueName: "HOST"))
    var host: String?

    @Option(help: ArgumentHelp("The APNs port (default 2197; 0 picks one).", valueName: "PORT"))
    var port: Int?

    @Option(name: .customLong("api-port"), help: ArgumentHelp("The web inbox (at /), API, event stream and metrics port (default 8197; 0 picks one).", valueName: "PORT"))
    var apiPort: Int?

    @Option(name: .customLong("channel-port"), help: ArgumentHelp("The broadcast channel-management port (default 2195 in sandbox, 2196 in production; 0 picks one).", valueName: "PORT"))
    var channelPort: Int?

    @Flag(help: "Serve HTTP/2 without TLS (prior knowledge), for local tests.")
    var plaintext = false

    @Option(name: .customLong("tls-cert"), help: ArgumentHelp("The server certificate chain (PEM), instead of a generated one.", valueName: "PEM"))
    var tlsCert: String?

    @Option(name: .customLong("tls-key"), help: ArgumentHelp("The server certificate's private key (PEM).", valueName: "PEM"))
    var tlsKey: String?

    @Option(name: .customLong("ca-out"), help: ArgumentHelp("Where to write the generated CA certificate for clients to trust.", valueName: "FILE"))
    var caOut: String?

    @Option(help: ArgumentHelp("The environment played: sandbox (answers carry apns-unique-id) or production.", valueName: "ENV"))
    var environment: String?

    @Option(help: ArgumentHelp("Provider authentication: token (default) or certificate (mutual TLS; topics from the client certificate).", valueName: "MODE"))
    var auth: String?

    @Option(name: .customLong("client-ca"), help: ArgumentHelp("With --auth certificate: a CA (PEM) client certificates must chain to (repeatable).", valueName: "PEM"))
    var clientCA: [String] = []

    @Flag(name: .customLong("accept-any-client-certificate"), help: "With --auth certificate: accept client certificates without verifying them (for Apple-issued certificates).")
    var acceptAnyClientCertificate = false

    @Option(name: .customLong("key"), help: ArgumentHelp("A provider key file (.p8 or public-key PEM) whose signatures are verified (repeatable).", valueName: "FILE"))
    var keys: [String] = []

    @Option(name: .customLong("key-id"), help: ArgumentHelp("The key ID of the matching --key.", valueName: "ID"))
    var keyIDs: [String] = []

    @Option(name: .customLong("team-id"), help: ArgumentHelp("The team ID of the matching --key.", valueName: "ID"))
    var teamIDs: [String] = []

    @Option(help: ArgumentHelp("A device token that answers 410 Unregistered (repeatable).", valueName: "TOKEN"))
    var unregistered: [String] = []

    @Option(help: ArgumentHelp("A fault rule (repeatable; grammar above).", valueName: "RULE"))
    var fault: [String] = []

    @Flag(help: "Reject where Apple's behaviour is undocumented (listed above).")
    var strict = false

    @Option(name: .customLong("idle-timeout"), help: ArgumentHelp("Send GOAWAY {\"reason\":\"IdleTimeout\"} and close a connection idle this many seconds (default: never).", valueName: "SECONDS"))
    var idleTimeout: Double?

    @Option(name: .customLong("store-limit"), help: ArgumentHelp("How many requests to keep for the API (default 10000; the newest are kept).", valueName: "N"))
    var storeLimit: Int?

    @Option(name: .customLong("db"), help: ArgumentHelp("Keep every request in this SQLite file across restarts (created if missing); each answer waits until its request is committed.", valueName: "FILE"))
    var db: String?

    @Option(name: .customLong("db-keep"), help: ArgumentHelp("With --db: how many requests the file keeps (default 100000; the newest).", valueName: "N"))
    var dbKeep: Int?

    @Option(name: .customLong("db-max-age"), help: ArgumentHelp("With --db: delete requests older than this many hours (default: kept whatever their age).", valueName: "HOURS"))
    var dbMaxAge: Double?

    @Option(help: ArgumentHelp("The app's bundle or project directory: devices show its strings.", valueName: "DIR"))
    var bundle: String?

    @Option(help: ArgumentHelp("One .strings, .stringsdict or .xcstrings table instead of --bundle.", valueName: "FILE"))
    var strings: String?

    @Option(help: ArgumentHelp("The languages devices render in, most preferred first (default en).", valueName: "LIST"))
    var lang: String?

    @Option(name: .customLong("release-to"), help: ArgumentHelp("Where the inbox's Release sends a notification: sandbox, production or HOST:PORT.", valueName: "TARGET"))
    var releaseTo: String?

    @Option(name: .customLong("release-p8"), help: ArgumentHelp("The release target's provider key (.p8).", valueName: "FILE"))
    var releaseP8: String?

    @Option(name: .customLong("release-key-id"), help: ArgumentHelp("The --release-p8 key's ID.", valueName: "ID"))
    var releaseKeyID: String?

    @Option(name: .customLong("release-team-id"), help: ArgumentHelp("The --release-p8 key's team ID.", valueName: "ID"))
    var releaseTeamID: String?

    @Option(name: .customLong("release-cert"), help: ArgumentHelp("A .p12 certificate for the release target (password in $HERALD_RELEASE_CERT_PASSWORD).", valueName: "FILE"))
    var releaseCert: String?

    @Option(name: .customLong("release-ca-file"), help: ArgumentHelp("Also trust this CA (PEM) when releasing, such as another mock's.", valueName: "PEM"))
    var releaseCAFile: String?

    @Flag(name: .customLong("release-plaintext"), help: "Release over HTTP/2 without TLS (to a herald mock --plaintext).")
    var releasePlaintext = false

    @Option(help: ArgumentHelp("A JSON configuration file (keys above).", valueName: "FILE"))
    var config: String?

    func run() async throws {
        var settings = try ConfigFile(path: config)
        settings.override(with: self)
        let configuration = try settings.makeConfiguration()
        let (server, logger) = try await Self.start(configuration, label: "herald.mock")
        var trustFile: String?
        if let pem = server.trustRootPEM {
            let path = settings.caOut ?? (NSTemporaryDirectory() as NSString).appendingPathComponent("herald-mock-ca-\(server.port).pem")
            do {
                try pem.write(toFile: path, atomically: true, encoding: .utf8)
            } catch {
                await server.stop()
                throw UsageError(message: "cannot write the CA certificate to '\(path)': \(error.localizedDescription)")
            }
            trustFile = Invocation.absolute(path)
        }
        // The inbox's commands to paste: this herald, the CA and the private keys it was given.
        var keyFiles: [String: String] = [:]
        for key in settings.keys where (try? String(contentsOfFile: key.file, encoding: .utf8))?.contains("PRIVATE KEY") == true {
            keyFiles[key.keyID] = Invocation.absolute(key.file)
        }
        server.pasteHints = MockPasteHints(herald: Invocation.herald, trustFile: trustFile, keyFiles: keyFiles)
        try await serve([server], banner: Self.banner(server: server, trustFile: trustFile, settings: settings), logger: logger)
        print("herald mock: stopped")
    }

    /// Starts a mock for a command (warnings only in its log), or says why it cannot.
    static func start(_ configuration: MockConfiguration, label: String) async throws -> (MockAPNsServer, Logger) {
        var logger = Logger(label: label)
        logger.logLevel = .warning
        do {
            let server = try MockAPNsServer(configuration: configuration, logger: logger)
            try await server.start()
            return (server, logger)
        } catch let error as MockDatabaseError {
            throw UsageError(message: "cannot start the mock: \(error)")
        } catch let error as MockBindError {
            let flag: String
            switch error.listener {
            case .apns: flag = "--port"
            case .channels: flag = "--channel-port"
            case .api: flag = "--api-port"
            }
            throw UsageError(message: "cannot start the mock: \(error) (\(flag) \(error.port); give another, or \(flag) 0 for a free one)")
        } catch {
            throw UsageError(message: "cannot start the mock: \(error)")
        }
    }

    /// What the mock listens on, what it trusts and verifies, and a request to paste.
    static func banner(server: MockAPNsServer, trustFile: String?, settings: ConfigFile) -> String {
        let configuration = server.configuration
        var lines: [String] = []
        let transport: String
        switch configuration.transport {
        case .plaintext: transport = "HTTP/2 with prior knowledge, no TLS"
        case .generatedTLS: transport = "HTTP/2 over TLS, certificate from the generated CA"
        case .tls: transport = "HTTP/2 over TLS"
        }
        lines.append("herald mock \(HeraldVersion.description): \(configuration.environment) APNs on \(server.providerURL) (\(transport))")
        if let channelPort = server.channelPort {
            let scheme = server.providerURL.hasPrefix("https") ? "https" : "http"
            lines.append("  channels   \(scheme)://\(configuration.host):\(channelPort)/1/apps/<bundle id>/channels")
        }
        if let apiPort = server.apiPort {
            lines.append("  inbox      http://\(configuration.host):\(apiPort)/  (open it in a browser: requests and devices, live)")
            lines.append("  API        http://\(configuration.host):\(apiPort)/api/v1/notifications  (events: /api/v1/events, metrics: /metrics)")
        }
        if let trustFile { lines.append("  trust      \(trustFile)  (the CA made at start-up; give it to clients)") }
        if case .certificate = configuration.authentication {
            lines.append("  auth       client certificates (mutual TLS); topics come from the certificate")
        } else if configuration.keys.isEmpty {
            lines.append("  keys       NONE: provider token signatures are NOT verified (form, algorithm and age only); add --key FILE --key-id ID --team-id ID")
        } else {
            for key in configuration.keys { lines.append("  key        \(key.keyID) (team \(key.teamID)): signatures verified") }
        }
        if let path = configuration.databasePath {
            lines.append("  database   \(path)  (kept across restarts: the newest \(configuration.databaseKeepCount)\(configuration.databaseMaximumAge.map { ", none older than \(Int($0.components.seconds / 3600)) h" } ?? ""))")
        }
        if let bundle = configuration.localization {
            let languages = server.languages
            lines.append("  strings    \(bundle.path ?? "given")  (\(languages.isEmpty ? "one table" : "languages: " + languages.joined(separator: ", ")); devices render in \(configuration.languages.joined(separator: ", ")))")
        }
        if let target = configuration.releaseTarget {
            lines.append("  release    \(target.name)  (the inbox's Release sends there)")
        }
        lines.append("  strict     \(configuration.strict ? "on: undocumented cases are rejected" : "off (see herald mock --help)")")
        for rule in server.faults { lines.append("  fault \(rule.id)    \(rule.rule)") }
        // A request that works as pasted: a token from a throwaway key (signatures are not checked
        // without --key) or a placeholder for the user's own.
        let token = "740f4707bebcf74f9b7c25d48e3358945f6aa01da5ddb387462c7eaf61bb78ad"
        var curl = "curl --http2"
        if case .plaintext = configuration.transport { curl = "curl --http2-prior-knowledge" }
        if let trustFile { curl += " --cacert \(shellQuoted(trustFile))" }
        if case .certificate = configuration.authentication {
            curl += " --cert client.pem --key client-key.pem"
        } else if configuration.keys.isEmpty, let keyID = try? KeyID("DEMOKEY001"), let teamID = try? TeamID("DEMOTEAM01") {
            let demo = ProviderToken.sign(with: .generate(keyID: keyID, teamID: teamID), issuedAt: Date())
            curl += " \\\n    -H 'authorization: bearer \(demo.rawValue)'"
        } else if let key = configuration.keys.first, let file = server.pasteHints.keyFiles[key.keyID.rawValue] {
            curl += " \\\n    -H \"authorization: bearer $(\(server.pasteHints.herald) token --p8 \(shellQuoted(file)) --key-id \(key.keyID) --team-id \(key.teamID))\""
        } else {
            curl += " \\\n    -H \"authorization: bearer $PROVIDER_TOKEN\""
        }
        curl += " \\\n    -H 'apns-topic: com.example.app' -H 'apns-push-type: alert' \\\n    -d '{\"aps\":{\"alert\":{\"title\":\"Hello\",\"body\":\"From herald mock\"}}}' \\\n    \(server.providerURL)/3/device/\(token)"
        lines.append("")
        lines.append("Send a push (the demo token is valid for an hour):")
        lines.append("  " + curl)
        lines.append("")
        return lines.joined(separator: "\n") + "\n"
    }
}

/// The mock's settings from `--config` and the flags (flags win), with every problem reported
/// against the file or flag it came from.
struct ConfigFile {
    var host: String?
    var port: Int?
    var apiPort: Int?
    var channelPort: Int?
    var environment: String?
    var plaintext: Bool?
    var tlsCert: String?
    var tlsKey: String?
    var caOut: String?
    var strict: Bool?
    var storeLimit: Int?
    var idleTimeout: Double?
    var db: String?
    var dbKeep: Int?
    var dbMaxAge: Double?
    var auth: String?
    var clientCA: [String] = []
    var acceptAnyClientCertificate: Bool?
    var unregistered: [String] = []
    var faults: [String] = []
    var keys: [(file: String, keyID: String, teamID: String)] = []
    var bundle: String?
    var strings: String?
    var languages: [String]?
    var releaseTo: String?
    var releaseP8: String?
    var releaseKeyID: String?
    var releaseTeamID: String?
    var releaseCert: String?
    var releaseCAFile: String?
    var releasePlaintext: Bool?
    let source: String?

    init(path: String?) throws {
        source = path
        guard let path else { return }
        let bytes = try InputFile(argument: path).read()
        let document: JSONDocument
        do {
            document = try JSONDocument(parsing: bytes)
        } catch {
            throw UsageError(message: "\(path):\(error.location.line):\(error.location.column): \(error.message)")
        }
        guard let object = document.root.value.objectValue else { throw UsageError(message: "\(path): expected a JSON object of settings") }
        func fail(_ key: String, _ expected: String) -> UsageError { UsageError(message: "\(path): \"\(key)\" must be \(expected)") }
        for member in object {
            let key = member.key, value = member.value
            func int() throws -> Int {
                guard let number = value.numberValue, let int = Int(number.text) else { throw fail(key, "a whole number") }
                return int
            }
            func string() throws -> String {
                guard let text = value.stringValue else { throw fail(key, "a string") }
                return text
            }
            func bool() throws -> Bool {
                guard let flag = value.boolValue else { throw fail(key, "true or false") }
                return flag
            }
            func strings() throws -> [String] {
                guard let array = value.arrayValue else { throw fail(key, "an array of strings") }
                return try array.map { element in
                    guard let text = element.stringValue else { throw fail(key, "an array of strings") }
                    return text
                }
            }
            switch key {
            case "host": host = try string()
            case "port": port = try int()
            case "apiPort": apiPort = try int()
            case "channelPort": channelPort = try int()
            case "environment": environment = try string()
            case "plaintext": plaintext = try bool()
            case "tlsCert": tlsCert = try string()
            case "tlsKey": tlsKey = try string()
            case "caOut": caOut = try string()
            case "strict": strict = try bool()
            case "storeLimit": storeLimit = try int()
            case "db": db = try string()
            case "dbKeep": dbKeep = try int()
            case "dbMaxAge":
                guard let number = value.numberValue, let hours = Double(number.text) else { throw fail(key, "a number of hours") }
                dbMaxAge = hours
            case "idleTimeout":
                guard let number = value.numberValue, let seconds = Double(number.text) else { throw fail(key, "a number of seconds") }
                idleTimeout = seconds
            case "auth": auth = try string()
            case "clientCA": clientCA = try strings()
            case "acceptAnyClientCertificate": acceptAnyClientCertificate = try bool()
            case "unregistered": unregistered = try strings()
            case "faults": faults = try strings()
            case "keys":
                guard let array = value.arrayValue else { throw fail(key, "an array of {\"file\", \"keyId\", \"teamId\"}") }
                keys = try array.map { element in
                    guard let file = element["file"]?.stringValue, let keyID = element["keyId"]?.stringValue, let teamID = element["teamId"]?.stringValue else {
                        throw fail(key, "an array of {\"file\", \"keyId\", \"teamId\"}")
                    }
                    return (file, keyID, teamID)
                }
            case "bundle": bundle = try string()
            case "strings": self.strings = try string()
            case "lang": languages = try strings()
            case "releaseTo": releaseTo = try string()
            case "releaseP8": releaseP8 = try string()
            case "releaseKeyId": releaseKeyID = try string()
            case "releaseTeamId": releaseTeamID = try string()
            case "releaseCert": releaseCert = try string()
            case "releaseCaFile": releaseCAFile = try string()
            case "releasePlaintext": releasePlaintext = try bool()
            default:
                throw UsageError(message: "\(path): unknown setting \"\(key)\"; see herald mock --help")
            }
        }
    }

    mutating func override(with flags: MockCommand) {
        host = flags.host ?? host
        port = flags.port ?? port
        apiPort = flags.apiPort ?? apiPort
        channelPort = flags.channelPort ?? channelPort
        environment = flags.environment ?? environment
        if flags.plaintext { plaintext = true }
        tlsCert = flags.tlsCert ?? tlsCert
        tlsKey = flags.tlsKey ?? tlsKey
        caOut = flags.caOut ?? caOut
        if flags.strict { strict = true }
        storeLimit = flags.storeLimit ?? storeLimit
        db = flags.db ?? db
        dbKeep = flags.dbKeep ?? dbKeep
        dbMaxAge = flags.dbMaxAge ?? dbMaxAge
        idleTimeout = flags.idleTimeout ?? idleTimeout
        auth = flags.auth ?? auth
        clientCA += flags.clientCA
        if flags.acceptAnyClientCertificate { acceptAnyClientCertificate = true }
        unregistered += flags.unregistered
        faults += flags.fault
        keys += zip(flags.keys, zip(flags.keyIDs, flags.teamIDs)).map { ($0, $1.0, $1.1) }
        if flags.bundle != nil || flags.strings != nil {
            bundle = flags.bundle
            strings = flags.strings
        }
        languages = flags.lang.map { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty } } ?? languages
        releaseTo = flags.releaseTo ?? releaseTo
        releaseP8 = flags.releaseP8 ?? releaseP8
        releaseKeyID = flags.releaseKeyID ?? releaseKeyID
        releaseTeamID = flags.releaseTeamID ?? releaseTeamID
        releaseCert = flags.releaseCert ?? releaseCert
        releaseCAFile = flags.releaseCAFile ?? releaseCAFile
        if flags.releasePlaintext { releasePlaintext = true }
        keyCountMismatch = flags.keys.count != flags.keyIDs.count || flags.keys.count != flags.teamIDs.count
    }

    private var keyCountMismatch = false

    func makeConfiguration() throws -> MockConfiguration {
        var configuration = MockConfiguration()
        if keyCountMismatch {
            throw UsageError(message: "each --key needs its --key-id and --team-id, in the same order")
        }
        if let host { configuration.host = host }
        if let environment {
            guard let value = APNsEnvironment(rawValue: environment) else {
                throw UsageError(message: "--environment is sandbox or production, not '\(environment)'")
            }
            configuration.environment = value
        }
        for (name, value) in [("--port", port), ("--api-port", apiPort), ("--channel-port", channelPort)] {
            if let value, !(0...65_535).contains(value) { throw UsageError(message: "\(name) must be from 0 to 65535, not \(value)") }
        }
        configuration.port = port ?? 2197
        configuration.apiPort = apiPort ?? 8197
        configuration.channelPort = channelPort ?? configuration.environment.channelManagementPort
        if plaintext == true {
            if tlsCert != nil || tlsKey != nil { throw UsageError(message: "--plaintext and --tls-cert/--tls-key exclude each other") }
            configuration.transport = .plaintext
        } else if tlsCert != nil || tlsKey != nil {
            guard let tlsCert, let tlsKey else { throw UsageError(message: "--tls-cert and --tls-key go together") }
            do {
                configuration.transport = .tls(
                    certificateChain: try NIOSSLCertificate.fromPEMFile(tlsCert),
                    privateKey: try NIOSSLPrivateKey(file: tlsKey, format: .pem))
            } catch {
                throw UsageError(message: "cannot load --tls-cert '\(tlsCert)' and --tls-key '\(tlsKey)': \(error)")
            }
        }
        switch auth ?? "token" {
        case "token": break
        case "certificate":
            if plaintext == true { throw UsageError(message: "--auth certificate needs TLS; drop --plaintext") }
            var roots: [NIOSSLCertificate] = []
            for file in clientCA {
                do { roots += try NIOSSLCertificate.fromPEMFile(file) } catch {
                    throw UsageError(message: "cannot read --client-ca '\(file)': \(error)")
                }
            }
            configuration.authentication = .certificate(trustRoots: roots, acceptsAnyCertificate: acceptAnyClientCertificate ?? false)
        case let other:
            throw UsageError(message: "--auth is token or certificate, not '\(other)'")
        }
        if strict == true { configuration.strict = true }
        if let storeLimit {
            guard storeLimit >= 1 else { throw UsageError(message: "--store-limit must be at least 1") }
            configuration.storeCapacity = storeLimit
        }
        if let db {
            guard !db.isEmpty else { throw UsageError(message: "--db needs a file name") }
            configuration.databasePath = db
        }
        if let dbKeep {
            guard dbKeep >= 1 else { throw UsageError(message: "--db-keep must be at least 1") }
            guard db != nil else { throw UsageError(message: "--db-keep needs --db FILE") }
            configuration.databaseKeepCount = dbKeep
        }
        if let dbMaxAge {
            guard dbMaxAge > 0, dbMaxAge <= 876_000 else { throw UsageError(message: "--db-max-age must be a positive number of hours, at most 876000 (a hundred years)") }
            guard db != nil else { throw UsageError(message: "--db-max-age needs --db FILE") }
            configuration.databaseMaximumAge = .milliseconds(Int64(dbMaxAge * 3_600_000))
        }
        if let idleTimeout {
            guard idleTimeout > 0, idleTimeout <= 86_400 else { throw UsageError(message: "--idle-timeout must be a number of seconds above 0, at most 86400 (a day)") }
            configuration.idleTimeout = .milliseconds(Int64(idleTimeout * 1000))
        }
        for hex in unregistered {
            do throws(DeviceTokenError) { configuration.unregisteredTokens.append(try DeviceToken(hex: hex)) } catch {
                throw UsageError(message: "--unregistered '\(hex)': \(error)")
            }
        }
        for text in faults {
            do throws(FaultRuleError) { configuration.faults.append(try FaultRule(parsing: text)) } catch {
                throw UsageError(message: "--fault: \(error)")
            }
        }
        for key in keys {
            do {
                let keyID = try KeyID(key.keyID)
                let teamID = try TeamID(key.teamID)
                configuration.keys.append(try ProviderPublicKey(contentsOfFile: key.file, keyID: keyID, teamID: teamID))
            } catch {
                throw UsageError(message: "--key '\(key.file)': \(error)")
            }
        }
        configuration.localization = try localization()
        if let languages {
            guard !languages.isEmpty else { throw UsageError(message: "--lang needs at least one language, such as en or fr-CA,fr") }
            configuration.languages = languages
        }
        configuration.releaseTarget = try releaseTarget()
        return configuration
    }

    /// The app's strings from --bundle or --strings.
    private func localization() throws -> LocalizationBundle? {
        if bundle != nil && strings != nil { throw UsageError(message: "--bundle and --strings exclude each other: a directory, or one table") }
        guard let path = bundle ?? strings else { return nil }
        let flag = bundle != nil ? "--bundle" : "--strings"
        if strings != nil, FileSystemCheck.isDirectory(path) { throw UsageError(message: "--strings takes one table file; '\(path)' is a directory (use --bundle)") }
        do {
            return try LocalizationBundle.load(path: path)
        } catch {
            throw UsageError(message: "\(flag) '\(path)': \(error.message)")
        }
    }

    /// Where the inbox's Release sends, from --release-to and its credentials.
    private func releaseTarget() throws -> ReleaseTarget? {
        let given = [releaseP8, releaseKeyID, releaseTeamID, releaseCert, releaseCAFile].contains { $0 != nil } || releasePlaintext == true
        guard let releaseTo else {
            if given { throw UsageError(message: "the --release-* credentials need --release-to sandbox|production|HOST:PORT") }
            return nil
        }
        let server: APNsClientConfiguration.Server
        switch releaseTo {
        case "sandbox": server = .sandbox
        case "production": server = .production
        default:
            guard let colon = releaseTo.lastIndex(of: ":"), let port = Int(releaseTo[releaseTo.index(after: colon)...]), (1...65_535).contains(port) else {
                throw UsageError(message: "--release-to is sandbox, production or HOST:PORT (such as 127.0.0.1:2297), not '\(releaseTo)'")
            }
            let host = String(releaseTo[..<colon]).trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
            server = .custom(host: host, port: port)
        }
        let credentials: APNsClientConfiguration.Credentials
        if let key = try CredentialOptions.signingKey(
            p8: releaseP8, keyID: releaseKeyID, teamID: releaseTeamID, certificate: releaseCert,
            flags: "--release-p8, --release-key-id, --release-team-id", orElse: "--release-cert FILE.p12 (certificate auth)") {
            credentials = .token(key)
        } else {
            credentials = try CredentialOptions.certificateCredentials(path: releaseCert ?? "", passwordVariable: "HERALD_RELEASE_CERT_PASSWORD")
        }
        var client = APNsClientConfiguration(server: server, credentials: credentials)
        client.plaintext = releasePlaintext == true
        client.lintsBeforeSending = true
        if let releaseCAFile { client.additionalTrustRootsPEM = [try CredentialOptions.trustedPEM(releaseCAFile, flag: "--release-ca-file")] }
        return ReleaseTarget(client: client)
    }
}
