import HeraldLint

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `herald lint --jsonl`: one payload per line, millions of lines, all cores.
///
/// The input is read in blocks that end at a line break, the next block while the current one
/// is linted; each block's lines lint and render on `jobs` threads (`Linter.lintLines`), and the
/// output is written in input order, so the result is the same as a single-threaded run.
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
        while let block = try prefetch.take() {
            let format = output.format
            let colors = output.colors
            let baseLine = firstLineNumber
            let path = input.displayName
            let batches = linter.lintLines(block, context: context, jobs: jobs, alongside: { prefetch.fetch() }) { lineIndex, report in
                guard !report.diagnostics.isEmpty else { return [] }
                return LintOutput.render(LintFileResult(path: path, lineNumber: baseLine + lineIndex, report: report), format: format, colors: colors, includeClean: false)
            }
            for batch in batches { output.append(batch.output, summary: batch.summary) }
            firstLineNumber += batches.last?.lines.upperBound ?? 0
        }
    }
}

/// The next block, read ahead by one worker while the others lint.
///
/// `@unchecked Sendable` is safe: `fetch()` runs either on the main thread outside
/// `concurrentPerform` or on worker 0 inside it, never both at once, and `take()` runs on the main
/// thread after `concurrentPerform` has returned, which orders it after the fetch.
private final class Prefetch: @unchecked Sendable {
    private var reader: BlockReader
    private var fetched: Result<[UInt8]?, UsageError> = .success(nil)

    init(reader: BlockReader) {
        self.reader = reader
    }

    /// Reads the next block.
    func fetch() {
        do throws(UsageError) {
            fetched = .success(try reader.next())
        } catch {
            fetched = .failure(error)
        }
    }

    /// The block fetched last, or `nil` at the end of the input.
    func take() throws(UsageError) -> [UInt8]? {
        let result = try fetched.get()
        fetched = .success(nil)
        return result
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
            let count = try input.readChunk(from: descriptor, into: &chunk)
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
