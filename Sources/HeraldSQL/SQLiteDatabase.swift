import HeraldAsync
import Logging
import NIOCore
import SQLiteNIO

/// An SQLite file on one connection. Every statement and transaction runs one at a time (a
/// statement of one task never lands inside another task's transaction on the shared
/// connection); a transaction takes the write lock at once (`BEGIN IMMEDIATE`).
package final class SQLiteDatabase: SQLDatabase {
    package let connection: SQLiteConnection
    package let path: String
    private let lock = AsyncLock()

    /// Opens (or creates) the file at `path`.
    package static func open(path: String, logger: Logger) async throws -> SQLiteDatabase {
        SQLiteDatabase(connection: try await SQLiteConnection.open(storage: .file(path: path), logger: logger), path: path)
    }

    /// Statements on a connection opened elsewhere (which must then run nothing else meanwhile).
    package init(connection: SQLiteConnection, path: String) {
        self.connection = connection
        self.path = path
    }

    @discardableResult
    package func query(_ sql: String, _ binds: [SQLValue]) async throws -> [SQLRow] {
        let connection = self.connection
        return try await lock.withLock { try await Self.run(connection, sql, binds) }
    }

    package func transaction<T: Sendable>(_ body: @Sendable (any SQLExecutor) async throws -> T) async throws -> T {
        let connection = self.connection
        return try await lock.withLock {
            _ = try await connection.query("BEGIN IMMEDIATE")
            do {
                let result = try await body(Session(connection: connection))
                _ = try await connection.query("COMMIT")
                return result
            } catch {
                _ = try? await connection.query("ROLLBACK")
                throw error
            }
        }
    }

    package func close() async {
        try? await connection.close()
    }

    /// The connection inside a transaction (the lock is held by the transaction).
    private struct Session: SQLExecutor {
        let connection: SQLiteConnection
        func query(_ sql: String, _ binds: [SQLValue]) async throws -> [SQLRow] {
            try await SQLiteDatabase.run(connection, sql, binds)
        }
    }

    private static func run(_ connection: SQLiteConnection, _ sql: String, _ binds: [SQLValue]) async throws -> [SQLRow] {
        let rows = try await connection.query(sql, try binds.map(sqlite))
        guard let first = rows.first else { return [] }
        let columns = SQLRow.Columns(first.columns.lazy.map(\.name))
        return rows.map { row($0, columns) }
    }

    private static func sqlite(_ value: SQLValue) throws -> SQLiteData {
        switch value {
        case .null: return .null
        case .integer(let value): return .integer(Int(value))
        case .real(let value): return .float(value)
        case .text(let value): return .text(value)
        case .blob(let bytes): return .blob(ByteBuffer(bytes: bytes))
        case .texts, .integers: throw SQLiteArrayBindError()
        }
    }

    private static func row(_ row: SQLiteRow, _ columns: SQLRow.Columns) -> SQLRow {
        SQLRow(columns, row.columns.map { column in
            switch column.data {
            case .null: .null
            case .integer(let value): .integer(Int64(value))
            case .float(let value): .real(value)
            case .text(let value): .text(value)
            case .blob(let buffer): .blob(Array(buffer.readableBytesView))
            }
        })
    }
}

/// A statement bound a list of texts, which only PostgreSQL can take.
struct SQLiteArrayBindError: Error, CustomStringConvertible {
    var description: String { "SQLite cannot bind a list of values to one parameter" }
}
