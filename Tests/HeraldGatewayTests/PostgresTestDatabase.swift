import Foundation
import HeraldTestSupport
import Testing

/// A fresh PostgreSQL database for one test, made on the server `HERALD_TEST_POSTGRES_URL` names
/// (a role that may create databases) and dropped afterwards. `.ci/run` starts Debian's
/// PostgreSQL and sets the variable; without it the test is skipped (failed under CI=true).
final class PostgresTestDatabase: @unchecked Sendable {  // immutable after init
    static let notConfigured =
        "PostgreSQL is not configured: install Debian's postgresql and set HERALD_TEST_POSTGRES_URL=postgres://user:password@127.0.0.1:5432/db (.ci/run does)"

    /// Whether tests on PostgreSQL run here: it is configured, or this is CI (where a missing
    /// server is a failure, not a skip).
    static var isAvailable: Bool {
        !(ProcessInfo.processInfo.environment["HERALD_TEST_POSTGRES_URL"] ?? "").isEmpty || ExternalTools.isCI
    }

    let url: String
    private let admin: String
    private let name: String

    /// Creates the database (psql waited for off Swift's cooperative threads: two tests
    /// blocking one each would stall every other test's tasks).
    init() async throws {
        guard let admin = ProcessInfo.processInfo.environment["HERALD_TEST_POSTGRES_URL"], !admin.isEmpty else {
            if ExternalTools.isCI { throw ExternalTools.Failure(description: Self.notConfigured) }
            try Test.cancel(Comment(rawValue: "skipped: " + Self.notConfigured))
        }
        _ = try ExternalTools.require("psql", package: "postgresql-client")
        self.admin = admin
        name = "herald_test_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(12).lowercased()
        _ = try await Self.psqlInBackground(admin, "CREATE DATABASE \(name)")
        var components = URLComponents(string: admin)!
        components.path = "/" + name
        if !(components.queryItems ?? []).contains(where: { $0.name == "sslmode" }) {
            components.queryItems = (components.queryItems ?? []) + [URLQueryItem(name: "sslmode", value: "disable")]
        }
        url = components.string!
    }

    /// Drops the database on a thread of its own (a deinit runs on whichever thread lets go).
    deinit {
        let (admin, name) = (self.admin, self.name)
        Thread { _ = try? Self.psql(admin, "DROP DATABASE IF EXISTS \(name) WITH (FORCE)") }.start()
    }

    /// Runs SQL on the database (through psql, waited for on a thread of its own), returning
    /// its unaligned output.
    func query(_ sql: String) async throws -> String {
        var components = URLComponents(string: admin)!
        components.path = "/" + name
        return try await Self.psqlInBackground(components.string!, sql)
    }

    /// ``psql(_:_:)`` waited for off Swift's cooperative threads.
    static func psqlInBackground(_ url: String, _ sql: String) async throws -> String {
        try await ExternalTools.onOwnThread { try psql(url, sql) }
    }

    @discardableResult
    static func psql(_ url: String, _ sql: String) throws -> String {
        let psql = try ExternalTools.require("psql", package: "postgresql-client")
        let result = try ExternalTools.execute(psql, [url, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", sql], timeout: .seconds(60))
        guard result.status == 0 else {
            throw ExternalTools.Failure(description: "psql: \(result.stderr)")
        }
        return String(decoding: result.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// Where PostgreSQL is not configured, its cases of the parameterized suites do not run; this
/// says so as a skipped test (a case that cancelled itself was reported as passed).
@Suite struct PostgresAvailabilityTests {
    @Test("PostgreSQL is reachable for the gateway's tests", .enabled(if: PostgresTestDatabase.isAvailable, Comment(rawValue: PostgresTestDatabase.notConfigured)))
    func postgresIsReachable() async throws {
        let database = try await PostgresTestDatabase()
        #expect(try await database.query("SELECT 40 + 2") == "42")
    }
}
