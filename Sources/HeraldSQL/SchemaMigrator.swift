/// Brings a database's schema to the version a build writes: versioned migrations, each applied
/// once, in order, in one transaction with the record of the versions applied. The mock's SQLite
/// store and the gateway's SQLite and PostgreSQL stores all migrate through it.
package struct SchemaMigrator: Sendable {
    /// One step of the schema.
    package struct Migration: Sendable {
        package var version: Int
        package var statements: [String]

        package init(version: Int, statements: [String]) {
            self.version = version
            self.statements = statements
        }
    }

    /// Where a database records the version it is at.
    package enum VersionRecord: Sendable {
        /// SQLite's `PRAGMA user_version` (in the file's header, part of the transaction).
        case userVersion
        /// A table of one integer column `version`, a row per migration applied, created if
        /// missing. `serialize`, when given, runs first in the migration's transaction and makes
        /// other migrators wait for it (PostgreSQL: processes starting at once on a new database;
        /// one creates and migrates, the others then find nothing to do).
        case table(name: String, serialize: String?)
    }

    /// The database is at a version this build does not know.
    package struct NewerSchema: Error, Sendable {
        /// The version found.
        package var found: Int
        /// The newest version this build knows.
        package var known: Int
    }

    /// A migration failed: which, and why. Nothing of it was applied.
    package struct Failure: Error, Sendable {
        package var version: Int
        package var underlying: any Error
    }

    package var migrations: [Migration]
    package var record: VersionRecord

    package init(_ migrations: [Migration], record: VersionRecord) {
        precondition(zip(migrations, migrations.dropFirst()).allSatisfy { $0.version < $1.version }, "migrations in increasing versions")
        self.migrations = migrations
        self.record = record
    }

    /// The newest version of ``migrations``.
    package var latest: Int { migrations.last?.version ?? 0 }

    /// Applies the migrations `database` has not had yet; returns the version it was at.
    ///
    /// - Throws: ``NewerSchema`` when the database is at a version above ``latest`` (it was
    ///   written by a newer build), ``Failure`` when a statement fails, or what reading the
    ///   version threw.
    @discardableResult
    package func migrate(_ database: some SQLDatabase) async throws -> Int {
        let migrations = self.migrations, record = self.record, latest = self.latest
        return try await database.transaction { executor in
            let found: Int
            switch record {
            case .userVersion:
                found = Int(try await executor.query("PRAGMA user_version").first?.integer("user_version") ?? 0)
            case .table(let name, let serialize):
                if let serialize { try await executor.query(serialize) }
                try await executor.query("CREATE TABLE IF NOT EXISTS \(name) (version INTEGER NOT NULL)")
                found = Int(try await executor.query("SELECT coalesce(max(version), 0) AS v FROM \(name)").first?.integer("v") ?? 0)
            }
            guard found <= latest else { throw NewerSchema(found: found, known: latest) }
            for migration in migrations where migration.version > found {
                do {
                    for statement in migration.statements { try await executor.query(statement) }
                    switch record {
                    case .userVersion: try await executor.query("PRAGMA user_version = \(migration.version)")
                    case .table(let name, _): try await executor.query("INSERT INTO \(name) (version) VALUES (\(migration.version))")
                    }
                } catch {
                    throw Failure(version: migration.version, underlying: error)
                }
            }
            return found
        }
    }
}
