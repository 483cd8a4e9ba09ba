import Foundation

// The baseline for `herald lint --jsonl`: the fastest reasonable Foundation program that checks
// each line of a JSONL file, parsing it with JSONSerialization and measuring its size.
//
// - The file is memory-mapped, so reading costs no copies.
// - Each line is copied into its own Data before parsing: JSONSerialization takes a contiguous
//   fast path for a standalone Data, and a slice of a large block is about twice as slow.
// - With --threads N the lines are split into N contiguous ranges parsed concurrently, as
//   herald splits its input over the cores.
//
//   FoundationLintBaseline [--threads N] FILE
var arguments = Array(CommandLine.arguments.dropFirst())
var threads = 1
if let flag = arguments.firstIndex(of: "--threads"), flag + 1 < arguments.count, let value = Int(arguments[flag + 1]), value > 0 {
    threads = value
    arguments.removeSubrange(flag...flag + 1)
}
guard arguments.count == 1, let file = try? Data(contentsOf: URL(fileURLWithPath: arguments[0]), options: .alwaysMapped) else {
    FileHandle.standardError.write(Data("usage: FoundationLintBaseline [--threads N] FILE\n".utf8))
    exit(2)
}

struct Counts {
    var payloads = 0
    var invalid = 0
    var bytes = 0
    var oversize = 0

    mutating func add(_ other: Counts) {
        payloads += other.payloads
        invalid += other.invalid
        bytes += other.bytes
        oversize += other.oversize
    }
}

/// Checks the lines of `bytes[range]` (which starts at a line start).
@Sendable func check(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> Counts {
    var counts = Counts()
    var start = range.lowerBound
    while start < range.upperBound {
        var end = start
        while end < range.upperBound && bytes[end] != 0x0A { end += 1 }
        var lineEnd = end
        if lineEnd > start && bytes[lineEnd - 1] == 0x0D { lineEnd -= 1 }
        if lineEnd > start {
            let line = Data(bytes: bytes.baseAddress! + start, count: lineEnd - start)
            counts.payloads += 1
            counts.bytes += line.count
            if line.count > 4096 { counts.oversize += 1 }
            if (try? JSONSerialization.jsonObject(with: line)) == nil { counts.invalid += 1 }
        }
        start = end + 1
    }
    return counts
}

final class Results: @unchecked Sendable { // Each slot is written by one worker; read after all finish.
    var counts: [Counts]
    init(_ count: Int) { counts = Array(repeating: Counts(), count: count) }
}

/// The mapped file, read (never written) by every worker while `withUnsafeBytes` holds it.
struct SharedBytes: @unchecked Sendable {
    let bytes: UnsafeRawBufferPointer
}

let total: Counts = file.withUnsafeBytes { bytes in
    // Split at line boundaries into one range per thread.
    var bounds = [0]
    for part in 1..<threads {
        var cut = bytes.count * part / threads
        while cut < bytes.count && bytes[cut - 1] != 0x0A { cut += 1 }
        bounds.append(max(cut, bounds.last!))
    }
    bounds.append(bytes.count)
    let results = Results(threads)
    let shared = SharedBytes(bytes: bytes)
    let ranges = (0..<threads).map { bounds[$0]..<bounds[$0 + 1] }
    DispatchQueue.concurrentPerform(iterations: threads) { index in
        results.counts[index] = check(shared.bytes, ranges[index])
    }
    return results.counts.reduce(into: Counts()) { $0.add($1) }
}
print("\(total.payloads) payloads, \(total.bytes) bytes, \(total.invalid) not JSON, \(total.oversize) over 4096 bytes")
