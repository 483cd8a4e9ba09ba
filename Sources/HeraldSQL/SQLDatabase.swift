/// Runs statements: a database outside a transaction, or the one connection inside one.
///
/// Statements use `?` for each bound value, in order, in either database (PostgreSQL's `$n`
/// are numbered at the edge); no statement holds a `?` of its own in a literal.
package protocol SQLExecutor: Sendable {
    /// Runs one statement with `binds` and returns every row it produced.
    @discardableResult
    func query(_ sql: String, _ binds: [SQLValue]) async throws -> [SQLRow]
}

extension SQLExecutor {
    /// Runs one statement without bound values.
    @discardableResult
    package func query(_ sql: String) async throws -> [SQLRow] {
        try await query(sql, [])
    }
}

/// A database the stores keep their rows in: statements, and transactions on one connection.
package protocol SQLDatabase: SQLExecutor {
    /// Runs `body` in one transaction on one connection: committed when it returns, rolled back
    /// when it throws.
    func transaction<T: Sendable>(_ body: @Sendable (any SQLExecutor) async throws -> T) async throws -> T
}

/// `?, ?, ?` for `count` values: an `IN (…)` list.
package func placeholders(_ count: Int) -> String {
    Array(repeating: "?", count: count).joined(separator: ", ")
}

extension Array {
    /// Consecutive pieces of at most `size` elements (statements bound to a list stay within the
    /// database's limit on parameters).
    package func chunked(_ size: Int) -> [ArraySlice<Element>] {
        stride(from: 0, to: count, by: size).map { self[$0..<Swift.min($0 + size, count)] }
    }
}

/// A statement put together from optional conditions: a condition whose value is `nil` is left
/// out.
package struct SQLStatement: Sendable {
    package private(set) var sql: String
    package private(set) var binds: [SQLValue]

    package init(_ sql: String, _ binds: [SQLValue] = []) {
        self.sql = sql
        self.binds = binds
    }

    /// Adds ` AND condition` with its one `?` bound to `value`, unless `value` is `nil`.
    package mutating func and(_ condition: String, _ value: SQLValue?) {
        guard let value else { return }
        sql += " AND " + condition
        binds.append(value)
    }

    /// Adds `text` with its `?`s bound to `values`.
    package mutating func append(_ text: String, _ values: SQLValue...) {
        sql += text
        binds += values
    }
}

extension SQLExecutor {
    /// Runs a statement put together with ``SQLStatement``.
    @discardableResult
    package func query(_ statement: SQLStatement) async throws -> [SQLRow] {
        try await query(statement.sql, statement.binds)
    }
}
