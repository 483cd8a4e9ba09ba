/// What makes a request's header block malformed (RFC 9113 §8.2 and §8.3), the checks NIOHTTP2
/// makes of a server's requests: a malformed request is a stream error (`PROTOCOL_ERROR`).
enum RequestHeaderCheck {
    /// A malformed block, with what was wrong.
    struct Problem: Error {
        var reason: String
    }

    /// The request's `content-length` (`nil` without one), or what makes the block malformed.
    static func requestProblem(_ headers: [HPACKBlockDecoder.Field]) -> Result<Int?, Problem> {
        // Read in place: a loop over the array copies each field (its name and value retained).
        headers.withUnsafeBufferPointer(requestProblem(in:))
    }

    private static func requestProblem(in headers: UnsafeBufferPointer<HPACKBlockDecoder.Field>) -> Result<Int?, Problem> {
        var pseudo: PseudoFields = []
        var regularStarted = false
        var isConnect = false
        var contentLength: Int?
        for index in headers.indices {
            // Names and values are read where the fields keep them, not bound to copies.
            if !headers[index].isWellFormed, let problem = fieldProblem(name: headers[index].name, value: headers[index].value) {
                return .failure(Problem(reason: problem))
            }
            let name = FieldName(headers[index].name)
            switch name {
            case .pseudo, .otherPseudo:
                if regularStarted { return .failure(Problem(reason: "the pseudo-header \(headers[index].name) after a regular field")) }
                guard case .pseudo(let field) = name else {
                    return .failure(Problem(reason: "\(headers[index].name) is not a request pseudo-header"))
                }
                if pseudo.contains(field) { return .failure(Problem(reason: "\(headers[index].name) twice")) }
                pseudo.insert(field)
                if field == .method { isConnect = headers[index].value == "CONNECT" }
                if field == .path, headers[index].value.isEmpty { return .failure(Problem(reason: "an empty :path")) }
                continue
            case .connectionSpecific:
                return .failure(Problem(reason: "the connection-specific field \(headers[index].name)"))
            case .te where headers[index].value != "trailers":
                return .failure(Problem(reason: "te: \(headers[index].value) (only \"trailers\" is allowed)"))
            case .contentLength:
                let value = headers[index].value
                guard let length = decimal(value) else { return .failure(Problem(reason: "content-length: \(value) is not a length")) }
                if let contentLength, contentLength != length {
                    return .failure(Problem(reason: "two content-length values, \(contentLength) and \(length)"))
                }
                contentLength = length
            case .te, .other:
                break
            }
            regularStarted = true
        }
        let (mandatory, allowed): (PseudoFields, PseudoFields) = isConnect
            ? ([.method, .authority], [.method, .authority])
            : ([.method, .scheme, .path], [.method, .scheme, .path, .authority])
        if !pseudo.isSubset(of: allowed) { return .failure(Problem(reason: "a CONNECT request with :scheme or :path")) }
        if !mandatory.isSubset(of: pseudo) {
            let missing = mandatory.subtracting(pseudo).names.joined(separator: ", ")
            return .failure(Problem(reason: "no \(missing)"))
        }
        return .success(contentLength)
    }

    /// What makes a trailers block malformed, or `nil`.
    static func trailersProblem(_ headers: [HPACKBlockDecoder.Field]) -> String? {
        for field in headers {
            if !field.isWellFormed, let problem = fieldProblem(name: field.name, value: field.value) { return problem }
            if field.name.utf8.first == UInt8(ascii: ":") { return "the pseudo-header \(field.name) in trailers" }
        }
        return nil
    }

    /// A name that is not a lowercase token (RFC 9110 §5.6.2, RFC 9113 §8.2.1), or a value with
    /// NUL, CR or LF (RFC 9113 §8.2.1).
    private static func fieldProblem(name: String, value: String) -> String? {
        var bytes = name.utf8[...]
        if bytes.first == UInt8(ascii: ":") { bytes = bytes.dropFirst() }
        if bytes.isEmpty { return "an empty field name" }
        for byte in bytes where !HPACKBlockDecoder.isTokenCharacter(byte) {
            return byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z")
                ? "the field name \(name) has uppercase letters" : "the field name \(name) has a character a name may not have"
        }
        if value.utf8.contains(where: { $0 == 0 || $0 == 0x0A || $0 == 0x0D }) { return "the value of \(name) has NUL, CR or LF" }
        return nil
    }

    /// What a request's check makes of a field's name, told by its bytes in place: each of a
    /// request's fields was compared with every name below as strings.
    private enum FieldName {
        /// A request pseudo-header (RFC 9113 §8.3.1).
        case pseudo(PseudoFields)
        /// Any other name starting with `:`.
        case otherPseudo
        /// `connection`, `proxy-connection`, `keep-alive`, `transfer-encoding`, `upgrade`
        /// (RFC 9113 §8.2.2).
        case connectionSpecific
        case te
        case contentLength
        case other

        private static let spellings: [(StaticString, FieldName)] = [
            (":method", .pseudo(.method)), (":scheme", .pseudo(.scheme)), (":path", .pseudo(.path)), (":authority", .pseudo(.authority)),
            ("connection", .connectionSpecific), ("proxy-connection", .connectionSpecific), ("keep-alive", .connectionSpecific),
            ("transfer-encoding", .connectionSpecific), ("upgrade", .connectionSpecific), ("te", .te), ("content-length", .contentLength),
        ]

        init(_ name: String) {
            self = name.utf8.withContiguousStorageIfAvailable(Self.init(utf8:)) ?? Array(name.utf8).withUnsafeBufferPointer(Self.init(utf8:))
        }

        init(utf8 bytes: UnsafeBufferPointer<UInt8>) {
            for (spelling, name) in Self.spellings where spelling.utf8CodeUnitCount == bytes.count
                && HPACKBlockDecoder.equal(UnsafeRawBufferPointer(start: spelling.utf8Start, count: bytes.count), UnsafeRawBufferPointer(bytes)) {
                self = name
                return
            }
            self = bytes.first == UInt8(ascii: ":") ? .otherPseudo : .other
        }
    }

    /// Digits only, at most 18 of them (RFC 9110 §8.6).
    private static func decimal(_ text: String) -> Int? {
        guard !text.isEmpty, text.utf8.count <= 18 else { return nil }
        var value = 0
        for byte in text.utf8 {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return value
    }

    private struct PseudoFields: OptionSet {
        var rawValue: UInt8
        static let method = PseudoFields(rawValue: 1)
        static let scheme = PseudoFields(rawValue: 2)
        static let path = PseudoFields(rawValue: 4)
        static let authority = PseudoFields(rawValue: 8)

        init(rawValue: UInt8) { self.rawValue = rawValue }

        var names: [String] {
            [(PseudoFields.method, ":method"), (.scheme, ":scheme"), (.path, ":path"), (.authority, ":authority")]
                .filter { contains($0.0) }.map(\.1)
        }
    }
}
