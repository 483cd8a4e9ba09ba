import Foundation
import HeraldSQL
import HeraldTestSupport
import Logging
import Testing

/// The migrator both stores use, on real SQLite files; each file is read afterwards by Python's
/// `sqlite3`, an independent reader.
@Suite(.ownThreads) struct SchemaMigratorTests {
    static let first = SchemaMigrator.Migration(version: 1, statements: ["CREATE TABLE a (x INTEGER)", "INSERT INTO a (x) VALUES (1)"])
    static let second = SchemaMigrator.Migration(version: 2, statements: ["ALTER TABLE a ADD COLUMN y TEXT", "CREATE TABLE b (z TEXT)"])

    static func open(_ directory: TemporaryDirectory) async throws -> SQLiteDatabase {
        try await SQLiteDatabase.open(path: directory.path("db.sqlite"), logger: Logger(label: "test"))
    }

    /// Python's answer to `expression` over an `sqlite3` connection `c` to the file.
    static func read(_ directory: TemporaryDirectory, _ expression: String) throws -> String {
        try ExternalTools.requirePython(modules: "sqlite3", package: "python3")
        let output = try ExternalTools.python(
            "import sqlite3, sys\nc = sqlite3.connect(sys.argv[1])\nprint(\(expression))", arguments: [directory.path("db.sqlite")])
        return String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test(arguments: [SchemaMigrator.VersionRecord.userVersion, .table(name: "schema_versions", serialize: nil)])
    func appliesEachMigrationOnceInOrder(record: SchemaMigrator.VersionRecord) async throws {
        let directory = try TemporaryDirectory()
        let database = try await Self.open(directory)
        #expect(try await SchemaMigrator([Self.first], record: record).migrate(database) == 0)
        // A later build with one more migration applies only that one (x = 1 is not inserted twice).
        #expect(try await SchemaMigrator([Self.first, Self.second], record: record).migrate(database) == 1)
        #expect(try await SchemaMigrator([Self.first, Self.second], record: record).migrate(database) == 2)
        await database.close()
        #expect(try Self.read(directory, "c.execute('SELECT count(*), sum(x) FROM a').fetchone()") == "(1, 1)")
        #expect(try Self.read(directory, "[r[1] for r in c.execute('PRAGMA table_info(a)')]") == "['x', 'y']")
        switch record {
        case .userVersion:
            #expect(try Self.read(directory, "c.execute('PRAGMA user_version').fetchone()[0]") == "2")
        case .table(let name, _):
            #expect(try Self.read(directory, "[r[0] for r in c.execute('SELECT version FROM \(name) ORDER BY version')]") == "[1, 2]")
        }
    }

    @Test func aNewerDatabaseIsRefusedAndLeftAlone() async throws {
        let directory = try TemporaryDirectory()
        let database = try await Self.open(directory)
        try await SchemaMigrator([Self.first, Self.second], record: .userVersion).migrate(database)
        do {
            try await SchemaMigrator([Self.first], record: .userVersion).migrate(database)
            Issue.record("an older build migrated a newer database")
        } catch let error as SchemaMigrator.NewerSchema {
            #expect(error.found == 2 && error.known == 1)
        }
        await database.close()
        #expect(try Self.read(directory, "c.execute('PRAGMA user_version').fetchone()[0]") == "2")
    }

    @Test func aFailingMigrationLeavesNothingOfItself() async throws {
        let directory = try TemporaryDirectory()
        let database = try await Self.open(directory)
        try await SchemaMigrator([Self.first], record: .table(name: "v", serialize: nil)).migrate(database)
        let broken = SchemaMigrator.Migration(version: 2, statements: ["CREATE TABLE b (z TEXT)", "INSERT INTO missing VALUES (1)"])
        do {
            try await SchemaMigrator([Self.first, broken], record: .table(name: "v", serialize: nil)).migrate(database)
            Issue.record("a failing statement was not reported")
        } catch let error as SchemaMigrator.Failure {
            #expect(error.version == 2)
            #expect("\(error.underlying)".contains("missing"))
        }
        await database.close()
        // Version 2's first statement was rolled back with it, and the record says 1.
        #expect(try Self.read(directory, "[r[0] for r in c.execute(\"SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name\")]") == "['a', 'v']")
        #expect(try Self.read(directory, "c.execute('SELECT max(version) FROM v').fetchone()[0]") == "1")
    }
}

/// ``SQLiteDatabase``: values round-trip as they were bound, transactions commit or roll back
/// whole.
@Suite(.ownThreads) struct SQLiteDatabaseTests {
    @Test func everyValueRoundTrips() async throws {
        let directory = try TemporaryDirectory()
        let database = try await SchemaMigratorTests.open(directory)
        defer { Task { await database.close() } }
        try await database.query("CREATE TABLE t (id INTEGER PRIMARY KEY, v)")
        let values: [SQLValue] = [
            .null, .integer(0), .integer(Int64.max), .integer(Int64.min), .real(0.5), .text(""), .text("é ☃ 🎉 'quoted' ?"),
            .blob([]), .blob([0, 255, 10, 0]), SQLValue(nil as String?), SQLValue(7 as Int?),
        ]
        for (index, value) in values.enumerated() {
            try await database.query("INSERT INTO t (id, v) VALUES (?, ?)", [SQLValue(index), value])
        }
        let rows = try await database.query("SELECT id, v FROM t ORDER BY id")
        #expect(rows.map { $0["v"] } == values)
        #expect(SQLValue(nil as String?) == .null && SQLValue(nil as Int?) == .null)
        #expect(rows.map { $0.integer("id") } == values.indices.map { Int64($0) })
        await #expect(throws: (any Error).self) { try await database.query("SELECT ?", [.texts(["a"])]) }
    }

    /// Rows share their result's column names: each row reads its own values by name, in any
    /// order of the select list; a name selected twice reads its last (as SQLite's own row does);
    /// a name not selected reads NULL; an empty result has no rows.
    @Test func rowsReadTheirOwnValuesByName() async throws {
        let directory = try TemporaryDirectory()
        let database = try await SchemaMigratorTests.open(directory)
        defer { Task { await database.close() } }
        try await database.query("CREATE TABLE t (id INTEGER PRIMARY KEY, a TEXT, b INTEGER)")
        for id in 1...50 { try await database.query("INSERT INTO t (id, a, b) VALUES (?, ?, ?)", [SQLValue(id), .text("a\(id)"), SQLValue(id * 7)]) }
        let rows = try await database.query("SELECT b, id, a, a || '!' AS a FROM t ORDER BY id")
        #expect(rows.count == 50)
        for (index, row) in rows.enumerated() {
            let id = Int64(index + 1)
            #expect(row.integer("id") == id && row.integer("b") == id * 7 && row.text("a") == "a\(id)!", "\(id)")
            #expect(row["missing"] == .null && row.text("b") == nil && row.integer("a") == nil)
        }
        #expect(try await database.query("SELECT id, a FROM t WHERE id < 0").isEmpty)
    }

    @Test func aTransactionThatThrowsLeavesNothing() async throws {
        struct Stop: Error {}
        let directory = try TemporaryDirectory()
        let database = try await SchemaMigratorTests.open(directory)
        try await database.query("CREATE TABLE t (v INTEGER)")
        await #expect(throws: Stop.self) {
            try await database.transaction { executor in
                try await executor.query("INSERT INTO t (v) VALUES (?)", [.integer(1)])
                throw Stop()
            }
        }
        let kept: Int64? = try await database.transaction { executor in
            try await executor.query("INSERT INTO t (v) VALUES (?)", [.integer(2)])
            return try await executor.query("SELECT sum(v) AS s FROM t").first?.integer("s")
        }
        #expect(kept == 2)
        await database.close()
        #expect(try SchemaMigratorTests.read(directory, "c.execute('SELECT group_concat(v) FROM t').fetchone()[0]") == "2")
    }

    @Test func placeholdersAndChunks() {
        #expect(placeholders(3) == "?, ?, ?")
        #expect(placeholders(0) == "")
        let pieces = Array(1...7).chunked(3)
        #expect(pieces.map(Array.init) == [[1, 2, 3], [4, 5, 6], [7]])
        #expect([Int]().chunked(3).isEmpty)
    }
}
