import HeraldSQL

/// What differs between the gateway's two databases: how they connect and fail, and the one
/// statement whose form differs (a submission's bulk insert). ``SQLGatewayStore`` writes the rest
/// once; ``GatewaySchema/Dialect`` holds the few words of SQL that differ.
protocol GatewayDatabase: SQLDatabase, DatabaseConnectivity {
    var dialect: GatewaySchema.Dialect { get }

    /// Brings the schema to this build's version (``GatewaySchema/migrator(for:)``).
    func migrate() async throws

    /// Inserts a delivery per token of a `job` of tokens, queued and due when `job.dueAt(nil)`
    /// says, inside the submission's transaction (SQLite: rows of bound values; PostgreSQL: two
    /// arrays unnested).
    func insertDeliveries(_ job: NewJob, on executor: any SQLExecutor) async throws

    /// Whether `error` is a unique-key violation (two submissions of one idempotency key at once).
    func isUniqueViolation(_ error: any Error) -> Bool

    /// Whether the database takes writes that need room now (after a full disk): throws what a
    /// write would.
    func probeWrite() async throws

    /// After an erasure: what the database keeps of deleted rows outside its tables goes too
    /// (SQLite: the write-ahead log is checkpointed into the file, whose freed pages are zeroed,
    /// and truncated; PostgreSQL's dead rows go at its next vacuum).
    func forgetDeleted() async throws
}

/// Whether a database is there, what its failures mean, and starting afresh: what
/// ``GuardedStore`` watches to tell an outage from a failed statement.
protocol DatabaseConnectivity: Sendable {
    /// Answers when the database does (a trivial statement; for PostgreSQL, a new connection
    /// first, so that a server that is back is seen at once).
    func ping() async throws
    /// Opens a connection of its own and closes it (within `timeout`): whether the server is
    /// there, whatever the pool is doing. SQLite: nothing to check.
    func probeConnection(within timeout: Duration) async throws
    /// Whether the database is a server that can be away (PostgreSQL), rather than a file.
    var canBeUnreachable: Bool { get }
    /// Starts afresh with new connections (PostgreSQL's pool otherwise backs off for up to a
    /// minute after an outage before it connects again); calls already running finish first.
    func reconnect() async
    /// What kind of failure `error` is: an outage (refused, connection, authentication) or a
    /// statement that failed.
    func classify(_ error: any Error) -> StoreFailureKind
    /// `error` in one line, for the log (the server's message when it sent one).
    func describe(_ error: any Error) -> String
    /// Releases the connection(s).
    func close() async
}
