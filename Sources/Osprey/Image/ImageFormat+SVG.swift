extension ImageFormat {
    /// Whether `b` (the first bytes of a file) is an SVG document: after an optional UTF-8 byte
    /// order mark, whitespace, an XML declaration or processing instructions, comments and a
    /// doctype (with an internal subset), the first element is `<svg` (or a prefixed `<…:svg`).
    /// Only a document whose first element is reached within `b` is recognised; an HTML page
    /// with an inline SVG is not one.
    static func sniffSVG(_ b: UnsafeRawBufferPointer) -> Bool {
        var index = 0
        if b.count >= 3, b[0] == 0xEF, b[1] == 0xBB, b[2] == 0xBF { index = 3 }
        /// Whether the bytes at `at` spell `text`.
        func matches(_ text: StaticString, at: Int) -> Bool {
            let count = text.utf8CodeUnitCount
            guard at + count <= b.count else { return false }
            return (0..<count).allSatisfy { b[at + $0] == text.utf8Start[$0] }
        }
        /// The index just past the first `text` at or after `from`, or `nil`.
        func skip(past text: StaticString, from: Int) -> Int? {
            var at = from
            while at + text.utf8CodeUnitCount <= b.count {
                if matches(text, at: at) { return at + text.utf8CodeUnitCount }
                at += 1
            }
            return nil
        }
        while index < b.count {
            let byte = b[index]
            if byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D {
                index += 1
                continue
            }
            guard byte == UInt8(ascii: "<"), index + 1 < b.count else { return false }
            let next: Int?
            if matches("<?", at: index) {
                next = skip(past: "?>", from: index + 2)
            } else if matches("<!--", at: index) {
                next = skip(past: "-->", from: index + 4)
            } else if matches("<!", at: index) {
                // A doctype: its internal subset (entity declarations) may hold '>' before the end.
                guard let close = skip(past: ">", from: index + 2) else { return false }
                let open = skip(past: "[", from: index + 2)
                if let open, open < close {
                    next = skip(past: "]", from: open).flatMap { skip(past: ">", from: $0) }
                } else {
                    next = close
                }
            } else {
                // The first element: `svg`, or `prefix:svg`, followed by a delimiter.
                var name = index + 1
                while name < b.count, b[name] != UInt8(ascii: ":"), b[name] != 0x20, b[name] != UInt8(ascii: ">"), name - index < 32 {
                    name += 1
                }
                let start = name < b.count && b[name] == UInt8(ascii: ":") ? name + 1 : index + 1
                guard matches("svg", at: start), start + 3 < b.count else { return false }
                let after = b[start + 3]
                return after == 0x20 || after == 0x09 || after == 0x0A || after == 0x0D || after == UInt8(ascii: ">")
                    || after == UInt8(ascii: "/")
            }
            guard let next else { return false }
            index = next
        }
        return false
    }
}
