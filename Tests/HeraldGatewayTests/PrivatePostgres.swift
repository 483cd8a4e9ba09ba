import Foundation
import HeraldTestSupport
import NIOPosix
import Testing

/// A PostgreSQL server of the test's own, which the test stops and starts: `initdb` in a
/// temporary folder, its own port and socket folder, `trust` authentication for the role
/// `herald`. The server runs in the foreground under ``RunningProgram`` (so it dies with the
/// test process); ``stop()`` sends SIGQUIT, PostgreSQL's immediate shutdown (what
/// `pg_ctl stop -m immediate` sends): connections drop at once, nothing is checkpointed.
///
/// Needs Debian's `postgresql` (the server's binaries); as root, the server runs as the
/// `postgres` user (it refuses root).
final class PrivatePostgres: @unchecked Sendable {  // used by one test at a time
    let port: Int
    private let directory: String
    private let binaries: String
    private var server: RunningProgram?

    /// `postgres://herald@127.0.0.1:<port>/postgres`, without TLS.
    var url: String { "postgres://herald@127.0.0.1:\(port)/postgres?sslmode=disable" }

    init() async throws {
        guard let binaries = Self.findBinaries() else {
            let message = "PostgreSQL's server (initdb, postgres) is not installed: apt-get install postgresql (.ci/run installs it)"
            if ExternalTools.isCI { throw ExternalTools.Failure(description: message) }
            try Test.cancel(Comment(rawValue: "skipped: " + message))
        }
        self.binaries = binaries
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(host: "127.0.0.1", port: 0).get()
        port = channel.localAddress?.port ?? 0
        try await channel.close()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-pg-\(UUID().uuidString.prefix(8))").path
        for folder in [directory, directory + "/data", directory + "/socket"] {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        }
        if getuid() == 0 {
            for folder in [directory + "/data", directory + "/socket"] {
                try FileManager.default.setAttributes([.ownerAccountName: "postgres"], ofItemAtPath: folder)
            }
        }
        let initdb = try await ExternalTools.executeInBackground(
            Self.asServerUser(binaries + "/initdb").0, Self.asServerUser(binaries + "/initdb").1 + ["-D", directory + "/data", "-U", "herald", "--auth=trust", "-E", "UTF8", "--no-sync"],
            timeout: .seconds(120))
        guard initdb.status == 0 else { throw ExternalTools.Failure(description: "initdb failed: \(initdb.stderr)") }
        try await start()
    }

    deinit {
        server?.process.terminate()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Starts the server and waits until it accepts connections.
    func start() async throws {
        let (command, prefix) = Self.asServerUser(binaries + "/postgres")
        let program = try RunningProgram(command, prefix + [
            "-D", directory + "/data", "-p", String(port), "-k", directory + "/socket", "-c", "listen_addresses=127.0.0.1",
            "-c", "fsync=off", "-c", "max_connections=100",
        ])
        let output = await program.read(until: "ready to accept connections", timeout: .seconds(60))
        guard output.contains("ready to accept connections") else {
            throw ExternalTools.Failure(description: "postgres did not start: \(output)")
        }
        server = program
    }

    /// Runs SQL through psql; its unaligned output.
    func query(_ sql: String) async throws -> String {
        try await PostgresTestDatabase.psqlInBackground(url, sql)
    }

    /// Immediate shutdown (SIGQUIT): every connection drops at once.
    func stop() async {
        guard let server else { return }
        server.process.signal(SIGQUIT)
        _ = await server.waitForExit(timeout: .seconds(30))
        self.server = nil
    }

    /// The command that runs `tool` as the `postgres` user when this process is root (the
    /// server refuses root), with the arguments before the tool's own.
    private static func asServerUser(_ tool: String) -> (String, [String]) {
        guard getuid() == 0 else { return (tool, []) }
        // The parent-death signal again: changing the user clears the one set before.
        return ("/usr/bin/setpriv", ["--reuid=postgres", "--regid=postgres", "--init-groups", "--pdeathsig", "KILL", "--", tool])
    }

    private static func findBinaries() -> String? {
        if let initdb = ExternalTools.find("initdb") { return (initdb as NSString).deletingLastPathComponent }
        let root = "/usr/lib/postgresql"
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        for version in versions.sorted(by: { (Int($0) ?? 0) > (Int($1) ?? 0) }) {
            let bin = "\(root)/\(version)/bin"
            if FileManager.default.isExecutableFile(atPath: bin + "/initdb") { return bin }
        }
        return nil
    }
}
