/// Lowercase hexadecimal text of bytes: disk entry names, the server's ETags, the leading bytes
/// an error quotes.
package enum Hex {
    /// `bytes` as lowercase hex, two digits per byte. (`String(format: "%02x")` per byte went
    /// through Foundation's formatter: more than the SHA-256 it printed.)
    package static func lowercase(_ bytes: UnsafeRawBufferPointer) -> String {
        String(unsafeUninitializedCapacity: 2 * bytes.count) { hex in
            for (i, byte) in bytes.enumerated() {
                hex[2 * i] = digits[Int(byte >> 4)]
                hex[2 * i + 1] = digits[Int(byte & 0x0F)]
            }
            return 2 * bytes.count
        }
    }

    private static let digits = Array("0123456789abcdef".utf8)
}
