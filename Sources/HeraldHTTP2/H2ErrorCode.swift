/// An HTTP/2 error code, as carried by RST_STREAM and GOAWAY (RFC 9113 §7).
package struct H2ErrorCode: Sendable, Hashable, CustomStringConvertible {
    /// The code on the wire.
    package var rawValue: UInt32

    /// A code from its wire value.
    package init(rawValue: UInt32) {
        self.rawValue = rawValue
    }

    /// `NO_ERROR` (0).
    package static let noError = H2ErrorCode(rawValue: 0x0)
    /// `PROTOCOL_ERROR` (1).
    package static let protocolError = H2ErrorCode(rawValue: 0x1)
    /// `INTERNAL_ERROR` (2).
    package static let internalError = H2ErrorCode(rawValue: 0x2)
    /// `FLOW_CONTROL_ERROR` (3).
    package static let flowControlError = H2ErrorCode(rawValue: 0x3)
    /// `STREAM_CLOSED` (5).
    package static let streamClosed = H2ErrorCode(rawValue: 0x5)
    /// `FRAME_SIZE_ERROR` (6).
    package static let frameSizeError = H2ErrorCode(rawValue: 0x6)
    /// `REFUSED_STREAM` (7): the server did not process the stream.
    package static let refusedStream = H2ErrorCode(rawValue: 0x7)
    /// `CANCEL` (8).
    package static let cancel = H2ErrorCode(rawValue: 0x8)
    /// `COMPRESSION_ERROR` (9).
    package static let compressionError = H2ErrorCode(rawValue: 0x9)
    /// `ENHANCE_YOUR_CALM` (11).
    package static let enhanceYourCalm = H2ErrorCode(rawValue: 0xB)

    private static let names = [
        "NO_ERROR", "PROTOCOL_ERROR", "INTERNAL_ERROR", "FLOW_CONTROL_ERROR", "SETTINGS_TIMEOUT", "STREAM_CLOSED",
        "FRAME_SIZE_ERROR", "REFUSED_STREAM", "CANCEL", "COMPRESSION_ERROR", "CONNECT_ERROR", "ENHANCE_YOUR_CALM",
        "INADEQUATE_SECURITY", "HTTP_1_1_REQUIRED",
    ]

    /// The name from RFC 9113 (`REFUSED_STREAM`), or the number for a code it does not define.
    package var description: String {
        rawValue < Self.names.count ? Self.names[Int(rawValue)] : "error code \(rawValue)"
    }
}
