/// Binary property lists (`bplist00`), the format Xcode compiles `.strings` tables to by default
/// ("Strings File Output Encoding: binary", CoreFoundation's old-style property list parser).
///
/// Layout: an 8-byte header, objects, an offset table, and a 32-byte trailer giving the offset
/// and reference sizes, the object count, the top object and the offset table's position. Every
/// offset and length is checked against the file, containers that contain themselves are
/// rejected, and shared objects are parsed once.
struct BinaryPropertyListParser {
    private let bytes: [UInt8]
    private let path: String
    private var offsetSize = 0
    private var referenceSize = 0
    private var objectCount = 0
    private var offsetTableStart = 0
    /// Parsed objects by reference, so shared objects are read once.
    private var cache: [PropertyListValue?] = []
    /// The containers being read, to reject one that contains itself.
    private var visiting: [Bool] = []
    private var work = 0

    /// An upper bound on objects visited, so a small file of shared references cannot make the
    /// reader do unbounded work.
    static let maximumWork = 1 << 20

    static let magic: [UInt8] = Array("bplist0".utf8)

    static func looksLikeBinary(_ bytes: [UInt8]) -> Bool {
        bytes.count >= 8 && bytes.starts(with: magic)
    }

    init(bytes: [UInt8], path: String) {
        self.bytes = bytes
        self.path = path
    }

    mutating func parse() throws(LocalizationFileError) -> PropertyListValue {
        guard bytes.count >= 8 + 32 + 1 else {
            throw error("the binary property list is \(bytes.count) bytes, too short for a header and trailer")
        }
        guard bytes[7] == UInt8(ascii: "0") else {
            throw error("unsupported binary property list version 'bplist0\(Character(Unicode.Scalar(bytes[7])))'; expected bplist00")
        }
        let trailer = bytes.count - 32
        offsetSize = Int(bytes[trailer + 6])
        referenceSize = Int(bytes[trailer + 7])
        guard (1...8).contains(offsetSize), (1...8).contains(referenceSize) else {
            throw error("the trailer gives offset size \(offsetSize) and reference size \(referenceSize); both must be 1 to 8")
        }
        let count = readUInt(at: trailer + 8, size: 8)
        let top = readUInt(at: trailer + 16, size: 8)
        let tableOffset = readUInt(at: trailer + 24, size: 8)
        guard count > 0, count <= UInt64(bytes.count), top < count else {
            throw error("the trailer gives \(count) objects with top object \(top), which this file cannot hold")
        }
        objectCount = Int(count)
        guard tableOffset >= 8, tableOffset <= UInt64(trailer),
              UInt64(trailer) - tableOffset >= UInt64(objectCount) * UInt64(offsetSize) else {
            throw error("the offset table at \(tableOffset) does not fit before the trailer")
        }
        offsetTableStart = Int(tableOffset)
        cache = Array(repeating: nil, count: objectCount)
        visiting = Array(repeating: false, count: objectCount)
        return try object(Int(top), depth: 0)
    }

    // MARK: Objects

    private mutating func object(_ reference: Int, depth: Int) throws(LocalizationFileError) -> PropertyListValue {
        work += 1
        guard work <= Self.maximumWork else { throw error("the property list refers to more than \(Self.maximumWork) objects") }
        guard reference >= 0, reference < objectCount else { throw error("object reference \(reference) is past the \(objectCount) objects") }
        if let cached = cache[reference] { return cached }
        guard depth <= OldStylePropertyListParser.maximumDepth else {
            throw error("containers are nested more than \(OldStylePropertyListParser.maximumDepth) deep")
        }
        guard !visiting[reference] else {
            throw error("object \(reference) contains itself")
        }
        visiting[reference] = true
        defer { visiting[reference] = false }
        let offset64 = readUInt(at: offsetTableStart + reference * offsetSize, size: offsetSize)
        guard offset64 >= 8, offset64 < UInt64(offsetTableStart) else {
            throw error("object \(reference) starts at \(offset64), outside the object area")
        }
        let offset = Int(offset64)
        let marker = bytes[offset]
        let kind = marker >> 4
        let info = Int(marker & 0x0F)
        let value: PropertyListValue
        switch kind {
        case 0x0:
            switch info {
            case 0x8: value = .boolean(false)
            case 0x9: value = .boolean(true)
            default: throw error("object \(reference) has marker 0x\(String(marker, radix: 16)), which Herald does not read (null or fill)")
            }
        case 0x1:
            guard info <= 4 else { throw error("integer object \(reference) has size 2^\(info) bytes") }
            let size = 1 << info
            try need(offset + 1, size, for: reference)
            if size == 16 {
                value = .integer(Int64(bitPattern: readUInt(at: offset + 9, size: 8)))
            } else if size == 8 {
                value = .integer(Int64(bitPattern: readUInt(at: offset + 1, size: 8)))
            } else {
                value = .integer(Int64(readUInt(at: offset + 1, size: size)))
            }
        case 0x2:
            guard info == 2 || info == 3 else { throw error("real object \(reference) has size 2^\(info) bytes; expected 4 or 8") }
            let size = 1 << info
            try need(offset + 1, size, for: reference)
            let raw = readUInt(at: offset + 1, size: size)
            value = .real(size == 4 ? Double(Float(bitPattern: UInt32(raw))) : Double(bitPattern: raw))
        case 0x3:
            guard info == 3 else { throw error("date object \(reference) has marker 0x\(String(marker, radix: 16)); expected 0x33") }
            try need(offset + 1, 8, for: reference)
            value = .date(Double(bitPattern: readUInt(at: offset + 1, size: 8)))
        case 0x4:
            let (start, length) = try lengthAndStart(info: info, at: offset, reference: reference)
            try need(start, length, for: reference)
            value = .data(Array(bytes[start..<(start + length)]))
        case 0x5:
            let (start, length) = try lengthAndStart(info: info, at: offset, reference: reference)
            try need(start, length, for: reference)
            // ASCII strings; bytes above 0x7F are read as Latin-1, as CoreFoundation does.
            let slice = bytes[start..<(start + length)]
            if slice.allSatisfy({ $0 < 0x80 }) {
                value = .string(String(decoding: slice, as: UTF8.self))
            } else {
                value = .string(String(String.UnicodeScalarView(slice.map { Unicode.Scalar($0) })))
            }
        case 0x6:
            let (start, length) = try lengthAndStart(info: info, at: offset, reference: reference)
            let (byteCount, overflow) = length.multipliedReportingOverflow(by: 2)
            guard !overflow else { throw error("string object \(reference) is too long") }
            try need(start, byteCount, for: reference)
            var units: [UInt16] = []
            units.reserveCapacity(length)
            for position in 0..<length {
                units.append(UInt16(bytes[start + 2 * position]) << 8 | UInt16(bytes[start + 2 * position + 1]))
            }
            var replaced = false
            value = .string(String(utf16Units: units, replacedLoneSurrogate: &replaced))
        case 0xA, 0xC:
            let (start, length) = try lengthAndStart(info: info, at: offset, reference: reference)
            let (byteCount, overflow) = length.multipliedReportingOverflow(by: referenceSize)
            guard !overflow else { throw error("array object \(reference) is too long") }
            try need(start, byteCount, for: reference)
            var elements: [PropertyListValue] = []
            elements.reserveCapacity(min(length, 4096))
            for position in 0..<length {
                let child = readReference(at: start + position * referenceSize)
                elements.append(try object(child, depth: depth + 1))
            }
            value = .array(elements)
        case 0xD:
            let (start, length) = try lengthAndStart(info: info, at: offset, reference: reference)
            let (byteCount, overflow) = length.multipliedReportingOverflow(by: 2 * referenceSize)
            guard !overflow else { throw error("dictionary object \(reference) is too long") }
            try need(start, byteCount, for: reference)
            var dictionary = PropertyListDictionary()
            for position in 0..<length {
                let keyReference = readReference(at: start + position * referenceSize)
                let valueReference = readReference(at: start + (length + position) * referenceSize)
                guard case .string(let key) = try object(keyReference, depth: depth + 1) else {
                    throw error("dictionary object \(reference) has a key that is not a string")
                }
                dictionary.set(try object(valueReference, depth: depth + 1), forKey: key)
            }
            value = .dictionary(dictionary)
        default:
            throw error("object \(reference) has unknown marker 0x\(String(marker, radix: 16))")
        }
        cache[reference] = value
        return value
    }

    /// The start of the payload and its length: the low nibble, or an integer object after the
    /// marker when the nibble is 0xF.
    private func lengthAndStart(info: Int, at offset: Int, reference: Int) throws(LocalizationFileError) -> (Int, Int) {
        guard info == 0xF else { return (offset + 1, info) }
        try need(offset + 1, 1, for: reference)
        let marker = bytes[offset + 1]
        guard marker >> 4 == 0x1, marker & 0x0F <= 3 else {
            throw error("object \(reference) has a malformed length")
        }
        let size = 1 << Int(marker & 0x0F)
        try need(offset + 2, size, for: reference)
        let length = readUInt(at: offset + 2, size: size)
        guard length <= UInt64(bytes.count) else {
            throw error("object \(reference) claims \(length) elements, more than the file's \(bytes.count) bytes")
        }
        return (offset + 2 + size, Int(length))
    }

    private func need(_ start: Int, _ count: Int, for reference: Int) throws(LocalizationFileError) {
        let (end, overflow) = start.addingReportingOverflow(count)
        guard !overflow, start >= 0, end <= offsetTableStart else {
            throw error("object \(reference) runs past the object area")
        }
    }

    /// An object reference; values past `Int.max` become `Int.max`, which the bounds check
    /// rejects.
    private func readReference(at offset: Int) -> Int {
        Int(exactly: readUInt(at: offset, size: referenceSize)) ?? .max
    }

    private func readUInt(at offset: Int, size: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in offset..<(offset + size) { value = value << 8 | UInt64(bytes[index]) }
        return value
    }

    private func error(_ message: String) -> LocalizationFileError {
        LocalizationFileError(path: path, location: nil, message: message)
    }
}
