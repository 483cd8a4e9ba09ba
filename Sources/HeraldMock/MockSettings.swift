import Foundation
import HeraldAuth
import HeraldClient
import HeraldJSON
import HeraldLocalization
import HeraldProtocol
import NIOSSL

/// The mock's settings as a person writes them: in a JSON file (`herald mock --config`) or as
/// flags, with paths, numbers and names rather than loaded keys and certificates.
/// ``configuration(environment:naming:)`` turns them into a ``MockConfiguration``, loading every
/// file and checking every value, with the same defaults and the same messages as `herald mock`.
///
/// The JSON keys are the flags' names in camel case (`--api-port` is `apiPort`, `--db-keep` is
/// `dbKeep`); `faults`, `keys` and `lang` are arrays:
///
/// ```json
/// {"port": 2197, "strict": true, "db": "pushes.db", "faults": ["status=503,every=10"],
///  "keys": [{"file": "AuthKey_ABC123DEFG.p8", "keyId": "ABC123DEFG", "teamId": "DEF123GHIJ"}]}
/// ```
///
/// Settings from two sources combine with ``merge(_:)``: the later wins, lists add up.
public struct MockSettings: Sendable {
    /// A provider key file whose signatures the mock verifies.
    public struct KeyFile: Sendable, Hashable {
        /// The `.p8` or public-key PEM file.
        public var file: String
        /// Its key ID.
        public var keyID: String
        /// Its team ID.
        public var teamID: String

        /// A key file with its IDs.
        public init(file: String, keyID: String, teamID: String) {
            self.file = file
            self.keyID = keyID
            self.teamID = teamID
        }
    }

    /// `host`: the address to bind (default 127.0.0.1).
    public var host: String?
    /// `port`: the APNs port (default 2197; 0 picks one).
    public var port: Int?
    /// `apiPort`: the inbox and API port (default 8197; 0 picks one).
    public var apiPort: Int?
    /// `channelPort`: the channel-management port (default 2195 in sandbox, 2196 in production).
    public var channelPort: Int?
    /// `environment`: `sandbox` (default) or `production`.
    public var environment: String?
    /// `plaintext`: HTTP/2 without TLS.
    public var plaintext: Bool?
    /// `tlsCert`: the server certificate chain (PEM) instead of a generated one.
    public var tlsCert: String?
    /// `tlsKey`: its private key (PEM).
    public var tlsKey: String?
    /// `caOut`: where `herald mock` writes the generated CA (not part of the configuration).
    public var caOut: String?
    /// `strict`: reject where Apple's behaviour is undocumented.
    public var strict: Bool?
    /// `storeLimit`: requests kept in memory (default 10,000).
    public var storeLimit: Int?
    /// `deviceHistories`: devices that keep their Notification Center and log (default 1,000;
    /// the most recently reached).
    public var deviceHistories: Int?
    /// `reportActivityTokens`: a URL the mock posts each new Live Activity update token to, as
    /// an app reports it to its backend.
    public var reportActivityTokens: String?
    /// `reportHeaders`: headers on those posts (`Name: value`, such as an API key).
    public var reportHeaders: [String] = []
    /// `db`: an SQLite file that keeps requests across restarts.
    public var db: String?
    /// `dbKeep`: requests the file keeps (default 100,000).
    public var dbKeep: Int?
    /// `dbMaxAge`: hours after which requests are deleted from the file.
    public var dbMaxAge: Double?
    /// `idleTimeout`: seconds without a request before a connection is sent GOAWAY.
    public var idleTimeout: Double?
    /// `auth`: `token` (default) or `certificate`.
    public var auth: String?
    /// `clientCA`: CAs (PEM files) client certificates must chain to.
    public var clientCA: [String] = []
    /// `acceptAnyClientCertificate`: accept client certificates unverified.
    public var acceptAnyClientCertificate: Bool?
    /// `unregistered`: device tokens (hex) that answer 410.
    public var unregistered: [String] = []
    /// `faults`: fault rules, as `--fault` takes them.
    public var faults: [String] = []
    /// `keys`: provider keys whose signatures are verified.
    public var keys: [KeyFile] = []
    /// `bundle`: the app's bundle or project directory.
    public var bundle: String?
    /// `strings`: one `.strings`, `.stringsdict` or `.xcstrings` table instead of `bundle`.
    public var strings: String?
    /// `lang`: the languages devices render in, most preferred first.
    public var languages: [String]?
    /// `releaseTo`: `sandbox`, `production` or `HOST:PORT`.
    public var releaseTo: String?
    /// `releaseP8`: the release target's provider key.
    public var releaseP8: String?
    /// `releaseKeyId`: its key ID.
    public var releaseKeyID: String?
    /// `releaseTeamId`: its team ID.
    public var releaseTeamID: String?
    /// `releaseCert`: a `.p12` for the release target instead of a key.
    public var releaseCert: String?
    /// `releaseCaFile`: also trust this CA (PEM) when releasing.
    public var releaseCAFile: String?
    /// `releasePlaintext`: release without TLS.
    public var releasePlaintext: Bool?

    /// No settings: every default.
    public init() {}

    /// The settings in a JSON object, such as a `--config` file's contents.
    ///
    /// - Parameters:
    ///   - bytes: the JSON text.
    ///   - source: the file's name, which every message starts with.
    /// - Throws: ``MockSettingsError`` for text that is not JSON (with its line and column), a
    ///   value of the wrong kind, or an unknown key.
    public init(json bytes: [UInt8], source: String) throws(MockSettingsError) {
        let document: JSONDocument
        do throws(JSONParseError) {
            document = try JSONDocument(parsing: bytes)
        } catch {
            throw MockSettingsError("\(source):\(error.location.line):\(error.location.column): \(error.message)")
        }
        guard let object = document.root.value.objectValue else { throw MockSettingsError("\(source): expected a JSON object of settings") }
        for member in object {
            try read(member.key, member.value, source: source)
        }
    }

    private mutating func read(_ key: String, _ value: JSONValue, source: String) throws(MockSettingsError) {
        func fail(_ expected: String) -> MockSettingsError { MockSettingsError("\(source): \"\(key)\" must be \(expected)") }
        func string() throws(MockSettingsError) -> String {
            guard let text = value.stringValue else { throw fail("a string") }
            return text
        }
        func int() throws(MockSettingsError) -> Int {
            guard let number = value.numberValue, let int = Int(number.text) else { throw fail("a whole number") }
            return int
        }
        func number(_ unit: String) throws(MockSettingsError) -> Double {
            guard let number = value.numberValue, let double = Double(number.text) else { throw fail("a number of \(unit)") }
            return double
        }
        func bool() throws(MockSettingsError) -> Bool {
            guard let flag = value.boolValue else { throw fail("true or false") }
            return flag
        }
        func strings() throws(MockSettingsError) -> [String] {
            guard let array = value.arrayValue else { throw fail("an array of strings") }
            var texts: [String] = []
            for element in array {
                guard let text = element.stringValue else { throw fail("an array of strings") }
                texts.append(text)
            }
            return texts
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
        case "deviceHistories": deviceHistories = try int()
        case "reportActivityTokens": reportActivityTokens = try string()
        case "reportHeaders": reportHeaders = try strings()
        case "db": db = try string()
        case "dbKeep": dbKeep = try int()
        case "dbMaxAge": dbMaxAge = try number("hours")
        case "idleTimeout": idleTimeout = try number("seconds")
        case "auth": auth = try string()
        case "clientCA": clientCA = try strings()
        case "acceptAnyClientCertificate": acceptAnyClientCertificate = try bool()
        case "unregistered": unregistered = try strings()
        case "faults": faults = try strings()
        case "keys":
            let expected = "an array of {\"file\", \"keyId\", \"teamId\"}"
            guard let array = value.arrayValue else { throw fail(expected) }
            keys = []
            for element in array {
                guard let file = element["file"]?.stringValue, let keyID = element["keyId"]?.stringValue, let teamID = element["teamId"]?.stringValue else {
                    throw fail(expected)
                }
                keys.append(KeyFile(file: file, keyID: keyID, teamID: teamID))
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
            throw MockSettingsError("\(source): unknown setting \"\(key)\"; see herald mock --help")
        }
    }

    /// Adds `later` on top: each setting it gives replaces this one's, lists (`clientCA`,
    /// `unregistered`, `faults`, `keys`) add up, and `bundle` and `strings` are replaced as a
    /// pair (one app's strings, not one from each source).
    public mutating func merge(_ later: MockSettings) {
        func take<T>(_ path: WritableKeyPath<MockSettings, T?>) {
            if let value = later[keyPath: path] { self[keyPath: path] = value }
        }
        take(\.host); take(\.port); take(\.apiPort); take(\.channelPort); take(\.environment)
        take(\.plaintext); take(\.tlsCert); take(\.tlsKey); take(\.caOut); take(\.strict)
        take(\.storeLimit); take(\.deviceHistories); take(\.db); take(\.dbKeep); take(\.dbMaxAge); take(\.idleTimeout)
        take(\.reportActivityTokens)
        reportHeaders += later.reportHeaders
        take(\.auth); take(\.acceptAnyClientCertificate); take(\.languages)
        take(\.releaseTo); take(\.releaseP8); take(\.releaseKeyID); take(\.releaseTeamID)
        take(\.releaseCert); take(\.releaseCAFile); take(\.releasePlaintext)
        clientCA += later.clientCA
        unregistered += later.unregistered
        faults += later.faults
        keys += later.keys
        if later.bundle != nil || later.strings != nil {
            bundle = later.bundle
            strings = later.strings
        }
    }

    /// The configuration these settings describe, with `herald mock`'s defaults for the rest
    /// (ports 2197, 8197 and the environment's channel-management port), every file loaded and
    /// every value checked (``MockConfiguration/validate()`` included).
    ///
    /// - Parameters:
    ///   - environment: where `HERALD_RELEASE_CERT_PASSWORD` (the `releaseCert` password) is
    ///     read.
    ///   - name: how messages name a setting, from its JSON key (`herald mock` gives its flag,
    ///     `--db-keep` for `dbKeep`); by default the key.
    /// - Throws: ``MockSettingsError`` naming the setting and what it must be.
    public func configuration(
        environment: [String: String] = ProcessInfo.processInfo.environment, naming name: (String) -> String = { $0 }
    ) throws(MockSettingsError) -> MockConfiguration {
        var configuration = MockConfiguration()
        if let host { configuration.host = host }
        if let environment = self.environment {
            guard let value = APNsEnvironment(rawValue: environment) else {
                throw MockSettingsError("\(name("environment")) is sandbox or production, not '\(environment)'")
            }
            configuration.environment = value
        }
        for (key, value) in [("port", port), ("apiPort", apiPort), ("channelPort", channelPort)] {
            if let value, !(0...65_535).contains(value) { throw MockSettingsError("\(name(key)) must be from 0 to 65535, not \(value)") }
        }
        configuration.port = port ?? 2197
        configuration.apiPort = apiPort ?? 8197
        configuration.channelPort = channelPort ?? configuration.environment.channelManagementPort
        if plaintext == true {
            if tlsCert != nil || tlsKey != nil { throw MockSettingsError("\(name("plaintext")) and \(name("tlsCert"))/\(name("tlsKey")) exclude each other") }
            configuration.transport = .plaintext
        } else if tlsCert != nil || tlsKey != nil {
            guard let tlsCert, let tlsKey else { throw MockSettingsError("\(name("tlsCert")) and \(name("tlsKey")) go together") }
            do {
                configuration.transport = .tls(certificateChain: try NIOSSLCertificate.fromPEMFile(tlsCert), privateKey: try NIOSSLPrivateKey(file: tlsKey, format: .pem))
            } catch {
                throw MockSettingsError("cannot load \(name("tlsCert")) '\(tlsCert)' and \(name("tlsKey")) '\(tlsKey)': \(error)")
            }
        }
        switch auth ?? "token" {
        case "token": break
        case "certificate":
            if plaintext == true { throw MockSettingsError("\(name("auth")) certificate needs TLS; drop \(name("plaintext"))") }
            var roots: [NIOSSLCertificate] = []
            for file in clientCA {
                do { roots += try NIOSSLCertificate.fromPEMFile(file) } catch {
                    throw MockSettingsError("cannot read \(name("clientCA")) '\(file)': \(error)")
                }
            }
            configuration.authentication = .certificate(trustRoots: roots, acceptsAnyCertificate: acceptAnyClientCertificate ?? false)
        case let other:
            throw MockSettingsError("\(name("auth")) is token or certificate, not '\(other)'")
        }
        if strict == true { configuration.strict = true }
        if let storeLimit {
            guard storeLimit >= 1 else { throw MockSettingsError("\(name("storeLimit")) must be at least 1") }
            configuration.storeCapacity = storeLimit
        }
        if let deviceHistories {
            guard deviceHistories >= 1 else { throw MockSettingsError("\(name("deviceHistories")) must be at least 1") }
            configuration.deviceHistories = deviceHistories
        }
        if let report = reportActivityTokens {
            guard let url = URL(string: report), ["http", "https"].contains(url.scheme ?? ""), url.host != nil else {
                throw MockSettingsError("\(name("reportActivityTokens")) is an http or https URL, such as http://127.0.0.1:8080/v1/apps/demo/activity-tokens; '\(report)' is not")
            }
            var headers: [(String, String)] = []
            for line in reportHeaders {
                guard let colon = line.firstIndex(of: ":"), !line[..<colon].trimmingCharacters(in: .whitespaces).isEmpty,
                    !line[..<colon].contains(where: { $0 == " " || $0 == "\r" || $0 == "\n" }), !line.contains(where: { $0 == "\r" || $0 == "\n" })
                else {
                    throw MockSettingsError("\(name("reportHeaders")): '\(line)' is not a header; write it as 'Name: value', such as 'Authorization: Bearer hgk_…'")
                }
                headers.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
            }
            configuration.activityTokenReport = ActivityTokenReport(url: report, headers: headers)
        } else if !reportHeaders.isEmpty {
            throw MockSettingsError("\(name("reportHeaders")) needs \(name("reportActivityTokens")) URL")
        }
        if let db {
            guard !db.isEmpty else { throw MockSettingsError("\(name("db")) needs a file name") }
            configuration.databasePath = db
        }
        if let dbKeep {
            guard dbKeep >= 1 else { throw MockSettingsError("\(name("dbKeep")) must be at least 1") }
            guard db != nil else { throw MockSettingsError("\(name("dbKeep")) needs \(name("db")) FILE") }
            configuration.databaseKeepCount = dbKeep
        }
        if let dbMaxAge {
            guard dbMaxAge > 0, dbMaxAge <= 876_000 else {
                throw MockSettingsError("\(name("dbMaxAge")) must be a positive number of hours, at most 876000 (a hundred years)")
            }
            guard db != nil else { throw MockSettingsError("\(name("dbMaxAge")) needs \(name("db")) FILE") }
            configuration.databaseMaximumAge = .milliseconds(Int64(dbMaxAge * 3_600_000))
        }
        if let idleTimeout {
            guard idleTimeout > 0, idleTimeout <= 86_400 else {
                throw MockSettingsError("\(name("idleTimeout")) must be a number of seconds above 0, at most 86400 (a day)")
            }
            configuration.idleTimeout = .milliseconds(Int64(idleTimeout * 1000))
        }
        for hex in unregistered {
            do throws(DeviceTokenError) { configuration.unregisteredTokens.append(try DeviceToken(hex: hex)) } catch {
                throw MockSettingsError("\(name("unregistered")) '\(hex)': \(error)")
            }
        }
        for text in faults {
            do throws(FaultRuleError) { configuration.faults.append(try FaultRule(parsing: text)) } catch {
                throw MockSettingsError("\(name("faults")): \(error)")
            }
        }
        for key in keys {
            do {
                configuration.keys.append(try ProviderPublicKey(contentsOfFile: key.file, keyID: try KeyID(key.keyID), teamID: try TeamID(key.teamID)))
            } catch {
                throw MockSettingsError("\(name("keys")) '\(key.file)': \(error)")
            }
        }
        configuration.localization = try localization(name)
        if let languages {
            guard !languages.isEmpty else { throw MockSettingsError("\(name("lang")) needs at least one language, such as en or fr-CA,fr") }
            configuration.languages = languages
        }
        configuration.releaseTarget = try releaseTarget(environment: environment, name)
        do throws(ConfigurationProblem) {
            try configuration.validate()
        } catch {
            throw MockSettingsError("\(error)")
        }
        return configuration
    }

    /// The app's strings from `bundle` or `strings`.
    private func localization(_ name: (String) -> String) throws(MockSettingsError) -> LocalizationBundle? {
        if bundle != nil && strings != nil { throw MockSettingsError("\(name("bundle")) and \(name("strings")) exclude each other: a directory, or one table") }
        guard let path = bundle ?? strings else { return nil }
        let setting = name(bundle != nil ? "bundle" : "strings")
        var isDirectory: ObjCBool = false
        if strings != nil, FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
            throw MockSettingsError("\(setting) takes one table file; '\(path)' is a directory (use \(name("bundle")))")
        }
        do throws(LocalizationFileError) {
            return try LocalizationBundle.load(path: path)
        } catch {
            throw MockSettingsError("\(setting) '\(path)': \(error.message)")
        }
    }

    /// Where the inbox's Release sends, from `releaseTo` and its credentials.
    private func releaseTarget(environment: [String: String], _ name: (String) -> String) throws(MockSettingsError) -> ReleaseTarget? {
        let given = [releaseP8, releaseKeyID, releaseTeamID, releaseCert, releaseCAFile].contains { $0 != nil } || releasePlaintext == true
        guard let releaseTo else {
            if given { throw MockSettingsError("the release credentials (\(name("releaseP8")), \(name("releaseCert")), …) need \(name("releaseTo")) sandbox|production|HOST:PORT") }
            return nil
        }
        let server: APNsClientConfiguration.Server
        switch releaseTo {
        case "sandbox": server = .sandbox
        case "production": server = .production
        default:
            guard let colon = releaseTo.lastIndex(of: ":"), let port = Int(releaseTo[releaseTo.index(after: colon)...]), (1...65_535).contains(port) else {
                throw MockSettingsError("\(name("releaseTo")) is sandbox, production or HOST:PORT (such as 127.0.0.1:2297), not '\(releaseTo)'")
            }
            server = .custom(host: String(releaseTo[..<colon]).trimmingCharacters(in: CharacterSet(charactersIn: "[]")), port: port)
        }
        let credentials: APNsClientConfiguration.Credentials
        if let releaseP8 {
            guard let releaseKeyID else { throw MockSettingsError("\(name("releaseP8")) needs \(name("releaseKeyId")) ID (the 10 characters in the key's name, AuthKey_<ID>.p8)") }
            guard let releaseTeamID else { throw MockSettingsError("\(name("releaseP8")) needs \(name("releaseTeamId")) ID (your team's 10-character ID in the Apple Developer account)") }
            do {
                credentials = .token(try ProviderSigningKey(contentsOfFile: releaseP8, keyID: try KeyID(releaseKeyID), teamID: try TeamID(releaseTeamID)))
            } catch {
                throw MockSettingsError("\(error)")
            }
        } else if let releaseCert {
            let variable = "HERALD_RELEASE_CERT_PASSWORD"
            do {
                credentials = .certificate(try APNsCertificateIdentity(pkcs12File: releaseCert, passphrase: environment[variable] ?? ""))
            } catch {
                throw MockSettingsError("\(error)\(environment[variable] == nil ? " (no password in $\(variable))" : "")")
            }
        } else {
            throw MockSettingsError(
                "no credentials for \(name("releaseTo")): \(name("releaseP8")) FILE \(name("releaseKeyId")) ID \(name("releaseTeamId")) ID (token auth) or \(name("releaseCert")) FILE.p12 (certificate auth)")
        }
        var client = APNsClientConfiguration(server: server, credentials: credentials)
        client.plaintext = releasePlaintext == true
        client.lintsBeforeSending = true
        if let releaseCAFile {
            guard let pem = try? String(contentsOfFile: releaseCAFile, encoding: .utf8), pem.contains("BEGIN CERTIFICATE") else {
                throw MockSettingsError("\(name("releaseCaFile")): cannot read a PEM certificate from '\(releaseCAFile)'")
            }
            client.additionalTrustRootsPEM = [pem]
        }
        return ReleaseTarget(client: client)
    }
}

/// Settings that cannot make a configuration: the message names the setting (as
/// ``MockSettings/configuration(environment:naming:)`` was told to) and what it must be.
public struct MockSettingsError: Error, CustomStringConvertible, Sendable {
    /// What is wrong and what would do.
    public var message: String
    /// The message.
    public var description: String { message }

    init(_ message: String) { self.message = message }
}
