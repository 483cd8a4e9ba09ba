import HeraldTestSupport

// Any bytes through the JSON parser and writer; see PropertyChecks.json for the contract.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSON(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let violations = PropertyChecks.json(Array(UnsafeBufferPointer(start: start, count: count)))
    precondition(violations.isEmpty, "\(violations)")
    return 0
}
