import Osprey

/// One input: a processing spec as the CLI's `--process` and the server take it. A thrown
/// ``OspreyError`` is a correct answer. Checked invariant, besides not crashing: the canonical form
/// of a spec that parses (``ProcessingSpec/description``) parses back to the same canonical form.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzProcessingSpec(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    guard let spec = try? ProcessingSpec(parsing: text) else { return 0 }
    let canonical = spec.description
    guard let again = try? ProcessingSpec(parsing: canonical) else {
        preconditionFailure("canonical spec \"\(canonical)\" of \"\(text)\" does not parse")
    }
    precondition(again.description == canonical, "canonical spec \"\(canonical)\" parses to \"\(again.description)\"")
    return 0
}
