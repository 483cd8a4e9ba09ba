import HeraldTestSupport

// Any bytes through PropertyChecks.preview (see there for the contract); a violation crashes so
// libFuzzer saves the input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPreview(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let violations = PropertyChecks.preview(Array(UnsafeBufferPointer(start: start, count: count)))
    precondition(violations.isEmpty, "\(violations)")
    return 0
}
