import Foundation
@testable import HeraldGateway
import HeraldJSON
import HeraldTestSupport
import Testing

/// HTTPS for the API and the console (`GatewayConfiguration.tls`, `herald serve
/// --tls-certificate --tls-key`), with a CA and a server certificate made by OpenSSL in the test;
/// curl and Chromium, trusting that CA, are the clients.
@Suite(.serialized) struct GatewayTLSTests {
    /// A CA, a server certificate it signed for 127.0.0.1 and localhost, and a second key that
    /// is not the certificate's, made by the `openssl` command.
    struct Certificates {
        let directory: TemporaryDirectory
        var ca: String { directory.path("ca.pem") }
        var certificate: String { directory.path("server.pem") }
        var key: String { directory.path("server.key") }
        var otherKey: String { directory.path("other.key") }

        init() throws {
            let openssl = try ExternalTools.require("openssl", package: "openssl")
            directory = try TemporaryDirectory()
            let folder = directory.path("")
            try directory.write("server.ext", "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\nbasicConstraints=critical,CA:FALSE\n")
            let steps: [[String]] = [
                ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2",
                 "-subj", "/CN=Herald test CA", "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"],
                ["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1"],
                ["x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "server.pem", "-days", "2", "-extfile", "server.ext"],
                ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-out", "other.key"],
            ]
            for step in steps {
                // openssl writes relative to its working directory: run it through `sh -c 'cd …'`.
                let command = "cd '\(folder)' && '\(openssl)' " + step.map { "'\($0)'" }.joined(separator: " ")
                _ = try ExternalTools.run("/bin/sh", ["-c", command])
            }
        }
    }

    static func start(_ certificates: Certificates) async throws -> GatewayHarness {
        try await GatewayHarness.start(gateway: { $0.tls = .init(certificatePath: certificates.certificate, keyPath: certificates.key) })
    }

    /// curl, trusting the test's CA: HTTP/1.1 and HTTP/2 chosen by ALPN, the API with a key and
    /// the console with its policy; refused without the CA; plain HTTP gets no answer.
    @Test func theAPIAndTheConsoleOverHTTPS() async throws {
        let curl = try ExternalTools.require("curl", package: "curl")
        let certificates = try Certificates()
        let harness = try await Self.start(certificates)
        defer { Task { await harness.stop() } }
        #expect(harness.gateway.address == "https://127.0.0.1:\(harness.port)/")
        let base = "https://127.0.0.1:\(harness.port)"
        for (flag, version) in [("--http1.1", "1.1"), ("--http2", "2")] {
            let health = try await ExternalTools.executeInBackground(curl, ["-sS", "--cacert", certificates.ca, flag, "-o", "/dev/null", "-w", "%{http_version} %{http_code}", base + "/healthz"])
            #expect(String(decoding: health.stdout, as: UTF8.self) == "\(version) 200", "\(flag): \(health.stderr)")
            let key = try await ExternalTools.executeInBackground(
                curl, ["-sS", "--cacert", certificates.ca, flag, "-H", "Authorization: Bearer \(GatewayHarness.adminKey)", base + "/v1/key"])
            #expect(try JSONDocument(parsing: key.stdout).root["apps"]?.stringValue == "*", "\(flag): \(String(decoding: key.stdout, as: UTF8.self)) \(key.stderr)")
            let console = try await ExternalTools.executeInBackground(curl, ["-sS", "--cacert", certificates.ca, flag, "-D", "-", "-o", "/dev/null", base + "/console/"])
            #expect(String(decoding: console.stdout, as: UTF8.self).lowercased().contains("content-security-policy: default-src 'none'"), "\(flag)")
        }
        let untrusted = try await ExternalTools.executeInBackground(curl, ["-sS", "-o", "/dev/null", base + "/healthz"])
        #expect(untrusted.status == 60, "curl without the CA: \(untrusted.status) \(untrusted.stderr)")
        let plain = try await ExternalTools.executeInBackground(curl, ["-sS", "--max-time", "5", "-o", "/dev/null", "-w", "%{http_code}", "http://127.0.0.1:\(harness.port)/healthz"])
        #expect(plain.status != 0 && String(decoding: plain.stdout, as: UTF8.self) != "200", "plain HTTP to the HTTPS port")
    }

    /// Files that cannot serve HTTPS fail the start, naming the file and what is wrong.
    @Test func unusableFilesAreNamed() async throws {
        let certificates = try Certificates()
        try certificates.directory.write("notes.txt", "not a certificate\n")
        let cases: [(GatewayConfiguration.TLSFiles, String)] = [
            (.init(certificatePath: certificates.directory.path("missing.pem"), keyPath: certificates.key), "missing.pem: cannot read the certificate"),
            (.init(certificatePath: certificates.directory.path("notes.txt"), keyPath: certificates.key), "notes.txt: not a PEM certificate chain"),
            (.init(certificatePath: certificates.certificate, keyPath: certificates.directory.path("notes.txt")), "notes.txt: not a PEM private key"),
            (.init(certificatePath: certificates.certificate, keyPath: certificates.otherKey), "other.key is not the private key of the first certificate in"),
        ]
        for (files, expected) in cases {
            do {
                let harness = try await GatewayHarness.start(gateway: { $0.tls = files })
                await harness.stop()
                Issue.record("the gateway started with \(files)")
            } catch let error as GatewayStartError {
                #expect("\(error)".contains("cannot serve HTTPS") && "\(error)".contains(expected), "\(error)")
            }
        }
    }

    /// Chromium with an NSS database that trusts the test's CA loads the console over HTTP/2,
    /// without the plain-HTTP banner; without that trust it refuses the certificate.
    @Test(.heavy) func chromiumTrustingTheCALoadsTheConsole() async throws {
        let (chromium, python, _) = try WebPageChecks.browserTools()
        let certutil = try ExternalTools.require("certutil", package: "libnss3-tools")
        let certificates = try Certificates()
        let homes = try TemporaryDirectory()
        let database = "sql:" + homes.path("trusting/.pki/nssdb")
        try FileManager.default.createDirectory(atPath: homes.path("trusting/.pki/nssdb"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: homes.path("empty"), withIntermediateDirectories: true)
        _ = try await ExternalTools.runInBackground(certutil, ["-N", "-d", database, "--empty-password"])
        _ = try await ExternalTools.runInBackground(certutil, ["-A", "-d", database, "-t", "C,,", "-n", "herald-test-ca", "-i", certificates.ca])
        let harness = try await Self.start(certificates)
        defer { Task { await harness.stop() } }
        let out = homes.path("result.json")
        let run = try await ExternalTools.executeInBackground(
            python, [Fixtures.url("console/tls.py").path, chromium, "https://127.0.0.1:\(harness.port)/console/", homes.path("trusting"), homes.path("empty"), out],
            timeout: .seconds(120))
        #expect(run.status == 0, "tls.py: \(run.stderr)")
        let result = try JSONDocument(parsing: try homes.read("result.json")).root
        #expect(result["navigationError"]?.stringValue == nil)
        #expect(result["trusted"]?["protocol"]?.stringValue == "https:" && result["trusted"]?["alpn"]?.stringValue == "h2")
        #expect(result["trusted"]?["banner"]?.boolValue == false)
        #expect(result["errors"]?.count == 0, "\(String(describing: result["errors"]?.value))")
        #expect(result["untrusted"]?["error"]?.stringValue == "net::ERR_CERT_AUTHORITY_INVALID")
    }
}
