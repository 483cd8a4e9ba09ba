import HeraldJSON
import Synchronization

/// One finding: which rule, how serious, what and where. Findings come from ``Linter``; the type
/// has no public initializer.
///
/// A finding's message and pointer are made when they are first read, from the document the
/// report holds: a payload with a hundred findings costs no string per finding until someone
/// reads them. A diagnostic keeps that document alive as long as it lives.
public struct LintDiagnostic: Sendable, Hashable {
    /// What a finding is about.
    public enum Subject: Sendable, Hashable {
        /// A value in the body (or the object that should hold a missing value).
        case value(JSONPointer)
        /// The key of the member a pointer names: an unknown, misplaced, repeated or badly named
        /// key. The location is the key's own position, not its value's.
        case key(JSONPointer)
        /// A request header, such as `apns-priority`.
        case header(String)
    }

    /// The rule that found it.
    public var rule: RuleID
    /// How serious it is.
    public var severity: LintSeverity
    /// A sentence with the figures: `4161 bytes, over the 4096-byte limit for alert pushes`.
    public var message: String {
        get { text.resolved(in: origin?.document) }
        set { text = .text(newValue) }
    }
    /// What it is about.
    public var subject: Subject {
        get {
            if let resolved { return resolved }
            let pointer = origin?.pointer(to: Int(index)) ?? .root
            return isKey ? .key(pointer) : .value(pointer)
        }
        set { resolved = newValue }
    }
    /// Where the subject starts in the body; `nil` for headers.
    public var location: SourceLocation?

    /// The message as reported.
    private var text: MessageText
    /// The subject, when it was given rather than left to be read from ``origin``.
    private var resolved: Subject?
    /// Otherwise the tape index of the value it names, and whether it is about the key.
    private var index: Int32 = -1
    private var isKey = false
    /// The document the tape index is in.
    private var origin: FindingOrigin?

    init(rule: RuleID, severity: LintSeverity, message: String, subject: Subject, location: SourceLocation?) {
        self.init(rule: rule, severity: severity, text: .text(message), subject: subject, origin: nil, location: location)
    }

    init(rule: RuleID, severity: LintSeverity, text: MessageText, subject: Subject, origin: FindingOrigin?, location: SourceLocation?) {
        self.rule = rule
        self.severity = severity
        self.text = text
        self.resolved = subject
        self.origin = origin
        self.location = location
    }

    /// A finding about the value at tape index `index` of `origin`'s document, or its key.
    init(rule: RuleID, severity: LintSeverity, text: MessageText, index: Int, isKey: Bool, origin: FindingOrigin, location: SourceLocation?) {
        self.rule = rule
        self.severity = severity
        self.text = text
        self.index = Int32(truncatingIfNeeded: index)
        self.isKey = isKey
        self.origin = origin
        self.location = location
    }

    /// The pointer, for value and key subjects.
    public var pointer: JSONPointer? {
        switch subject {
        case .value(let pointer), .key(let pointer): pointer
        case .header: nil
        }
    }

    /// Whether the finding is about a key rather than its value.
    public var isAboutKey: Bool {
        guard let resolved else { return isKey }
        if case .key = resolved { return true }
        return false
    }

    /// The header name, for header subjects.
    public var header: String? {
        if case .header(let name)? = resolved { return name }
        return nil
    }

    /// Equal when rule, severity, message, subject and location are.
    public static func == (lhs: LintDiagnostic, rhs: LintDiagnostic) -> Bool {
        lhs.rule == rhs.rule && lhs.severity == rhs.severity && lhs.location == rhs.location
            && lhs.message == rhs.message && lhs.subject == rhs.subject
    }

    /// Hashes what `==` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(rule)
        hasher.combine(severity)
        hasher.combine(location)
        hasher.combine(message)
        hasher.combine(subject)
    }
}

/// The document a report's findings point into, shared by its diagnostics when there are more
/// than a few: pointers are read from it when asked for, upwards through an index of parents
/// built on the first request (not searched for from the root, once per finding).
final class FindingOrigin: Sendable {
    let document: JSONDocument
    private let paths = Mutex<PointerIndex?>(nil)

    init(document: JSONDocument) {
        self.document = document
    }

    /// The pointer to the value at tape index `index`.
    func pointer(to index: Int) -> JSONPointer {
        guard let node = document.node(at: index) else { return .root }
        // Findings in values a later duplicate key hides were dropped when reported, so the index
        // names every value asked for.
        let found = paths.withLock { paths -> JSONPointer? in
            if paths == nil { paths = PointerIndex(document, hiddenValues: []) }
            return paths!.pointer(to: index)
        }
        return found ?? document.pointer(to: node)
    }
}
