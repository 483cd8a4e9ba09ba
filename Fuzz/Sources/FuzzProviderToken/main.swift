import HeraldAuthTestSupport

// Any bytes through ProviderTokenChecks.check (the JWT parser and verifier, and tampering with a
// signed token); a violation crashes so libFuzzer saves the input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzProviderToken(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let violations = ProviderTokenChecks.check(Array(UnsafeBufferPointer(start: start, count: count)))
    precondition(violations.isEmpty, "\(violations)")
    return 0
}
