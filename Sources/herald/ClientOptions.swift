import ArgumentParser
import Foundation
import HeraldAuth
import HeraldClient
import HeraldProtocol

/// Provider credentials from flags or the environment: a `.p8` key with its key ID and team ID,
/// or a `.p12` certificate.
struct CredentialOptions: ParsableArguments {
    @Option(name: .customLong("p8"), help: ArgumentHelp("The provider key (.p8) for token auth (or $HERALD_P8).", valueName: "FILE"))
    var p8: String?

    @Option(name: .customLong("key-id"), help: ArgumentHelp("The key's 10-character ID (or $HERALD_KEY_ID).", valueName: "ID"))
    var keyID: String?

    @Option(name: .customLong("team-id"), help: ArgumentHelp("Your 10-character team ID (or $HERALD_TEAM_ID).", valueName: "ID"))
    var teamID: String?

    @Option(name: .customLong("cert"), help: ArgumentHelp("A .p12 certificate for certificate auth (or $HERALD_CERT).", valueName: "FILE"))
    var certificate: String?

    @Option(name: .customLong("password-env"), help: ArgumentHelp("The environment variable holding the .p12 password (default HERALD_CERT_PASSWORD).", valueName: "VAR"))
    var passwordVariable: String?

    static let environment = ProcessInfo.processInfo.environment

    /// The signing key, from flags or the environment; nil when certificate auth is chosen.
    func signingKey() throws(UsageError) -> ProviderSigningKey? {
        let env = Self.environment
        return try Self.signingKey(
            p8: p8 ?? env["HERALD_P8"], keyID: keyID ?? env["HERALD_KEY_ID"], teamID: teamID ?? env["HERALD_TEAM_ID"],
            certificate: certificate ?? env["HERALD_CERT"], flags: "--p8, --key-id, --team-id",
            orElse: "--cert FILE.p12 (certificate auth), or set HERALD_P8, HERALD_KEY_ID and HERALD_TEAM_ID")
    }

    /// The client credentials.
    func credentials() throws(UsageError) -> APNsClientConfiguration.Credentials {
        if let key = try signingKey() { return .token(key) }
        return try Self.certificateCredentials(
            path: certificate ?? Self.environment["HERALD_CERT"] ?? "", passwordVariable: passwordVariable ?? "HERALD_CERT_PASSWORD")
    }

    /// A key from a `.p8` file with its key ID and team ID; `nil` when a certificate is given
    /// instead. `flags` names the options in messages (`--release-p8, …`), `orElse` the other
    /// ways to give credentials.
    static func signingKey(p8: String?, keyID: String?, teamID: String?, certificate: String?, flags: String, orElse: String) throws(UsageError) -> ProviderSigningKey? {
        let names = flags.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        if p8 == nil, certificate != nil { return nil }
        guard let p8 else {
            throw UsageError(message: "no credentials: pass \(names[0]) FILE \(names[1]) ID \(names[2]) ID (token auth) or \(orElse)")
        }
        guard let keyID else { throw UsageError(message: "\(names[0]) needs \(names[1]) ID (the 10 characters in the key's name, AuthKey_<ID>.p8)") }
        guard let teamID else { throw UsageError(message: "\(names[0]) needs \(names[2]) ID (your team's 10-character ID in the Apple Developer account)") }
        // Apple names the file after its key: AuthKey_<key ID>.p8. Another ID would be refused
        // by APNs (InvalidProviderToken) for every push.
        if let named = ProviderSigningKey.keyID(inFileName: p8), named != keyID {
            throw UsageError(message: "\(names[0]) \(p8) is the key \(named) (Apple names it AuthKey_<key ID>.p8), but \(names[1]) says \(keyID): give \(names[1]) \(named), or the file of key \(keyID)")
        }
        do {
            return try ProviderSigningKey(contentsOfFile: p8, keyID: try KeyID(keyID), teamID: try TeamID(teamID))
        } catch {
            throw UsageError(message: "\(error)")
        }
    }

    /// A `.p12` certificate, its password read from the environment variable `passwordVariable`.
    static func certificateCredentials(path: String, passwordVariable: String) throws(UsageError) -> APNsClientConfiguration.Credentials {
        let password = environment[passwordVariable] ?? ""
        do {
            return .certificate(try APNsCertificateIdentity(pkcs12File: path, passphrase: password))
        } catch {
            throw UsageError(message: "\(error)\(environment[passwordVariable] == nil ? " (no password in $\(passwordVariable))" : "")")
        }
    }

    /// Extra trusted CA certificates from a PEM file.
    static func trustedPEM(_ path: String, flag: String) throws(UsageError) -> String {
        guard let pem = try? String(contentsOfFile: path, encoding: .utf8), pem.contains("BEGIN CERTIFICATE") else {
            throw UsageError(message: "\(flag): cannot read a PEM certificate from '\(path)'")
        }
        return pem
    }
}

/// Where requests go: Apple's sandbox or production, or a host and port (a `herald mock`).
struct ServerOptions: ParsableArguments {
    @Flag(help: "Send to Apple's sandbox (api.sandbox.push.apple.com), for development builds.")
    var sandbox = false

    @Flag(help: "Send to Apple's production service (api.push.apple.com).")
    var production = false

    @Option(help: ArgumentHelp("Another server, such as a herald mock.", valueName: "HOST"))
    var host: String?

    @Option(help: ArgumentHelp("The port (443 or 2197 for Apple; the mock's port).", valueName: "PORT"))
    var port: Int?

    @Option(name: .customLong("ca-file"), help: ArgumentHelp("Also trust this CA certificate (PEM), such as the one herald mock writes.", valueName: "PEM"))
    var caFile: String?

    @Flag(help: "HTTP/2 without TLS (for herald mock --plaintext).")
    var plaintext = false

    /// The configuration for these options and `credentials`.
    func configuration(credentials: APNsClientConfiguration.Credentials) throws(UsageError) -> APNsClientConfiguration {
        let chosen = [sandbox, production, host != nil].filter { $0 }.count
        guard chosen == 1 else {
            throw UsageError(message: chosen == 0
                ? "where to? pass --sandbox (development builds), --production, or --host HOST --port PORT (a herald mock)"
                : "pass one of --sandbox, --production and --host")
        }
        let server: APNsClientConfiguration.Server
        if sandbox {
            server = .sandbox
        } else if production {
            server = .production
        } else {
            guard let port else { throw UsageError(message: "--host needs --port (the mock prints its port when it starts)") }
            server = .custom(host: host!, port: port)
        }
        var configuration = APNsClientConfiguration(server: server, credentials: credentials)
        if host == nil, let port {
            guard port == APNsEnvironment.port || port == APNsEnvironment.alternatePort else {
                throw UsageError(message: "--port for Apple's servers is \(APNsEnvironment.port) or \(APNsEnvironment.alternatePort), not \(port)")
            }
            configuration.port = port
        }
        configuration.plaintext = plaintext
        if let caFile {
            configuration.additionalTrustRootsPEM = [try CredentialOptions.trustedPEM(caFile, flag: "--ca-file")]
        }
        return configuration
    }
}

/// Device tokens from `--token` and `--tokens-file`.
enum TokenList {
    static func read(tokens: [String], file: String?) throws(UsageError) -> [DeviceToken] {
        var result: [DeviceToken] = []
        for text in tokens {
            do {
                result.append(try DeviceToken(hex: text))
            } catch {
                throw UsageError(message: "--token \(text): \(error)")
            }
        }
        if let file {
            // Lines scanned as bytes (Foundation's trimming cost a quarter of a 100,000-token
            // send): spaces, tabs and a CR around a token are ignored.
            let bytes = try InputFile(argument: file).read()
            result.reserveCapacity(result.count + bytes.count / 65)
            var lineNumber = 0
            var start = 0
            while start <= bytes.count {
                let end = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.count
                lineNumber += 1
                var low = start
                var high = end
                func blank(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\r") }
                while low < high, blank(bytes[low]) { low += 1 }
                while high > low, blank(bytes[high - 1]) { high -= 1 }
                start = end + 1
                if low == high || bytes[low] == UInt8(ascii: "#") { continue }
                do {
                    result.append(try DeviceToken(hex: String(decoding: bytes[low..<high], as: UTF8.self)))
                } catch {
                    throw UsageError(message: "\(file):\(lineNumber): \(error)")
                }
            }
        }
        guard !result.isEmpty else { throw UsageError(message: "no device token: pass --token HEX (repeatable) or --tokens-file FILE (one per line)") }
        return result
    }
}
