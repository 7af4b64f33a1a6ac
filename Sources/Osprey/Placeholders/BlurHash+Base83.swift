extension BlurHash {
    /// BlurHash's base-83 digits: values written big-endian, most significant digit first, in an
    /// alphabet safe in JSON, HTML and shells.
    enum Base83 {
        static let alphabet: [UInt8] = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz#$%*+,-.:;=?@[]^_{|}~".utf8)

        /// Each ASCII byte's digit value, or -1.
        private static let values: [Int] = {
            var table = [Int](repeating: -1, count: 256)
            for (index, character) in alphabet.enumerated() { table[Int(character)] = index }
            return table
        }()

        /// The digit value of `character`, or `nil` when it is not in the alphabet.
        static func value(of character: UInt8) -> Int? {
            let value = values[Int(character)]
            return value < 0 ? nil : value
        }

        /// The value of `digits` (each checked to be in the alphabet; others count as 0).
        static func decode(_ digits: ArraySlice<UInt8>) -> Int {
            digits.reduce(0) { $0 * 83 + max(0, values[Int($1)]) }
        }

        /// `value` in exactly `length` digits (higher digits dropped, as the references do).
        static func encode(_ value: Int, length: Int) -> String {
            var divisor = 1
            for _ in 1..<max(1, length) { divisor *= 83 }
            var bytes: [UInt8] = []
            for _ in 0..<length {
                bytes.append(alphabet[(value / divisor) % 83])
                divisor /= 83
            }
            return String(decoding: bytes, as: UTF8.self)
        }
    }
}
