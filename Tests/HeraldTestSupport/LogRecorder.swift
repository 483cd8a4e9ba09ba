import Logging
import Synchronization

/// Keeps what a logger said, with each line's level, for tests that check what is logged (and
/// how often).
public final class LogRecorder: Sendable {
    private let records = Mutex<[(level: Logger.Level, text: String)]>([])

    public init() {}

    /// A logger writing here (every level).
    public func logger(label: String = "test") -> Logger {
        Logger(label: label, factory: { _ in Handler(recorder: self) })
    }

    /// Every line so far: the message, then its metadata as `key=value` in key order.
    public var lines: [String] { records.withLock { $0.map(\.text) } }

    /// How many lines at `level` contain `text`.
    public func count(_ level: Logger.Level, containing text: String) -> Int {
        records.withLock { $0.count { $0.level == level && $0.text.contains(text) } }
    }

    struct Handler: LogHandler {
        let recorder: LogRecorder
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let merged = metadata.merging(event.metadata ?? [:]) { $1 }
            let text = "\(event.message) \(merged.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: " "))"
            recorder.records.withLock { $0.append((event.level, text)) }
        }
    }
}
