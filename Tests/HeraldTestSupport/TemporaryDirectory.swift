import Foundation

/// A directory under the system's temporary folder, removed when the value is released.
public final class TemporaryDirectory: @unchecked Sendable {
    // Immutable after init; removal happens once, in deinit.

    /// The directory's path.
    public let path: String

    /// Creates an empty directory.
    public init() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("herald-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        path = url.path
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }

    /// The path of `relative` inside the directory.
    public func path(_ relative: String) -> String {
        path + "/" + relative
    }

    /// Writes UTF-8 text, creating folders as needed.
    public func write(_ relative: String, _ text: String) throws {
        try write(relative, bytes: Array(text.utf8))
    }

    /// Writes bytes, creating folders as needed.
    public func write(_ relative: String, bytes: [UInt8]) throws {
        let url = URL(fileURLWithPath: path(relative))
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(bytes).write(to: url)
    }

    /// Reads a file.
    public func read(_ relative: String) throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: path(relative))))
    }
}
