import Dispatch
import HeraldLint

#if canImport(Glibc)
import Glibc
private let systemRead = Glibc.read
#elseif canImport(Darwin)
import Darwin
private let systemRead = Darwin.read
#endif

/// `herald lint --jsonl`: one payload per line, millions of lines, all cores.
///
/// The input is read in blocks that end at a line break; each block's lines are split into
/// batches that lint and render on `jobs` threads, and the batches' output is written in input
/// order, so the result is the same as a single-threaded run.
struct JSONLLinter {
    let linter: Linter
    let context: LintContext
    let jobs: Int

    /// Read about this much at a time: large enough to keep every core busy, small enough to
    /// stream a file of any size.
    static let blockSize = 8 << 20

    func run(_ input: InputFile, output: inout LintOutput) throws(UsageError) {
        var reader = try BlockReader(input)
        var firstLineNumber = 1
        while let block = try reader.next() {
            let lines = Self.lineRanges(block)
            let batches = Self.batches(count: lines.count, jobs: jobs)
            let slots = ResultSlots(count: batches.count)
            let format = output.format
            let colors = output.colors
            let baseLine = firstLineNumber
            // concurrentPerform uses every core whatever the iteration count, so `jobs` workers
            // each take every jobs-th batch.
            let workers = min(jobs, batches.count)
            DispatchQueue.concurrentPerform(iterations: workers) { worker in
                for batchIndex in stride(from: worker, to: batches.count, by: workers) {
                    var rendered: [UInt8] = []
                    var summary = LintSummary()
                    for lineIndex in batches[batchIndex] {
                        let range = lines[lineIndex]
                        guard !Self.isBlank(block, range) else { continue }
                        let report = linter.lint(Array(block[range]), context: context)
                        summary.add(report)
                        guard !report.diagnostics.isEmpty else { continue }
                        let result = LintFileResult(path: input.displayName, lineNumber: baseLine + lineIndex, report: report)
                        rendered += LintOutput.render(result, format: format, colors: colors, includeClean: false)
                    }
                    slots.store(batchIndex, rendered, summary)
                }
            }
            for batchIndex in 0..<batches.count {
                let (rendered, summary) = slots.take(batchIndex)
                output.append(rendered, summary: summary)
            }
            firstLineNumber += lines.count
        }
    }

    /// The byte ranges of the lines of a block, without their line break (LF or CRLF).
    static func lineRanges(_ block: [UInt8]) -> [Range<Int>] {
        var ranges: [Range<Int>] = []
        ranges.reserveCapacity(block.count / 128)
        block.withUnsafeBytes { bytes in
            guard let base = bytes.baseAddress else { return }
            var start = 0
            let count = bytes.count
            while start < count, let found = memchr(base + start, Int32(UInt8(ascii: "\n")), count - start) {
                let index = base.distance(to: UnsafeRawPointer(found))
                let end = index > start && bytes[index - 1] == UInt8(ascii: "\r") ? index - 1 : index
                ranges.append(start..<end)
                start = index + 1
            }
            if start < count { ranges.append(start..<count) }
        }
        return ranges
    }

    /// Contiguous batches of line indices, a few per thread so uneven lines balance out.
    static func batches(count: Int, jobs: Int) -> [Range<Int>] {
        guard count > 0 else { return [] }
        let batchCount = min(count, max(1, jobs * 4))
        let size = (count + batchCount - 1) / batchCount
        return stride(from: 0, to: count, by: size).map { $0..<min($0 + size, count) }
    }

    static func isBlank(_ block: [UInt8], _ range: Range<Int>) -> Bool {
        for index in range {
            switch block[index] {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"): continue
            default: return false
            }
        }
        return true
    }
}

/// Per-batch results written from worker threads.
///
/// `@unchecked Sendable` is safe here: every worker writes only its own slot, and slots are read
/// only after `concurrentPerform` has returned, which orders those reads after all writes.
private final class ResultSlots: @unchecked Sendable {
    private let storage: UnsafeMutableBufferPointer<([UInt8], LintSummary)>

    init(count: Int) {
        storage = .allocate(capacity: max(count, 1))
        storage.initialize(repeating: ([], LintSummary()))
    }

    deinit {
        storage.deinitialize()
        storage.deallocate()
    }

    func store(_ index: Int, _ rendered: [UInt8], _ summary: LintSummary) {
        storage[index] = (rendered, summary)
    }

    func take(_ index: Int) -> ([UInt8], LintSummary) {
        storage[index]
    }
}

/// Reads an input in blocks that end at a line break (the last block may not).
private struct BlockReader {
    let input: InputFile
    let descriptor: Int32
    var pending: [UInt8] = []
    var finished = false
    /// Reused for every read: allocating 8 MiB per block costs page faults.
    var chunk = [UInt8](repeating: 0, count: 1 << 20)

    init(_ input: InputFile) throws(UsageError) {
        self.input = input
        if let path = input.path {
            descriptor = open(path, O_RDONLY)
            guard descriptor >= 0 else {
                throw UsageError(message: "cannot read '\(input.displayName)': \(String(cString: strerror(errno)))")
            }
        } else {
            descriptor = STDIN_FILENO
        }
    }

    mutating func next() throws(UsageError) -> [UInt8]? {
        guard !finished else { return nil }
        var block = pending
        pending = []
        block.reserveCapacity(JSONLLinter.blockSize + chunk.count)
        while block.count < JSONLLinter.blockSize {
            let count = chunk.withUnsafeMutableBytes { systemRead(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw UsageError(message: "cannot read '\(input.displayName)': \(String(cString: strerror(errno)))")
            }
            if count == 0 {
                finished = true
                if input.path != nil { close(descriptor) }
                return block.isEmpty ? nil : block
            }
            block.append(contentsOf: chunk[0..<count])
        }
        // Keep the partial last line for the next block.
        if let lastBreak = block.lastIndex(of: UInt8(ascii: "\n")) {
            pending = Array(block[(lastBreak + 1)...])
            block.removeSubrange((lastBreak + 1)...)
        }
        return block
    }
}
