#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The few file-system calls bundle loading needs, on POSIX directly so the library does not
/// pull in Foundation.
enum FileSystem {
    enum Kind { case file, directory }

    struct Entry {
        var name: String
        var kind: Kind?
    }

    /// The largest localization file read (a `.strings` table is kilobytes; this bounds memory
    /// on a wrong path).
    static let maximumFileSize = 64 << 20

    static func kind(of path: String) -> Kind? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        switch info.st_mode & S_IFMT {
        case S_IFDIR: return .directory
        case S_IFREG: return .file
        default: return nil
        }
    }

    static func read(_ path: String) throws(LocalizationFileError) -> [UInt8] {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { throw systemError(path) }
        defer { close(descriptor) }
        var result: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = chunk.withUnsafeMutableBytes { systemRead(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw systemError(path)
            }
            if count == 0 { return result }
            result.append(contentsOf: chunk[0..<count])
            if result.count > maximumFileSize {
                throw LocalizationFileError(path: path, location: nil, message: "the file is larger than \(maximumFileSize >> 20) MiB; not a localization table")
            }
        }
    }

    /// The entries of a directory, sorted by name, without `.` and `..`.
    static func list(_ path: String) -> [Entry] {
        guard let directory = opendir(path) else { return [] }
        defer { closedir(directory) }
        var entries: [Entry] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name == "." || name == ".." { continue }
            entries.append(Entry(name: name, kind: kind(of: join(path, name))))
        }
        return entries.sorted { $0.name < $1.name }
    }

    static func join(_ directory: String, _ name: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }

    static func lastComponent(_ path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        return String(trimmed.split(separator: "/").last ?? trimmed)
    }

    static func parent(_ path: String) -> String {
        let component = lastComponent(path)
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        let parent = trimmed.dropLast(component.count)
        return parent.isEmpty ? "." : String(parent)
    }

    private static func systemError(_ path: String) -> LocalizationFileError {
        LocalizationFileError(path: path, location: nil, message: "cannot read the file: \(String(cString: strerror(errno)))")
    }

    #if canImport(Glibc)
    private static let systemRead = Glibc.read
    #elseif canImport(Darwin)
    private static let systemRead = Darwin.read
    #endif
}
