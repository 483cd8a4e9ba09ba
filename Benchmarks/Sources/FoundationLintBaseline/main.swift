import Foundation

// The baseline for `herald lint --jsonl`: what a program that only parses each line with
// Foundation's JSONSerialization, and measures its size, costs. It reads the file in large
// blocks (as herald does) and runs on one thread.
//
//   FoundationLintBaseline FILE
guard CommandLine.arguments.count == 2, let handle = FileHandle(forReadingAtPath: CommandLine.arguments[1]) else {
    FileHandle.standardError.write(Data("usage: FoundationLintBaseline FILE\n".utf8))
    exit(2)
}
struct Counts {
    var payloads = 0
    var invalid = 0
    var bytes = 0
    var oversize = 0

    mutating func process(_ line: Data) {
        guard !line.isEmpty else { return }
        payloads += 1
        bytes += line.count
        if line.count > 4096 { oversize += 1 }
        if (try? JSONSerialization.jsonObject(with: line)) == nil { invalid += 1 }
    }
}
var counts = Counts()
var pending = Data()
while true {
    let block = handle.readData(ofLength: 8 << 20)
    if block.isEmpty { break }
    pending.append(block)
    var start = pending.startIndex
    while let newline = pending[start...].firstIndex(of: 0x0A) {
        counts.process(pending[start..<newline])
        start = newline + 1
    }
    pending = Data(pending[start...])
}
counts.process(pending)
print("\(counts.payloads) payloads, \(counts.bytes) bytes, \(counts.invalid) not JSON, \(counts.oversize) over 4096 bytes")
