import Foundation
import HeraldAuth
import HeraldProtocol
import HeraldTestSupport
import Testing

/// `herald mock` as a user starts it: the banner, a curl that works as pasted (from anywhere,
/// installed or not), SIGTERM, the config file, and flags refused with what would do.
@Suite struct MockCommandTests {
    @Test func heraldMockCommandStartsPrintsAndStopsOnSIGTERM() async throws {
        let herald = Fixtures.heraldBinary
        let directory = try TemporaryDirectory()
        let mock = try HeraldProcess.start(["mock", "--port", "0", "--api-port", "0", "--channel-port", "0", "--ca-out", directory.path("ca.pem"), "--fault", "status=503,topic=broken.app"])
        // Read the banner until the curl example's last line.
        let banner = await mock.read(until: "/3/device/", timeout: .seconds(30))
        #expect(banner.contains("herald mock \(HeraldVersion.description): sandbox APNs on https://127.0.0.1:"), "\(banner)")
        #expect(banner.contains("NOT verified"), "no --key: the start-up says signatures are not checked")
        #expect(banner.contains("fault 1    status=503/ServiceUnavailable,topic=broken.app"))
        #expect(FileManager.default.fileExists(atPath: directory.path("ca.pem")))
        // The printed curl command works as pasted (run through sh).
        let start = try #require(banner.range(of: "curl --http2"))
        let command = String(banner[start.lowerBound...]).trimmingCharacters(in: .whitespacesAndNewlines)
        let sh = try await ExternalTools.executeInBackground("/bin/sh", ["-c", command.replacingOccurrences(of: "curl --http2", with: "curl -s -o /dev/null -w %{http_code} --max-time 10 --http2")], timeout: .seconds(30))
        #expect(String(decoding: sh.stdout, as: UTF8.self) == "200", "\(command)\n\(sh.stderr)")
        let (status, rest) = try await mock.stop()
        #expect(status == 0)
        #expect(rest.contains("herald mock: stopped"))

        // Installed (`herald` on the PATH), started in one folder with relative paths and a
        // provider key: the curl command signs with `herald token` and works pasted elsewhere.
        let key = ProviderSigningKey.generate(keyID: try KeyID("ABC123DEFG"), teamID: try TeamID("DEF123GHIJ"))
        try directory.write("start/AuthKey_ABC123DEFG.p8", key.pkcs8PEM)
        try FileManager.default.createDirectory(atPath: directory.path("bin"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: directory.path("bin/herald"), withDestinationPath: herald)
        let path = directory.path("bin") + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        let keyed = try RunningProgram("/bin/sh", ["-c", """
            cd '\(directory.path("start"))' && exec herald mock --port 0 --api-port 0 --channel-port 0 --ca-out ca.pem \
                --key AuthKey_ABC123DEFG.p8 --key-id ABC123DEFG --team-id DEF123GHIJ
            """], environment: ["PATH": path])
        let keyedBanner = await keyed.read(until: "/3/device/", timeout: .seconds(30))
        let keyedStart = try #require(keyedBanner.range(of: "curl --http2"), "\(keyedBanner)")
        let keyedCommand = String(keyedBanner[keyedStart.lowerBound...]).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(keyedCommand.contains("--cacert \(directory.path("start/ca.pem"))"), "\(keyedCommand)")
        #expect(keyedCommand.contains("$(herald token --p8 \(directory.path("start/AuthKey_ABC123DEFG.p8")) --key-id ABC123DEFG"), "\(keyedCommand)")
        let pasted = try await ExternalTools.executeInBackground(
            "/bin/sh", ["-c", "cd / && " + keyedCommand.replacingOccurrences(of: "curl --http2", with: "curl -s -o /dev/null -w %{http_code} --max-time 10 --http2")],
            environment: ProcessInfo.processInfo.environment.merging(["PATH": path]) { $1 }, timeout: .seconds(30))
        #expect(String(decoding: pasted.stdout, as: UTF8.self) == "200", "\(keyedCommand)\n\(pasted.stderr)")
        _ = try await keyed.stop()
    }

    @Test func heraldMockReadsAConfigFile() async throws {
        let directory = try TemporaryDirectory()
        try directory.write("mock.json", """
            {"port": 0, "apiPort": 0, "channelPort": 0, "plaintext": true, "strict": true, "environment": "production",
             "faults": ["status=503,topic=broken.app"], "storeLimit": 50, "idleTimeout": 30}
            """)
        let program = try HeraldProcess.start(["mock", "--config", directory.path("mock.json"), "--fault", "hang,topic=slow.app"])
        defer { program.process.terminate() }
        let banner = await program.read(until: "--http2-prior-knowledge", timeout: .seconds(30))
        #expect(banner.contains("herald mock \(HeraldVersion.description): production APNs on http://127.0.0.1:"), "\(banner)")
        #expect(banner.contains("strict     on"))
        #expect(banner.contains("fault 1    status=503/ServiceUnavailable,topic=broken.app"))
        #expect(banner.contains("fault 2    hang,topic=slow.app"), "flags add to the file's rules")
        #expect(banner.contains("--http2-prior-knowledge"))
    }

    /// Thirty flags read in sections: each flag stands under its section's title, in this order.
    @Test func helpGroupsTheFlags() async throws {
        let result = try await HeraldProcess.runInBackground(["mock", "--help"], timeout: .seconds(30))
        #expect(result.status == 0)
        let help = String(decoding: result.stdout, as: UTF8.self)
        let sections: [(title: String, flags: [String])] = [
            ("LISTENING:", ["--host", "--port", "--api-port", "--channel-port", "--plaintext", "--tls-cert", "--tls-key", "--ca-out"]),
            ("PROVIDER AUTHENTICATION:", ["--auth", "--client-ca", "--accept-any-client-certificate", "--key", "--key-id", "--team-id"]),
            ("ANSWERS:", ["--environment", "--unregistered", "--fault", "--strict", "--idle-timeout"]),
            ("STORAGE:", ["--store-limit", "--device-histories", "--db", "--db-keep", "--db-max-age"]),
            ("LIVE ACTIVITIES:", ["--report-activity-tokens", "--report-header"]),
            ("APP STRINGS:", ["--bundle", "--strings", "--lang"]),
            ("RELEASE FROM THE INBOX:", ["--release-to", "--release-p8", "--release-key-id", "--release-team-id", "--release-cert", "--release-ca-file", "--release-plaintext"]),
            ("OPTIONS:", ["--config", "--version"]),
        ]
        let lines = help.split(separator: "\n").map(String.init)
        var section = ""
        var found: [String: String] = [:]
        for line in lines {
            if !line.hasPrefix(" "), line.hasSuffix(":") { section = line; continue }
            if line.hasPrefix("  --"), let flag = line.dropFirst(2).split(separator: " ").first { found[String(flag)] = section }
        }
        for (title, flags) in sections {
            #expect(help.contains("\n\(title)\n"), "\(title)")
            for flag in flags { #expect(found[flag] == title, "\(flag) under \(found[flag] ?? "nothing"), not \(title)") }
        }
        #expect(found.count == sections.map(\.flags.count).reduce(0, +), "no flag outside the sections: \(found.keys.sorted())")
    }

    @Test func heraldMockRejectsBadFlagsClearly() async throws {
        let cases: [([String], String)] = [
            (["--environment", "staging"], "sandbox or production"),
            (["--key", "/nonexistent.p8", "--key-id", "ABC123DEFG", "--team-id", "DEF123GHIJ"], "/nonexistent.p8"),
            (["--key", "a.p8"], "--key-id and --team-id"),
            (["--fault", "status=999"], "between 200 and 599"),
            (["--unregistered", "xyz"], "--unregistered 'xyz'"),
            (["--plaintext", "--auth", "certificate"], "needs TLS"),
            (["--config", "/nonexistent.json"], "cannot read '/nonexistent.json'"),
            (["--idle-timeout", "0"], "--idle-timeout must be a number of seconds above 0"),
            (["--idle-timeout", "1e300"], "at most 86400"),
            (["--db", "/nonexistent/x.db", "--db-max-age", "1e300"], "at most 876000"),
            (["--store-limit", "0"], "--store-limit must be at least 1"),
            (["--bundle", "a", "--strings", "b"], "--bundle and --strings cannot be used together"),
            (["--lang", " , "], "--lang needs at least one language"),
        ]
        for (arguments, message) in cases {
            let result = try await HeraldProcess.runInBackground(["mock", "--port", "0", "--api-port", "0"] + arguments, timeout: .seconds(30))
            #expect(result.status == 2, "\(arguments)")
            #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
        }
        let directory = try TemporaryDirectory()
        try directory.write("bad.json", "{\"port\": \"eighty\"}")
        let result = try await HeraldProcess.runInBackground(["mock", "--config", directory.path("bad.json")], timeout: .seconds(30))
        #expect(result.status == 2 && result.stderr.contains("\"port\" must be a whole number"), "\(result.stderr)")
    }
}
