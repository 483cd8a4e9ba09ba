import HeraldJSON
import HeraldPayload
import HeraldProtocol

/// The state of linting one body: the document, an index of the keys that rules look at, and
/// the findings so far. Rules live in `Rules/`, one file per category, as extensions of this type.
struct LintPass {
    typealias Node = JSONDocument.Node

    /// Where a finding points before it is resolved to a pointer and a line:column.
    enum Target {
        case node(Int)
        /// A member's key: the member's value node (which the pointer names) and the key's offset.
        case key(value: Int, offset: Int)
        case header(String)
        case syntax(SourceLocation)
    }

    struct Finding {
        var rule: RuleID
        var message: MessageText
        var target: Target
    }

    let settings: Linter.Settings
    /// The body, borrowed for the duration of `lint`.
    let bytes: UnsafeRawBufferPointer
    let context: LintContext
    let pushType: PushType?
    var findings: [Finding] = []
    /// Findings recorded and omitted (past the per-rule cap: counted, never built), by rule
    /// ordinal: kept only once there are as many findings as the cap (no rule can reach it
    /// before), so a payload with few findings pays nothing for it.
    var perRule: (recorded: [Int32], omitted: [Int32])?
    var document: JSONDocument?
    /// The document was recovered from syntax errors: values are readable, sizes are not
    /// meaningful.
    var recovered = false

    /// Tape ranges of the values a later duplicate key hides, their contents included: disjoint,
    /// in order. No reader keeps such a value and no pointer names it, so findings there are
    /// dropped before they are built or counted (`duplicate-key` reports the repetition).
    var hiddenRanges: [Range<Int>] = []
    /// The hidden range `isHidden` last answered from.
    var hiddenHint = 0

    /// The tape index of every top-level `aps` key (one, unless it repeats).
    var apsKeyIndices: [Int] = []

    /// `aps`, when it is an object.
    var aps: Node?
    /// The value of each Apple-defined `aps` key present (the last, if repeated).
    var apsValues: KeySlots<APSKey>
    /// The `alert` dictionary, when `alert` is one.
    var alert: Node?
    var alertValues: KeySlots<AlertKey>

    init(settings: Linter.Settings, bytes: UnsafeRawBufferPointer, context: LintContext) {
        self.settings = settings
        self.bytes = bytes
        self.context = context
        self.pushType = context.knownPushType
        self.apsValues = KeySlots()
        self.alertValues = KeySlots()
    }

    // MARK: Reporting

    @inline(__always)
    func isActive(_ rule: RuleID) -> Bool { settings.active.contains(rule) }

    /// Records a finding; the message is built only if the rule runs and is under its cap
    /// (past it the finding is only counted).
    mutating func report(_ rule: RuleID, _ message: @autoclosure () -> String, at target: Target) {
        report(rule, MessageText.text(message()), at: target)
    }

    /// Records a finding whose message is made when it is read.
    mutating func report(_ rule: RuleID, _ message: @autoclosure () -> MessageText, at target: Target) {
        if !hiddenRanges.isEmpty {
            switch target {
            case .node(let index), .key(let index, _): if isHidden(index) { return }
            case .header, .syntax: break
            }
        }
        guard isActive(rule), hasRoom(rule) else { return }
        perRule?.recorded[rule.ordinal] += 1
        if findings.count == findings.capacity {
            // A few findings, or as many as one rule lists: two allocations, not eight doublings.
            findings.reserveCapacity(findings.isEmpty ? 8 : max(2 * findings.count, settings.maximumFindingsPerRule + 8))
        }
        findings.append(Finding(rule: rule, message: message(), target: target))
    }

    /// Whether a finding of `rule` would be recorded: under ``Linter/Settings/maximumFindingsPerRule``.
    /// A `false` counts it as omitted, so work done only to describe a finding (a suggestion, a
    /// message) is skipped past the cap.
    mutating func hasRoom(_ rule: RuleID) -> Bool {
        let cap = settings.maximumFindingsPerRule
        if perRule == nil {
            guard findings.count >= cap else { return true }
            var recorded = [Int32](repeating: 0, count: RuleID.allCases.count)
            for finding in findings { recorded[finding.rule.ordinal] += 1 }
            perRule = (recorded, [Int32](repeating: 0, count: RuleID.allCases.count))
        }
        guard perRule!.recorded[rule.ordinal] < Int32(clamping: cap) else {
            perRule!.omitted[rule.ordinal] += 1
            return false
        }
        return true
    }

    /// Counts `count` findings of `rule` past its cap as omitted, at once: the errors the parser
    /// only counted, with no finding to report.
    mutating func omit(_ rule: RuleID, count: Int) {
        guard count > 0, isActive(rule) else { return }
        let room = hasRoom(rule) // counts the first, and starts the per-rule counts
        assert(!room, "a finding the parser only counted fits under the cap")
        perRule?.omitted[rule.ordinal] += Int32(clamping: count - (room ? 0 : 1))
    }

    /// Whether the value at tape index `index` is hidden by a later duplicate key, or lies in one
    /// that is. Findings mostly arrive in document order, so the gap between hidden ranges last
    /// looked in, and the next, are tried before a binary search.
    mutating func isHidden(_ index: Int) -> Bool {
        let count = hiddenRanges.count
        var candidate = hiddenHint
        while candidate < min(count, hiddenHint + 2) {
            // `candidate` answers for indices from its range's start to the next range's.
            if hiddenRanges[candidate].lowerBound <= index, candidate + 1 == count || index < hiddenRanges[candidate + 1].lowerBound {
                hiddenHint = candidate
                return hiddenRanges[candidate].contains(index)
            }
            candidate += 1
        }
        var low = 0, high = count
        while low < high {
            let middle = (low + high) / 2
            if hiddenRanges[middle].lowerBound <= index { low = middle + 1 } else { high = middle }
        }
        guard low > 0 else { return false }
        hiddenHint = low - 1
        return hiddenRanges[low - 1].contains(index)
    }

    mutating func report(_ rule: RuleID, _ message: @autoclosure () -> String, at node: Node) {
        report(rule, message(), at: .node(node.index))
    }

    /// Records a finding about a member's key (unknown, misplaced, repeated): it points at the key.
    mutating func report(_ rule: RuleID, _ message: @autoclosure () -> String, atKeyOf member: JSONDocument.Member) {
        report(rule, message(), at: .key(value: member.value.index, offset: member.keyNode.byteRange.lowerBound))
    }

    mutating func report(_ rule: RuleID, _ message: @autoclosure () -> MessageText, atKeyOf member: JSONDocument.Member) {
        report(rule, message(), at: .key(value: member.value.index, offset: member.keyNode.byteRange.lowerBound))
    }

    mutating func report(_ rule: RuleID, _ message: @autoclosure () -> MessageText, at node: Node) {
        report(rule, message(), at: .node(node.index))
    }

    // MARK: Running

    mutating func run() {
        checkHeaders()
        guard !bytes.isEmpty else {
            report(.payloadEmpty, "the body is empty; APNs answers 400 PayloadEmpty", at: .syntax(SourceLocation(offset: 0, line: 1, column: 1)))
            return
        }
        let parser = JSONParser(options: settings.parserOptions)
        do {
            document = try parser.parse(bytes)
        } catch {
            // Errors past the rule's cap are counted, not located or worded; those carried past
            // are worded when read, from the document's copy of the body.
            let (recoveredDocument, recoveredErrors, failure, undescribed) = parser.parseRecovering(bytes, describingAtMost: settings.maximumFindingsPerRule)
            let text = bytes.assumingMemoryBound(to: UInt8.self)
            for error in recoveredErrors {
                if recoveredDocument != nil {
                    report(.invalidJSON, MessageText.syntax(error, in: text, after: "the body is not JSON: "), at: .syntax(error.location))
                } else {
                    report(.invalidJSON, error.error(in: text).message(after: "the body is not JSON: "), at: .syntax(error.location))
                }
            }
            if let failure {
                report(.invalidJSON, failure.message(after: "the body is not JSON: "), at: .syntax(failure.location))
            }
            omit(.invalidJSON, count: undescribed)
            guard let recoveredDocument else { return }
            document = recoveredDocument
            recovered = true
        }
        guard let document else { return }
        if !recovered { checkSize(document) }
        let root = document.root
        guard root.kind == .object else {
            report(.payloadNotObject, "the payload is \(root.kind); it must be a JSON object holding \"aps\"", at: root)
            return
        }
        checkDuplicateKeys(document)
        checkForm(root) // indexes aps too
        if let aps {
            checkKeys(aps)
            checkSilent()
            checkPushTypeAgainstPayload()
            checkLocalization()
        } else {
            checkPushTypeAgainstPayload()
        }
        checkSensitiveData(root)
    }

    /// Indexes `aps` (the value of the last `aps` key, as the form check finds it), the Apple
    /// keys inside it and the `alert` dictionary. Where a key repeats, the last one is analysed:
    /// it is what JSON Pointers name and what most readers keep (`duplicate-key` reports the
    /// repetition).
    mutating func indexPayload(lastAPS: Node?) {
        aps = lastAPS?.kind == .object ? lastAPS : nil
        guard let aps else { return }
        apsValues.index(aps)
        if let alertValue = apsValues[.alert], alertValue.kind == .object {
            alert = alertValue
            alertValues.index(alertValue)
        }
    }

    // MARK: Finishing

    /// Resolves targets to line:columns, and orders the findings: header findings first, then by
    /// position. With more than a few findings, pointers and messages are left to be made when
    /// read (``FindingOrigin``).
    ///
    /// The cost is linear in the body and the findings: every line and column comes from one
    /// forward pass over the body (the offsets sorted first).
    mutating func finish() -> LintReport {
        // Taken, not copied, to add the cap's own findings.
        var findings: [Finding] = []
        swap(&findings, &self.findings)
        // One finding per capped rule says how many more there were, where its last one was.
        if let perRule {
            for rule in RuleID.allCases where perRule.omitted[rule.ordinal] > 0 {
                guard let target = findings.last(where: { $0.rule == rule })?.target else { continue }
                let more = perRule.omitted[rule.ordinal]
                findings.append(Finding(
                    rule: rule, message: .text("and \(more) more finding\(more == 1 ? "" : "s") of \(rule) not listed (at most \(settings.maximumFindingsPerRule) per rule)"),
                    target: target))
            }
        }
        let limit = PayloadLimit.limit(for: pushType, endpoint: context.endpoint)
        var diagnostics: [LintDiagnostic] = []
        diagnostics.reserveCapacity(findings.count)
        // The node findings: subject and offset first; locations after, in one pass, written
        // into the diagnostics in place.
        var located: [(diagnostic: Int, offset: Int)] = []
        // With more than a few findings, pointers and messages are made when read, from the
        // document: one origin for all. A few are resolved now (no origin to allocate, and the
        // diagnostics do not keep the document).
        let origin = findings.count <= 4 ? nil : document.map(FindingOrigin.init)
        // Header and syntax findings first, then the others: the order the sort below keeps
        // where two findings share an offset.
        for finding in findings {
            let severity = settings.severities[finding.rule.ordinal]
            switch finding.target {
            case .header(let name):
                diagnostics.append(LintDiagnostic(rule: finding.rule, severity: severity, text: origin == nil ? .text(finding.message.resolved(in: document)) : finding.message, subject: .header(name), origin: origin, location: nil))
            case .syntax(let location):
                diagnostics.append(LintDiagnostic(rule: finding.rule, severity: severity, text: origin == nil ? .text(finding.message.resolved(in: document)) : finding.message, subject: .value(.root), origin: origin, location: location))
            case .node, .key: continue
            }
        }
        for finding in findings {
            let severity = settings.severities[finding.rule.ordinal]
            switch finding.target {
            case .header, .syntax: continue
            case .node(let index), .key(let index, _):
                // A value hidden by a later duplicate key is used by no reader and named by no
                // pointer (`duplicate-key` reports the repetition): findings there were dropped
                // when reported.
                guard let document, let node = document.node(at: index) else { continue }
                var offset = node.byteRange.lowerBound
                var isKey = false
                if case .key(_, let keyOffset) = finding.target {
                    offset = keyOffset
                    isKey = true
                }
                located.append((diagnostics.count, offset))
                if let origin {
                    diagnostics.append(LintDiagnostic(rule: finding.rule, severity: severity, text: finding.message, index: index, isKey: isKey, origin: origin, location: nil))
                } else {
                    let pointer = document.pointer(to: node)
                    assert(document.resolve(pointer)?.index == node.index, "a finding in a hidden value was reported")
                    diagnostics.append(LintDiagnostic(
                        rule: finding.rule, severity: severity, text: .text(finding.message.resolved(in: document)),
                        subject: isKey ? .key(pointer) : .value(pointer), origin: nil, location: nil))
                }
            }
        }
        if !located.isEmpty {
            let text = UnsafeBufferPointer(start: bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), count: bytes.count)
            // Findings mostly come in document order (one, for a 4 KB body's near-limit note):
            // then one cursor walks the text once, with no offsets gathered and sorted.
            if zip(located, located.dropFirst()).allSatisfy({ $0.offset <= $1.offset }) {
                var cursor = SourceCursor()
                for entry in located { diagnostics[entry.diagnostic].location = cursor.location(ofOffset: entry.offset, in: text) }
            } else {
                let locations = SourceCursor.locations(ofOffsets: located.map(\.offset), in: text)
                for (index, entry) in located.enumerated() { diagnostics[entry.diagnostic].location = locations[index] }
            }
        }
        // Header findings, then by offset; equal places keep their order. Findings are often
        // in order already (reported walking the body), and then nothing is moved.
        func precedes(_ lhs: SourceLocation?, _ rhs: SourceLocation?) -> Bool {
            switch (lhs, rhs) {
            case (nil, nil): false
            case (nil, _): true
            case (_, nil): false
            case (let left?, let right?): left.offset < right.offset
            }
        }
        if diagnostics.indices.dropFirst().contains(where: { precedes(diagnostics[$0].location, diagnostics[$0 - 1].location) }) {
            diagnostics.sort { precedes($0.location, $1.location) }
        }
        return LintReport(
            diagnostics: diagnostics, byteCount: bytes.count, limit: limit, document: document,
            unlistedCount: perRule.map { Int($0.omitted.reduce(0, +)) } ?? 0)
    }
}

/// The value node of each key of one kind present in an object, by key ordinal. Inline storage:
/// indexing a payload allocates nothing.
struct KeySlots<Key: KnownKey> {
    private var slots = InlineArray<32, Int32>(repeating: -1)
    private var document: JSONDocument?
    /// For an object of many members, each member's key ordinal (-1: not one of these keys), so
    /// the rules that walk its members again do not look each key up a second time. Not kept
    /// for a few members, where the array would cost more than the lookups.
    private var memberOrdinals: [Int8] = []

    /// Objects of more members keep ``memberOrdinals``.
    private static var keptFrom: Int { 16 }

    init() {
        precondition(Key.keys.count <= 32, "KeySlots holds at most 32 keys")
    }

    /// Records the value of each known key of `object` (the last, where a key repeats).
    mutating func index(_ object: JSONDocument.Node) {
        document = object.document
        let keep = object.count > Self.keptFrom
        memberOrdinals.removeAll(keepingCapacity: true)
        if keep { memberOrdinals.reserveCapacity(object.count) }
        for member in object.members {
            guard let ordinal = member.keyNode.withUTF8({ Key.table.ordinal(of: $0) }) ?? nil else {
                if keep { memberOrdinals.append(-1) }
                continue
            }
            if keep { memberOrdinals.append(Int8(ordinal)) }
            slots[ordinal] = Int32(member.value.index)
        }
    }

    /// The key of the member at `position` of the object indexed, `member`.
    @inline(__always)
    func key(ofMember member: JSONDocument.Member, at position: Int) -> Key? {
        if position < memberOrdinals.count {
            let ordinal = memberOrdinals[position]
            return ordinal < 0 ? nil : Key.keys[Int(ordinal)]
        }
        return member.keyNode.withUTF8({ Key.lookUp($0) }) ?? nil
    }

    subscript(_ key: Key) -> JSONDocument.Node? {
        guard let document else { return nil }
        let index = slots[key.ordinal]
        return index < 0 ? nil : document.node(at: Int(index))
    }

    func has(_ key: Key) -> Bool { document != nil && slots[key.ordinal] >= 0 }
}

/// One key type's table, read once for a loop over many keys: each read of a key type's static
/// `table` passes its lazy initializer's guard, and from here reaches it through the protocol's
/// witness as well, which together cost as much as the lookup. Plain buffers: copied, it
/// retains nothing.
struct KeyLookup<Key: KnownKey> {
    private let table = Key.table

    init() {
        // The key is its one-byte tag, its ordinal (``KnownKey/ordinal``, tested against
        // `allCases`): HeraldPayload's `init(ordinal:)` is not specialized across the module
        // boundary, and its generic form costs more than the lookup.
        precondition(MemoryLayout<Key>.size == 1, "known keys are one-byte enums")
    }

    /// The key spelled `bytes`, if it is one of these.
    @inline(__always)
    func callAsFunction(_ bytes: UnsafeRawBufferPointer) -> Key? {
        table.ordinal(of: bytes).map { unsafeBitCast(UInt8(truncatingIfNeeded: $0), to: Key.self) }
    }
}

/// Apple's `aps` keys and the alert's in one table, for the loop over a payload's top-level keys
/// (each of which may be either, misplaced): a key is looked up once, where looking it up in
/// each table in turn cost a payload of a hundred custom keys 2.7% of the mock's time. A
/// spelling both have (`sound`) is the `aps` key's, as when the `aps` table was asked first.
struct AppleKeyLookup {
    private static let shared = KeyTable(APSKey.keys.map(\.name) + AlertKey.keys.map(\.name))
    private let table = AppleKeyLookup.shared
    private let apsKeyCount = APSKey.keys.count

    init() {
        // Keys are made from their ordinal's one byte, as ``KeyLookup`` makes them.
        precondition(MemoryLayout<APSKey>.size == 1 && MemoryLayout<AlertKey>.size == 1, "known keys are one-byte enums")
    }

    /// The `aps` key spelled `bytes`, or else the alert key, or neither.
    @inline(__always)
    func callAsFunction(_ bytes: UnsafeRawBufferPointer) -> (aps: APSKey?, alert: AlertKey?) {
        guard let ordinal = table.ordinal(of: bytes) else { return (nil, nil) }
        if ordinal < apsKeyCount { return (unsafeBitCast(UInt8(truncatingIfNeeded: ordinal), to: APSKey.self), nil) }
        return (nil, unsafeBitCast(UInt8(truncatingIfNeeded: ordinal - apsKeyCount), to: AlertKey.self))
    }
}

extension KnownKey {
    /// The key spelled `bytes`, if it is one of these. Specialized here, it reads the concrete
    /// type's table directly: HeraldPayload's generic `init?(utf8:)` is not specialized across
    /// the module boundary and reached the table through the protocol's witness, which cost as
    /// much as the lookup itself on every key.
    @inline(__always)
    static func lookUp(_ bytes: UnsafeRawBufferPointer) -> Self? {
        table.ordinal(of: bytes).map { keys[$0] }
    }
}
