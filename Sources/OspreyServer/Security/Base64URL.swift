import Foundation

/// URL-safe base64 (RFC 4648 §5), as both grammars use it.
enum Base64URL {
    /// Encodes `bytes` with `-` and `_`; with `padding` keeps the trailing `=` (thumbor), without
    /// drops it (imgproxy).
    static func encode<Bytes: Sequence>(_ bytes: Bytes, padding: Bool) -> String where Bytes.Element == UInt8 {
        var text = Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
        if !padding { while text.hasSuffix("=") { text.removeLast() } }
        return text
    }

    /// Decodes URL-safe (or standard) base64 with or without padding; `nil` when malformed.
    static func decode(_ text: some StringProtocol) -> Data? {
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while standard.hasSuffix("=") { standard.removeLast() }
        switch standard.count % 4 {
        case 2: standard += "=="
        case 3: standard += "="
        case 1: return nil
        default: break
        }
        return Data(base64Encoded: standard)
    }
}

/// Compares two byte strings in time that depends only on their lengths.
func constantTimeEqual(_ lhs: some Collection<UInt8>, _ rhs: some Collection<UInt8>) -> Bool {
    guard lhs.count == rhs.count else { return false }
    var difference: UInt8 = 0
    for (a, b) in zip(lhs, rhs) { difference |= a ^ b }
    return difference == 0
}
