import Foundation
import HeraldAuth
import HeraldClient
import HeraldJSON
import HeraldProtocol

/// An app the gateway sends for: its bundle ID, APNs environment (or another server, such as a
/// herald mock), credentials, limits and webhook. Registered through `POST /v1/apps`; stored
/// with its credentials, shown without them.
struct GatewayApp: Sendable {
    struct Server: Sendable, Equatable {
        var host: String
        var port: Int
        /// A CA to trust besides the system's (PEM), such as a herald mock's.
        var caCertificate: String?
        /// HTTP/2 without TLS (a `herald mock --plaintext`).
        var plaintext: Bool
        /// The port of its broadcast channel management (a herald mock's `--channel-port`);
        /// `nil`: Apple's for the environment.
        var channelPort: Int? = nil
    }

    enum Credentials: Sendable, Equatable {
        /// A `.p8` key (PEM text) with its key and team IDs.
        case token(key: String, keyID: String, teamID: String)
        /// A `.p12` certificate (its bytes) and password.
        case certificate(p12: [UInt8], password: String)
    }

    struct Webhook: Sendable, Equatable {
        enum Event: String, Sendable, CaseIterable {
            /// A token APNs answered Unregistered or BadDeviceToken: stop sending to it.
            case tokenDead = "token.dead"
            case accepted = "delivery.accepted"
            case rejected = "delivery.rejected"
            case expired = "delivery.expired"
            /// The notification's last delivery became final.
            case jobDone = "job.done"
            /// APNs refused the app's credentials or server: its sending is paused.
            case appPaused = "app.paused"
            /// A delivery was cancelled before it was handed to APNs.
            case cancelled = "delivery.cancelled"

            /// What a webhook gets when it names no events.
            static let defaults: Set<Event> = [.tokenDead, .appPaused]
        }

        var url: String
        /// The HMAC-SHA256 key the receiver checks `Herald-Signature` with.
        var secret: String
        var events: Set<Event>
    }

    /// How the API and the store name it: `[A-Za-z0-9._-]`, 1 to 128 characters.
    var id: String
    var bundleID: String
    var environment: APNsEnvironment
    var server: Server?
    var credentials: Credentials
    /// Sends per second at most (per gateway process); `nil`: no limit.
    var rateLimit: Int?
    /// Requests in flight at most (per gateway process).
    var concurrency: Int
    var webhook: Webhook?
    /// The zone of devices registered without one, for local-time schedules (IANA; `UTC` by
    /// default).
    var timeZone: String

    static let defaultConcurrency = 1_000

    /// The members of a definition, and of its objects.
    static let fields: [String: [String]] = [
        "": ["id", "bundleId", "environment", "server", "token", "certificate", "rateLimit", "concurrency", "webhook", "timeZone"],
        "server": ["host", "port", "caCertificate", "plaintext", "channelPort"],
        "token": ["key", "keyId", "teamId"],
        "certificate": ["p12", "password"],
        "webhook": ["url", "secret", "events"],
    ]

    /// A request's problem with an app definition: which key, what was expected.
    struct Problem: Error, CustomStringConvertible {
        var pointer: String
        var message: String
        var description: String { "\(pointer): \(message)" }
    }

    static func isValidID(_ id: String) -> Bool {
        (1...128).contains(id.utf8.count) && id.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || byte == 0x2E || byte == 0x2D || byte == 0x5F
        }
    }

    /// An app from a registration body (or a stored definition).
    init(json root: JSONDocument.Node) throws(Problem) {
        // null is as good as absent (a stored definition writes its absent values as null).
        func present(_ key: String, in node: JSONDocument.Node = root) -> JSONDocument.Node? {
            guard let value = node[key], value.kind != .null else { return nil }
            return value
        }
        func string(_ key: String, in node: JSONDocument.Node = root, at path: String = "") throws(Problem) -> String? {
            guard let value = present(key, in: node) else { return nil }
            guard let text = value.stringValue else { throw Problem(pointer: "\(path)/\(key)", message: "expected a string") }
            return text
        }
        func int(_ key: String, in node: JSONDocument.Node = root, at path: String = "", range: ClosedRange<Int>) throws(Problem) -> Int? {
            guard let value = present(key, in: node) else { return nil }
            guard let number = value.wholeNumber, range.contains(Int(number)) else {
                throw Problem(pointer: "\(path)/\(key)", message: "expected a whole number from \(range.lowerBound) to \(range.upperBound)")
            }
            return Int(number)
        }
        guard root.kind == .object else { throw Problem(pointer: "", message: "expected a JSON object") }
        // Every member known, as every route refuses unknown fields.
        func known(_ node: JSONDocument.Node, at path: String, _ fields: [String]) throws(Problem) {
            guard node.kind == .object else { throw Problem(pointer: path, message: "expected a JSON object") }
            for member in node.members where !fields.contains(member.key) {
                throw Problem(pointer: path + JSONPointer(tokens: [member.key]).description, message: "unknown field; the fields are \(fields.sorted().joined(separator: ", "))")
            }
        }
        try known(root, at: "", Self.fields[""]!)
        for (key, fields) in Self.fields where !key.isEmpty {
            if let node = present(key) { try known(node, at: "/\(key)", fields) }
        }
        guard let bundleID = try string("bundleId"), !bundleID.isEmpty else {
            throw Problem(pointer: "/bundleId", message: "required: the app's bundle ID (the topic of its alerts)")
        }
        // A bundle ID is letters, digits, hyphens and periods (Apple's "CFBundleIdentifier").
        guard bundleID.utf8.count <= 128, bundleID.utf8.allSatisfy({ byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || byte == 0x2E || byte == 0x2D
        }) else {
            throw Problem(pointer: "/bundleId", message: "a bundle ID is 1 to 128 letters, digits, hyphens and periods")
        }
        self.bundleID = bundleID
        id = try string("id") ?? bundleID
        guard Self.isValidID(id) else { throw Problem(pointer: "/id", message: "1 to 128 letters, digits, '.', '-' or '_'") }
        let environmentName = try string("environment") ?? "production"
        guard let environment = APNsEnvironment(rawValue: environmentName) else {
            throw Problem(pointer: "/environment", message: "sandbox (development builds) or production, not \(environmentName)")
        }
        self.environment = environment
        if let node = present("server") {
            guard let host = try string("host", in: node, at: "/server"), !host.isEmpty,
                  let port = try int("port", in: node, at: "/server", range: 1...65_535) else {
                throw Problem(pointer: "/server", message: "expected {\"host\", \"port\"} (and \"caCertificate\" PEM, \"plaintext\")")
            }
            let ca = try string("caCertificate", in: node, at: "/server")
            if let ca, !ca.contains("BEGIN CERTIFICATE") { throw Problem(pointer: "/server/caCertificate", message: "expected a PEM certificate") }
            server = Server(
                host: host, port: port, caCertificate: ca, plaintext: node["plaintext"]?.boolValue ?? false,
                channelPort: try int("channelPort", in: node, at: "/server", range: 1...65_535))
        }
        if let token = present("token") {
            guard let key = try string("key", in: token, at: "/token"), let keyID = try string("keyId", in: token, at: "/token"),
                  let teamID = try string("teamId", in: token, at: "/token") else {
                throw Problem(pointer: "/token", message: "expected {\"key\": the .p8 file's text, \"keyId\", \"teamId\"}")
            }
            credentials = .token(key: key, keyID: keyID, teamID: teamID)
        } else if let certificate = present("certificate") {
            guard let text = try string("p12", in: certificate, at: "/certificate"), let bytes = Data(base64Encoded: text) else {
                throw Problem(pointer: "/certificate/p12", message: "expected the .p12 file in base64")
            }
            credentials = .certificate(p12: Array(bytes), password: try string("password", in: certificate, at: "/certificate") ?? "")
        } else {
            throw Problem(pointer: "/token", message: "credentials are required: \"token\" {key, keyId, teamId} or \"certificate\" {p12, password}")
        }
        timeZone = try string("timeZone") ?? "UTC"
        guard LocalTime.zone(timeZone) != nil else {
            throw Problem(pointer: "/timeZone", message: "\(timeZone) is not a time zone of the system's database (an IANA name such as Europe/Paris)")
        }
        rateLimit = try int("rateLimit", range: 1...1_000_000)
        concurrency = try int("concurrency", range: 1...100_000) ?? Self.defaultConcurrency
        if let node = present("webhook") {
            guard let url = try string("url", in: node, at: "/webhook"), let parsed = URL(string: url),
                  ["http", "https"].contains(parsed.scheme ?? ""), parsed.host != nil else {
                throw Problem(pointer: "/webhook/url", message: "expected an http:// or https:// URL")
            }
            guard let secret = try string("secret", in: node, at: "/webhook"), secret.utf8.count >= 16 else {
                throw Problem(pointer: "/webhook/secret", message: "expected a secret of at least 16 characters (the HMAC key)")
            }
            var events = Webhook.Event.defaults
            if let list = present("events", in: node) {
                guard list.kind == .array else { throw Problem(pointer: "/webhook/events", message: "expected an array") }
                events = []
                for (index, element) in list.elements.enumerated() {
                    guard let name = element.stringValue, let event = Webhook.Event(rawValue: name) else {
                        throw Problem(pointer: "/webhook/events/\(index)", message: "one of \(Webhook.Event.allCases.map(\.rawValue).joined(separator: ", "))")
                    }
                    events.insert(event)
                }
            }
            webhook = Webhook(url: url, secret: secret, events: events)
        }
    }

    /// What can be checked without APNs, at registration and at every change: the credentials
    /// load (a P-256 key; a PKCS#12 file and its password), and a certificate covers the app's
    /// bundle ID and environment and has not expired at `now`.
    func check(now: Date) throws(Problem) {
        _ = try clientConfiguration(requestTimeout: .seconds(30))
        guard case .certificate(let p12, let password) = credentials else { return }
        let info: APNsCertificateInfo
        do {
            info = try APNsCertificateIdentity(pkcs12: p12, passphrase: password).info
        } catch {
            throw Problem(pointer: "/certificate", message: "\(error)")
        }
        guard info.allows(topic: bundleID) else {
            throw Problem(
                pointer: "/certificate",
                message: "the certificate's topics are \(info.topicNames.joined(separator: ", ")); the bundle ID \(bundleID) is not among them (a certificate for another app?)")
        }
        guard info.environments.contains(environment) else {
            let has = info.environments.map(\.rawValue).sorted().joined(separator: " and ")
            throw Problem(pointer: "/environment", message: "the certificate is for \(has.isEmpty ? "no environment" : has), not \(environment.rawValue)")
        }
        guard info.notValidAfter > now else {
            throw Problem(pointer: "/certificate", message: "the certificate expired on \(info.notValidAfter): renew it in the Apple Developer account")
        }
    }

    /// `definition` with `patch` applied as a JSON Merge Patch (RFC 7396): members set,
    /// `null` removes, objects merge. Giving `token` replaces `certificate` and the reverse
    /// (an app has one kind of credentials).
    static func merge(_ definition: JSONValue, _ patch: JSONValue) -> JSONValue {
        var base = definition
        if case .object(let changes) = patch, case .object(var object) = base {
            for (given, other) in [("token", "certificate"), ("certificate", "token")] where changes[given].map({ $0.kind != .null }) == true {
                object.members.removeAll { $0.key == other }
            }
            base = .object(object)
        }
        return mergeNested(base, patch)
    }

    private static func mergeNested(_ target: JSONValue, _ patch: JSONValue) -> JSONValue {
        guard case .object(let changes) = patch else { return patch }
        var merged = target.objectValue ?? JSONObject()
        for member in changes.members {
            let existing = merged.members.firstIndex { $0.key == member.key }
            if member.value.kind == .null {
                merged.members.removeAll { $0.key == member.key }
            } else if let existing {
                merged.members[existing].value = mergeNested(merged.members[existing].value, member.value)
            } else {
                merged.members.append(.init(key: member.key, value: mergeNested(.null, member.value)))
            }
        }
        return .object(merged)
    }

    /// The stored definition as a value (secrets included).
    var storedValue: JSONValue { value(includingSecrets: true) }

    /// The client configuration the app sends with (its credentials checked).
    func clientConfiguration(requestTimeout: Duration) throws(Problem) -> APNsClientConfiguration {
        let credentials: APNsClientConfiguration.Credentials
        switch self.credentials {
        case .token(let key, let keyID, let teamID):
            do {
                credentials = .token(try ProviderSigningKey(pem: key, keyID: try KeyID(keyID), teamID: try TeamID(teamID)))
            } catch {
                throw Problem(pointer: "/token", message: "\(error)")
            }
        case .certificate(let p12, let password):
            do {
                credentials = .certificate(try APNsCertificateIdentity(pkcs12: p12, passphrase: password))
            } catch {
                throw Problem(pointer: "/certificate", message: "\(error)")
            }
        }
        let server: APNsClientConfiguration.Server
        if let custom = self.server {
            server = .custom(host: custom.host, port: custom.port, environment: environment)
        } else {
            server = environment == .production ? .production : .sandbox
        }
        var configuration = APNsClientConfiguration(server: server, credentials: credentials)
        if let custom = self.server {
            configuration.plaintext = custom.plaintext
            if let channelPort = custom.channelPort {
                configuration.channelManagementHost = custom.host
                configuration.channelManagementPort = channelPort
            }
            if let ca = custom.caCertificate { configuration.additionalTrustRootsPEM = [ca] }
        }
        configuration.maximumRequestsInFlight = concurrency
        configuration.maximumConnections = max(1, min(8, concurrency / 500 + 1))
        configuration.requestTimeout = requestTimeout
        configuration.pingInterval = .seconds(60)
        return configuration
    }

    /// The topic of a push type: the bundle ID and the type's suffix (`nil` for `mdm`, whose
    /// topic comes from its certificate).
    func topic(for pushType: PushType) -> String? { pushType.topic(forBundleID: bundleID) }

    /// The definition as stored (credentials included).
    var storedJSON: String {
        var writer = JSONWriter(output: JSONBytes())
        writer.value(value(includingSecrets: true))
        return String(decoding: writer.output.bytes, as: UTF8.self)
    }

    /// The definition as the API shows it: no key, certificate, password or webhook secret.
    var publicValue: JSONValue { value(includingSecrets: false) }

    private func value(includingSecrets: Bool) -> JSONValue {
        var object = JSONObject()
        func add(_ key: String, _ value: JSONValue) { object.members.append(.init(key: key, value: value)) }
        add("id", .string(id))
        add("bundleId", .string(bundleID))
        add("environment", .string(environment.rawValue))
        if let server {
            add("server", [
                "host": .string(server.host), "port": .number(JSONNumber(server.port)),
                "caCertificate": server.caCertificate.map { .string($0) } ?? .null, "plaintext": .bool(server.plaintext),
                "channelPort": server.channelPort.map { .number(JSONNumber($0)) } ?? .null,
            ])
        }
        switch credentials {
        case .token(let key, let keyID, let teamID):
            add("token", ["key": includingSecrets ? .string(key) : "(hidden)", "keyId": .string(keyID), "teamId": .string(teamID)])
        case .certificate(let p12, let password):
            add("certificate", [
                "p12": includingSecrets ? .string(Data(p12).base64EncodedString()) : "(hidden)",
                "password": includingSecrets ? .string(password) : "(hidden)",
            ])
        }
        add("timeZone", .string(timeZone))
        add("rateLimit", rateLimit.map { .number(JSONNumber($0)) } ?? .null)
        add("concurrency", .number(JSONNumber(concurrency)))
        if let webhook {
            add("webhook", [
                "url": .string(webhook.url), "secret": includingSecrets ? .string(webhook.secret) : "(hidden)",
                "events": .array(webhook.events.map(\.rawValue).sorted().map { .string($0) }),
            ])
        }
        return .object(object)
    }
}

extension JSONDocument.Node {
    /// A whole number however it is written (`5`, `5.0`, `5e0`: JSON Schema's `integer`), if it
    /// fits an `Int64` exactly.
    var wholeNumber: Int64? {
        if let integer = int64Value { return integer }
        guard let value = doubleValue, value == value.rounded(), value.magnitude <= 9_007_199_254_740_992 else { return nil }
        return Int64(value)
    }
}
