import Foundation
import Logging

/// How a ``GatewayServer`` listens, stores, sends and retries. The defaults suit one process on
/// SQLite; for several processes, give each the same PostgreSQL ``database``.
public struct GatewayConfiguration: Sendable {
    /// Where everything is kept.
    public enum Database: Sendable, Hashable {
        /// An SQLite file (created when missing), for one gateway process.
        case sqlite(path: String)
        /// A PostgreSQL database shared by any number of gateway processes:
        /// `postgres://user:password@host:port/database` (`?sslmode=disable|prefer|require`).
        case postgres(url: String)
    }

    /// The database.
    public var database: Database
    /// The address the API binds (`127.0.0.1` by default; `0.0.0.0` for every interface).
    public var host: String = "127.0.0.1"
    /// The API port (0 picks a free one).
    public var port: Int = 8080
    /// An administrator API key to create at start-up if the database has none with this value
    /// (from `HERALD_GATEWAY_ADMIN_KEY`, say). With none given and no key in the database, one
    /// is made and shown once (``GatewayServer/generatedAdminKey``).
    public var adminKey: String? = nil
    /// How many deliveries a process holds at once (claimed and not yet recorded).
    public var maximumInFlight: Int = 2_000
    /// How many deliveries one claim takes.
    public var claimBatch: Int = 500
    /// How long a claim holds a delivery: another process takes it over after this if the one
    /// that claimed it died. Longer than the request timeout.
    public var claimLease: Duration = .seconds(60)
    /// The longest one send may take (the client's deadline, its retries included).
    public var requestTimeout: Duration = .seconds(30)
    /// How long a notification without `expiration` is retried.
    public var retryWindow: Duration = .seconds(24 * 3600)
    /// Backoff between a delivery's attempts.
    var retry = GatewayRetryPolicy()
    /// How often an idle worker looks for due deliveries.
    public var pollInterval: Duration = .milliseconds(200)
    /// Outcomes are written at least this often (in batches).
    public var flushInterval: Duration = .milliseconds(20)
    /// The most tokens one request may list.
    public var maximumTokensPerRequest: Int = 1_000_000
    /// Whether this process sends (a process may only serve the API).
    public var runsWorkers: Bool = true
    /// How long graceful shutdown waits for sends in flight before giving the rest back.
    public var shutdownGracePeriod: Duration = .seconds(30)
    /// This process's name in claims (default: host name, process id and a random suffix).
    public var workerName: String? = nil
    /// The logger; device tokens in its messages are shortened.
    public var logger: Logger = Logger(label: "herald.gateway")
    /// The clock (milliseconds come from it); injectable for tests.
    public var now: @Sendable () -> Date = Date.init

    /// A configuration on `database` with the defaults.
    public init(database: Database) {
        self.database = database
    }
}
