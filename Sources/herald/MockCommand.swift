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
            environment, plaintext, tlsCert, tlsKey, caOut, strict, storeLimit, deviceHistories, db, dbKeep, dbMaxAge, idleTimeout, unregistered \
            (array of tokens), faults (array of rules), keys (array of {file, keyId, teamId}), \
            bundle, strings, lang (array), releaseTo, releaseP8, releaseKeyId, releaseTeamId, \
            releaseCert, releaseCaFile, releasePlaintext, reportActivityTokens, reportHeaders \
            (array). Flags given on the command line win.

            Live Activities: a start with input-push-token: 1 makes an activity under a new \
            update token (GET /api/v1/devices/TOKEN/activities shows it); \
            --report-activity-tokens URL posts each such token there, as the app reports it to \
            its backend (herald serve's /v1/apps/APP/activity-tokens).

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
              herald mock --db pushes.db --db-keep 50000 --db-max-age 168   # a week
              herald mock --bundle MyApp/ --lang fr,en
              herald mock --release-to sandbox --release-p8 AuthKey_ABC123DEFG.p8 \\
                  --release-key-id ABC123DEFG --release-team-id DEF123GHIJ
            """
    )

    @OptionGroup(title: "Listening") var listening: MockListenOptions
    @OptionGroup(title: "Provider authentication") var authentication: MockAuthenticationOptions
    @OptionGroup(title: "Answers") var answers: MockAnswerOptions
    @OptionGroup(title: "Storage") var storage: MockStorageOptions
    @OptionGroup(title: "Live Activities") var activities: MockActivityOptions
    @OptionGroup(title: "App strings") var localization: LocalizationOptions
    @OptionGroup(title: "Release from the inbox") var release: MockReleaseOptions

    @Option(help: ArgumentHelp("A JSON configuration file (keys above).", valueName: "FILE"))
    var config: String?

    /// The flags as settings: what was given, nothing for what was not.
    var flagSettings: MockSettings {
        var settings = MockSettings()
        listening.apply(to: &settings)
        authentication.apply(to: &settings)
        answers.apply(to: &settings)
        storage.apply(to: &settings)
        activities.apply(to: &settings)
        settings.bundle = localization.bundle
        settings.strings = localization.strings
        settings.languages = localization.languages
        release.apply(to: &settings)
        return settings
    }

    /// A setting's flag, from its key in the config file (`dbKeep` is `--db-keep`).
    static func flag(_ key: String) -> String {
        switch key {
        case "faults": return "--fault"
        case "keys": return "--key"
        case "clientCA": return "--client-ca"
        case "releaseCaFile": return "--release-ca-file"
        case "reportHeaders": return "--report-header"
        default:
            return "--" + key.reduce(into: "") { name, character in
                if character.isUppercase { name += "-" + character.lowercased() } else { name.append(character) }
            }
        }
    }

    func run() async throws {
        var settings = MockSettings()
        let configuration: MockConfiguration
        do {
            if let config { settings = try MockSettings(json: InputFile(argument: config).read(), source: config) }
            settings.merge(flagSettings)
            configuration = try settings.configuration(naming: Self.flag)
        } catch let error as MockSettingsError {
            throw UsageError(message: error.message)
        }
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
        try await serve([server], banner: Self.banner(server: server, trustFile: trustFile), logger: logger)
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
    static func banner(server: MockAPNsServer, trustFile: String?) -> String {
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
