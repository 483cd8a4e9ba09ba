import NIOCore

/// A value bound to a statement or read from a row, the same in SQLite and PostgreSQL: the
/// stores write their SQL and their control flow once, and each database turns these into its
/// own types at the edge.
package enum SQLValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])
    /// A list of texts: PostgreSQL's `text[]` (bulk inserts through `unnest`). SQLite has no
    /// arrays; its statements never bind one.
    case texts([String])
    /// A list of integers: PostgreSQL's `bigint[]` (an id list as one value, ``SQLGatewayStore``'s
    /// `= ANY(?)`). SQLite has no arrays; its statements never bind one.
    case integers([Int64])

    /// The text, or SQL's `NULL` for `nil`.
    package init(_ text: String?) { self = text.map(SQLValue.text) ?? .null }

    /// The integer, or SQL's `NULL` for `nil`.
    package init<I: BinaryInteger>(_ integer: I?) { self = integer.map { .integer(Int64($0)) } ?? .null }
}

/// A row read: its columns by name.
///
/// Reading a column that the statement did not select is a programming error in the store and
/// reads as `NULL`; a column of another type than asked reads as absent too, so each getter
/// says what it falls back to.
package struct SQLRow: Sendable {
    /// A result's column names and where each is, made once per result and shared by its rows
    /// (a dictionary a row, keyed by freshly made names, cost the gateway 4.7% of its CPU on
    /// PostgreSQL).
    package final class Columns: Sendable {
        let positions: [String: Int]
        let count: Int

        /// The names in the result's order; of a name given twice, the last is read.
        package init(_ names: some Sequence<String>) {
            var positions: [String: Int] = [:]
            var count = 0
            for name in names {
                positions[name] = count
                count += 1
            }
            self.positions = positions
            self.count = count
        }
    }

    private let columns: Columns
    private let values: [SQLValue]

    /// A row of `values`, in the order of `columns`' names.
    package init(_ columns: Columns, _ values: [SQLValue]) {
        precondition(values.count == columns.count, "a row's values and its result's columns differ in number")
        self.columns = columns
        self.values = values
    }

    package subscript(_ name: String) -> SQLValue {
        guard let position = columns.positions[name] else { return .null }
        return values[position]
    }

    /// The column as text, or `nil` when it is `NULL` or not text.
    package func text(_ name: String) -> String? {
        if case .text(let value) = self[name] { return value }
        return nil
    }

    /// The column as an integer, or `nil` when it is `NULL` or not an integer.
    package func integer(_ name: String) -> Int64? {
        if case .integer(let value) = self[name] { return value }
        return nil
    }

    /// The column as bytes (empty when `NULL`).
    package func blob(_ name: String) -> [UInt8] {
        if case .blob(let value) = self[name] { return value }
        return []
    }
}
