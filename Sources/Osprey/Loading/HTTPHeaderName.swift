/// HTTP header names compare ASCII case-insensitively (RFC 9110 §5.1). This does it on the UTF-8
/// bytes, without Foundation's locale-aware `caseInsensitiveCompare` (a tenth of the CPU of a
/// download with an instant loader).
enum HTTPHeaderName {
    /// Whether `a` and `b` name the same header.
    static func equal(_ a: String, _ b: String) -> Bool {
        var a = a, b = b
        return a.withUTF8 { x in
            b.withUTF8 { y in
                guard x.count == y.count else { return false }
                for i in 0..<x.count where x[i] != y[i] {
                    guard lower(x[i]) == lower(y[i]) else { return false }
                }
                return true
            }
        }
    }

    /// The value of the field `name` in `headers` (case-insensitive), or `nil`: the exact spelling
    /// first (a hash lookup), then any other case.
    static func value(of name: String, in headers: [String: String]) -> String? {
        if let value = headers[name] { return value }
        return headers.first { equal($0.key, name) }?.value
    }

    /// `value` without leading and trailing spaces and tabs (optional whitespace, RFC 9110 §5.6.3).
    static func trimmed(_ value: String) -> Substring {
        // On the UTF-8 bytes: iterating Characters runs grapheme breaking on every header value.
        let isSpace: (UInt8) -> Bool = { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
        let utf8 = value.utf8
        guard let start = utf8.firstIndex(where: { !isSpace($0) }) else { return "" }
        let end = utf8.lastIndex(where: { !isSpace($0) })!
        return Substring(utf8[start...end])
    }

    @inline(__always)
    private static func lower(_ byte: UInt8) -> UInt8 {
        byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
    }
}
