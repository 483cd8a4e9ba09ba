import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What one batch of lines gave: its rendered output and its counts.
public struct LintedLines: Sendable {
    /// The batch's lines: 0-based indices in the block.
    public var lines: Range<Int>
    /// What `render` returned for the batch's lines, in order.
    public var output: [UInt8]
    /// The batch's counts (every non-blank line, clean or not).
    public var summary: LintSummary
}

extension Linter {
    /// Lints a block of JSON Lines (one payload per line, LF or CRLF; blank lines skipped) on
    /// `jobs` threads, as `herald lint --jsonl` does: the lines are split into many small
    /// batches that threads take as they come, so every core stays busy, and the batches come
    /// back in input order, so the result is the same as one thread's.
    ///
    /// For input of any size, call it block by block (about 8 MB each, ending at a line break),
    /// and read the next block in `alongside`: it runs on one of the threads while the others
    /// lint.
    ///
    /// - Parameters:
    ///   - block: whole lines; a last line without a break is linted too.
    ///   - context: the headers every line is linted with.
    ///   - jobs: the threads to use (at least 1).
    ///   - alongside: work for one thread while the others lint.
    ///   - render: a line's output (`[]` for none), given its 0-based index in the block and
    ///     its report, on the thread that linted it.
    /// - Returns: each batch's output and counts, in line order.
    public func lintLines(
        _ block: [UInt8], context: LintContext, jobs: Int, alongside: (@Sendable () -> Void)? = nil,
        render: @Sendable (_ line: Int, _ report: LintReport) -> [UInt8]
    ) -> [LintedLines] {
        let lines = Self.lineRanges(block)
        let batches = Self.batches(count: lines.count, jobs: max(1, jobs))
        let slots = Slots(count: batches.count)
        let counter = Counter()
        let workers = min(max(1, jobs), max(batches.count, 1))
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            // Worker 0 does the other work first; every worker then takes batches as they come,
            // so that worker simply lints fewer of them.
            if worker == 0 { alongside?() }
            block.withUnsafeBytes { bytes in
                while let batchIndex = counter.next(below: batches.count) {
                    var batch = LintedLines(lines: batches[batchIndex], output: [], summary: LintSummary())
                    for lineIndex in batches[batchIndex] {
                        let range = lines[lineIndex]
                        guard !Self.isBlank(block, range) else { continue }
                        let report = lint(UnsafeRawBufferPointer(rebasing: bytes[range]), context: context)
                        batch.summary.add(report)
                        batch.output += render(lineIndex, report)
                    }
                    slots.store(batchIndex, batch)
                }
            }
        }
        return (0..<batches.count).map(slots.take)
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

    /// Contiguous batches of line indices. Threads take them from a shared counter, so many
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

/// Hands out batch indices to threads, each exactly once.
private final class Counter: Sendable {
    private let nextIndex = Atomic<Int>(0)

    func next(below count: Int) -> Int? {
        let index = nextIndex.add(1, ordering: .relaxed).oldValue
        return index < count ? index : nil
    }
}

/// Per-batch results written from worker threads.
///
/// `@unchecked Sendable` is safe here: every thread writes only its own slots, and slots are read
/// only after `concurrentPerform` has returned, which orders those reads after all writes.
private final class Slots: @unchecked Sendable {
    private let storage: UnsafeMutableBufferPointer<LintedLines>

    init(count: Int) {
        storage = .allocate(capacity: max(count, 1))
        storage.initialize(repeating: LintedLines(lines: 0..<0, output: [], summary: LintSummary()))
    }

    deinit {
        storage.deinitialize()
        storage.deallocate()
    }

    func store(_ index: Int, _ lines: LintedLines) { storage[index] = lines }

    func take(_ index: Int) -> LintedLines { storage[index] }
}
