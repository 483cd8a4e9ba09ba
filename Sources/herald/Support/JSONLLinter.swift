import Dispatch
import Synchronization
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
        let prefetch = Prefetch(reader: try BlockReader(input))
        prefetch.fetch()
        var firstLineNumber = 1
        while let (block, lines) = try prefetch.take() {
            let batches = Self.batches(count: lines.count, jobs: jobs)
            let slots = ResultSlots(count: batches.count)
            let counter = BatchCounter()
            let format = output.format
            let colors = output.colors
            let baseLine = firstLineNumber
            let workers = min(jobs, max(batches.count, 1))
            DispatchQueue.concurrentPerform(iterations: workers) { worker in
                // Worker 0 reads the next block first; every worker then takes batches as they
                // come, so the reading worker simply lints fewer of them.
                if worker == 0 { prefetch.fetch() }
                block.withUnsafeBytes { bytes in
                    while let batchIndex = counter.next(below: batches.count) {
                        var rendered: [UInt8] = []
                        var summary = LintSummary()
                        for lineIndex in batches[batchIndex] {
                            let range = lines[lineIndex]
                            guard !Self.isBlank(block, range) else { continue }
                            let report = linter.lint(UnsafeRawBufferPointer(rebasing: bytes[range]), context: context)
                            summary.add(report)
                            guard !report.diagnostics.isEmpty else { continue }
                            let result = LintFileResult(path: input.displayName, lineNumber: baseLine + lineIndex, report: report)
                            rendered += LintOutput.render(result, format: format, colors: colors, includeClean: false)
                        }
                        slots.store(batchIndex, rendered, summary)
                    }
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

    /// Contiguous batches of line indices. Workers take them from a shared counter, so many
    /// small batches cost little and keep every core busy until the end of each block.
    static func batches(count: Int, jobs: Int) -> [Range<Int>] {
        guard count > 0 else { return [] }
        let batchCount = min(count, max(1, jobs * 32))
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

/// Hands out batch indices to workers, each exactly once.
private final class BatchCounter: Sendable {
    private let nextIndex = Atomic<Int>(0)

    func next(below count: Int) -> Int? {
        let index = nextIndex.add(1, ordering: .relaxed).oldValue
        return index < count ? index : nil
    }
}

/// The next block, read ahead by one worker while the others lint.
///
/// `@unchecked Sendable` is safe: `fetch()` runs either on the main thread outside
/// `concurrentPerform` or on worker 0 inside it, never both at once, and `take()` runs on the main
/// thread after `concurrentPerform` has returned, which orders it after the fetch.
private final class Prefetch: @unchecked Sendable {
    private var reader: BlockReader
    private var fetched: Result<([UInt8], [Range<Int>])?, UsageError> = .success(nil)

    init(reader: BlockReader) {
        self.reader = reader
    }

    /// Reads the next block and finds its lines.
    func fetch() {
        do throws(UsageError) {
            fetched = .success(try reader.next().map { ($0, JSONLLinter.lineRanges($0)) })
        } catch {
            fetched = .failure(error)
        }
    }

    /// The block fetched last, or `nil` at the end of the input.
    func take() throws(UsageError) -> ([UInt8], [Range<Int>])? {
        let result = try fetched.get()
        fetched = .success(nil)
        return result
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
